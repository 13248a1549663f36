import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { active, axe, focusKept } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The Workflows page in headless Chromium against the real server, agent worker and fake
 * provider: the list with an invalid file and its error; the inputs form (a missing input is the
 * server's 400, Escape closes it); a three-step fan-in run whose middle step waits for its
 * approval, so the page is seen at each stage as the `workflows` events arrive; a failed run with its step and
 * reason; the link to the run's session, which holds every step.
 */

const browserMissing = browserUnavailable();

const PROGRESS = `description: A fact, a fetch that asks first, and both combined.
inputs:
  topic:
    description: What the fact is about
    required: true
  url:
    description: An address the second step fetches (it asks first)
    required: true
  tone:
    default: dry
steps:
  - id: fact
    prompt: Give one fact about {{inputs.topic}}.
  - id: hold
    run: curl -s -o /dev/null -w gate-open {{inputs.url}}
  - id: combine
    needs: [fact, hold]
    prompt: "In a {{inputs.tone}} tone, combine: {{steps.fact.output}} / {{steps.hold.output}}"
`;

const BROKEN = `description: needs a step that does not exist
steps:
  - id: one
    run: echo one
  - id: two
    needs: [one, nowhere]
    run: echo two
`;

const FAILS =
  'description: fails in the middle\nsteps:\n  - id: ok\n    tool: current_time\n    args: { time_zone: UTC }\n  - id: bad\n    needs: [ok]\n    tool: skill\n    args: { name: no-such-skill }\n';

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  const card = (name: string) => p.page.locator(`[data-testid="workflow"][data-name="${name}"]`);
  const step = (wf: string, id: string) =>
    card(wf).locator(`[data-testid="workflow-step"][data-step="${id}"]`);
  const statusOf = (wf: string, id: string) => step(wf, id).getAttribute('data-status');
  const dialog = () => p.page.getByTestId('workflow-run-dialog');

  test.before(async () => {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    const dir = join(rig.server.home, 'workflows');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'progress.yml'), PROGRESS);
    writeFileSync(join(dir, 'broken.yml'), BROKEN);
    writeFileSync(join(dir, 'fails.yml'), FAILS);
    // The fetch step reaches the fake on loopback, which the sandbox's proxy opens only when named.
    writeFileSync(
      join(rig.server.home, 'permissions.yml'),
      `sandbox:\n  local_hosts: ["127.0.0.1:${rig.fake.port}"]\n`,
    );
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/chat`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  test('the nav leads to Workflows: built-ins and yours with their steps; an invalid file shows its line and field, with no Run', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
    await card('progress').waitFor();
    for (const name of ['repo-digest', 'page-brief']) {
      assert.match(await card(name).innerText(), /built-in/);
      assert.is(
        await card(name)
          .getByRole('button', { name: `Run… ${name}` })
          .count(),
        1,
      );
    }
    assert.equal(
      await card('progress')
        .locator('[data-testid="workflow-step"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-step'))),
      ['fact', 'hold', 'combine'],
    );
    assert.match(await step('progress', 'combine').innerText(), /agent prompt · after fact, hold/);
    assert.match(await step('progress', 'hold').innerText(), /shell command/);
    assert.is(await statusOf('progress', 'fact'), null, 'no run yet: no state');
    const broken = card('broken');
    assert.match(await broken.innerText(), /invalid/);
    assert.is(
      await broken.getByTestId('workflow-why').innerText(),
      'line 6, steps.1.needs.1: needs names "nowhere", which is not a step of this workflow',
    );
    assert.is(await broken.getByRole('button').count(), 0, 'an invalid workflow cannot be run');
  });

  test('Run… opens the inputs form: defaults filled in, a missing input refused by the server naming it, Escape closes it', async () => {
    const { page } = p;
    await card('progress').getByRole('button', { name: 'Run… progress' }).click();
    await dialog().waitFor();
    assert.match(await active(page), /^INPUT/, 'focus goes to the first input');
    assert.is(await page.evaluate('document.activeElement.id'), 'wf-in-topic');
    assert.is(await dialog().getByLabel('tone').inputValue(), 'dry');
    assert.is(
      await dialog()
        .getByRole('textbox', { name: 'topic (required)' })
        .getAttribute('aria-describedby'),
      'wf-in-topic-hint',
    );
    await dialog().getByRole('button', { name: 'Run', exact: true }).click();
    const alert = dialog().getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /needs the input "topic" \(What the fact is about\)/);
    assert.equal(await axe(page, 'workflow run dialog'), []);
    await page.keyboard.press('Escape');
    await dialog().waitFor({ state: 'detached' });
    assert.match(
      await focusKept(page, 'Escape on the dialog'),
      /workflow-run.*Run… progress/,
      'focus goes back to the Run button',
    );
    const listed = (await api(rig.port, 'GET', '/api/workflows')).body.items.find(
      (w: any) => w.name === 'progress',
    );
    assert.is(listed.last_run, null, 'nothing ran');
  });

  test('a run with inputs: the steps progress live to completed, and the link opens the session holding every step', async () => {
    const { page } = p;
    rig.fake.enqueue(textReply('Otters hold hands.'), textReply('COMBINED: otters'));
    await card('progress').getByRole('button', { name: 'Run… progress' }).click();
    await dialog().getByRole('textbox', { name: 'topic (required)' }).fill('otters');
    await dialog().getByRole('textbox', { name: 'url (required)' }).fill(`${rig.fake.url}/gate`);
    await dialog().getByRole('button', { name: 'Run', exact: true }).click();
    await dialog().waitFor({ state: 'detached' });
    assert.match(await focusKept(page, 'Run'), /Run… progress/);

    // The fetch waits for its approval (curl always asks): the page shows the first step done,
    // the second running and the third not started.
    await waitFor(
      async () => (await statusOf('progress', 'hold')) === 'running',
      20_000,
      'the hold step to be running',
    );
    const sessionId = (
      (await card('progress').getByTestId('workflow-session').getAttribute('href')) ?? ''
    ).replace('#/chat/', '');
    const approval = await waitFor(
      async () =>
        (await api(rig.port, 'GET', `/api/sessions/${sessionId}/approvals`)).body.items?.[0],
      20_000,
      'the fetch to ask',
    );
    assert.is(approval.tool, 'terminal');
    assert.is(await statusOf('progress', 'fact'), 'completed');
    assert.is(await step('progress', 'fact').locator('pre').innerText(), 'Otters hold hands.');
    assert.is(await statusOf('progress', 'combine'), 'pending');
    assert.is(
      await card('progress').getByTestId('workflow-status').innerText(),
      'Running step hold…',
    );
    assert.match(
      await card('progress').getByTestId('workflow-session').innerText(),
      /Follow the run's session/,
    );

    const ok = await api(
      rig.port,
      'POST',
      `/api/sessions/${sessionId}/approvals/${approval.approval_id}`,
      { decision: 'allow_once' },
      { key: rig.server.key() },
    );
    assert.is(ok.status, 200, JSON.stringify(ok.body));
    await waitFor(
      async () => (await statusOf('progress', 'combine')) === 'completed',
      20_000,
      'the last step to complete',
    );
    assert.is(await statusOf('progress', 'hold'), 'completed');
    assert.is(await step('progress', 'hold').locator('pre').innerText(), 'gate-open');
    assert.is(await step('progress', 'combine').locator('pre').innerText(), 'COMBINED: otters');
    await card('progress')
      .getByTestId('workflow-status')
      .filter({ hasText: 'The run completed.' })
      .waitFor();
    assert.is(
      (await api(rig.port, 'GET', '/api/workflows')).body.items.find(
        (w: any) => w.name === 'progress',
      ).last_run.status,
      'completed',
    );

    await card('progress').getByRole('link', { name: "Open the run's session (progress)" }).click();
    await waitFor(() => page.url().endsWith(`#/chat/${sessionId}`), 10_000, 'the session to open');
    await page
      .getByTestId('assistant-message')
      .filter({ hasText: 'Workflow "progress" completed.' })
      .waitFor();
    const transcript = await page.getByTestId('transcript').innerText();
    assert.match(transcript, /Give one fact about otters\./, 'the first step is in the session');
    assert.match(transcript, /Otters hold hands\./);
    const shell = page.locator('[data-testid="tool-card"][data-tool="terminal"]');
    assert.is(
      await shell.getAttribute('data-status'),
      'done',
      'the shell step is in the session, as a tool card',
    );
    // A finished step's card is folded when the session opens; a person opens it to read the output.
    await shell.locator('summary.tool-head').click();
    assert.match(await shell.getByTestId('tool-output').innerText(), /^gate-open/);
    assert.match(
      transcript,
      /In a dry tone, combine: Otters hold hands\. \/ gate-open/,
      'the fan-in step got both outputs',
    );
    assert.match(transcript, /COMBINED: otters/);
  });

  test('a failing run shows the step and the reason; a workflow without inputs says so', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Workflows', exact: true }).click();
    await card('fails').getByRole('button', { name: 'Run… fails' }).click();
    await dialog().getByText('This workflow takes no inputs.').waitFor();
    await dialog().getByRole('button', { name: 'Run', exact: true }).click();
    await card('fails')
      .getByTestId('workflow-status')
      .filter({ hasText: 'The run failed at step bad' })
      .waitFor();
    assert.match(
      await card('fails').getByTestId('workflow-status').innerText(),
      /the tool call failed: .*no-such-skill/,
    );
    assert.is(await statusOf('fails', 'ok'), 'completed');
    assert.is(await statusOf('fails', 'bad'), 'failed');
  });

  test('a run started elsewhere shows live; after a reload the last run keeps its steps', async () => {
    const { page } = p;
    const started = await api(rig.port, 'POST', '/api/workflows/fails/run', { inputs: {} });
    assert.is(started.status, 202);
    await waitFor(
      async () =>
        (await card('fails').getByTestId('workflow-session').getAttribute('href')) ===
        `#/chat/${started.body.session_id}`,
      20_000,
      'the page to follow the new run',
    );
    await card('fails')
      .getByTestId('workflow-status')
      .filter({ hasText: 'The run failed at step bad' })
      .waitFor();
    await page.reload();
    await card('progress')
      .getByTestId('workflow-status')
      .filter({ hasText: 'The run completed.' })
      .waitFor();
    await waitFor(
      async () => (await statusOf('progress', 'combine')) === 'completed',
      10_000,
      'the steps of the last run',
    );
    assert.is(await statusOf('progress', 'fact'), 'completed');
    assert.is(await step('progress', 'combine').locator('pre').innerText(), 'COMBINED: otters');
  });

  test('axe-core: no serious or critical violation on the Workflows page, light and dark, desktop and phone', async () => {
    const failures: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const viewport of [
        { width: 1200, height: 800 },
        { width: 390, height: 780 },
      ]) {
        const other = await newPage(browser, { viewport, colorScheme });
        try {
          await other.page.goto(`${rig.server.base}/#/workflows`);
          await other.page
            .locator('[data-testid="workflow"][data-name="progress"] [data-status="completed"]')
            .first()
            .waitFor();
          failures.push(
            ...(await axe(other.page, `workflows (${colorScheme}, ${viewport.width}px)`)),
          );
          await other.page.getByRole('button', { name: 'Run… progress' }).click();
          await other.page.getByTestId('workflow-run-dialog').waitFor();
          failures.push(
            ...(await axe(other.page, `workflow run dialog (${colorScheme}, ${viewport.width}px)`)),
          );
          assert.equal(other.errors, []);
        } finally {
          await other.close();
        }
      }
    }
    assert.equal(failures, []);
    assert.equal(p.errors, []);
  });
}

test.run();
