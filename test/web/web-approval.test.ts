import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The approval dialog with the real permission engine: in an interactive session without a
 * working folder, write_file asks first. Allow once runs the call; deny refuses it (the file
 * is never written); allow for this session runs it too.
 *
 * Before the tests are registered, one turn checks that a tool really asks. When none does
 * (the permission engine not wired into the agent worker), the tests are registered as skipped
 * with that reason printed: the dialog is never tested against a faked ask.
 */

const browserMissing = browserUnavailable();
const writeCall = (path: string, content: string) => ({
  parts: [{ toolCall: { name: 'write_file', arguments: [JSON.stringify({ path, content })] } }],
});

let rig: TurnRig | undefined;
let outDir = '';
let notAsking: string | undefined;

if (!browserMissing) {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  await finishOnboarding(rig.port, 'oa');
  outDir = mkdtempSync(join(tmpdir(), 'svc-web-approval-'));
  notAsking = await probeAsk(rig, join(outDir, 'probe.txt'));
}

/** Runs one write_file turn over the API; answers why no approval was asked, or undefined when one was (then denied). */
async function probeAsk(r: TurnRig, path: string): Promise<string | undefined> {
  const tools = (await api(r.port, 'GET', '/api/tools')).body.items.map(
    (t: { name: string }) => t.name,
  ) as string[];
  if (!tools.includes('write_file'))
    return `the agent has no write_file tool (tools: ${tools.join(', ')})`;
  const id = (await api(r.port, 'POST', '/api/sessions', { permission_mode: 'interactive' })).body
    .id as string;
  const ws = await connectWs(r.port, [`session:${id}`]);
  try {
    r.fake.enqueue(writeCall(path, 'probe'), textReply('ok'));
    const started = await api(r.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
      message: 'probe',
      attachments: [],
    });
    if (started.status !== 202)
      return `the probe turn did not start: ${JSON.stringify(started.body)}`;
    const first = await ws.waitEvent(
      (e) =>
        e.type === 'approval.requested' ||
        e.type === 'turn.tool_result' ||
        e.type === 'turn.failed',
      'an approval or a tool result',
      15_000,
    );
    if (first.type === 'approval.requested') {
      await api(
        r.port,
        'POST',
        `/api/sessions/${id}/approvals/${first.data.approval_id}`,
        {
          decision: 'deny',
        },
        { key: r.server.key() },
      );
      await ws.waitEvent(
        (e) => e.type === 'turn.completed' || e.type === 'turn.failed',
        'the probe turn to end',
        15_000,
      );
      return undefined;
    }
    await ws.waitEvent(
      (e) => e.type === 'turn.completed' || e.type === 'turn.failed',
      'the probe turn to end',
      15_000,
    );
    return first.type === 'turn.failed'
      ? `the probe turn failed: ${first.data.message}`
      : `write_file ran without asking in an interactive session without a working folder (output: ${String(first.data.output).slice(0, 120)}): the permission engine is not wired into the agent worker yet`;
  } finally {
    ws.close();
    r.fake.reset();
  }
}

if (browserMissing) {
  skipFile(browserMissing);
} else if (notAsking) {
  // No tool asked: the permission engine regressed, and the dialog cannot be tested. That is a failure.
  test('a tool that needs approval asks (so the dialog can be tested)', () =>
    assert.unreachable(notAsking));
  test.after(async () => {
    await rig?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });
} else {
  let browser: Browser;
  let p: PageRig;
  let sessionId = '';

  test.before(async () => {
    browser = await launch();
    p = await newPage(browser);
    sessionId = (
      await api(rig!.port, 'POST', '/api/sessions', {
        title: 'Approvals',
        permission_mode: 'interactive',
      })
    ).body.id;
    await p.page.goto(`${rig!.server.base}/#/chat/${sessionId}`);
    await p.page.getByTestId('composer-input').waitFor();
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  const ask = async (file: string, content: string, reply: string) => {
    rig!.fake.enqueue(writeCall(file, content), textReply(reply));
    const input = p.page.getByTestId('composer-input');
    await input.fill(`Write ${file}`);
    await input.press('Enter');
    const dialog = p.page.getByTestId('approval-dialog');
    await dialog.waitFor();
    return dialog;
  };
  const idle = () =>
    waitFor(
      async () =>
        (await p.page.getByTestId('live-reply').count()) === 0 &&
        (await p.page.getByTestId('send').count()) === 1,
      15_000,
      'the turn to end',
    );

  test('allow once: the dialog names the tool and why, and the call runs', async () => {
    const file = join(outDir, 'once.txt');
    const dialog = await ask(file, 'written once', 'Wrote it.');
    const text = await dialog.innerText();
    assert.match(text, /write_file/);
    assert.match(text, /approval/i, `the reason is shown: ${text}`);
    assert.match(text, /once\.txt/, 'the input is shown');
    // The card behind the dialog names the file and says it waits.
    const waitingCard = p.page.locator('[data-testid=tool-card][data-tool=write_file]').last();
    assert.is(await waitingCard.locator('.tool-label').innerText(), 'Wrote');
    assert.is(await waitingCard.locator('.tool-subject').innerText(), file);
    assert.is(
      await waitingCard.getByTestId('tool-status').innerText(),
      'waiting for your approval',
    );
    // On loopback the page needs no key, but answering does: the dialog asks for it once, and a
    // wrong one changes nothing (the call keeps waiting).
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    const unlock = dialog.getByTestId('key-unlock');
    await unlock.waitFor();
    assert.match(await unlock.innerText(), /needs the access key, even on this machine/);
    await unlock.getByTestId('key-unlock-input').fill('0'.repeat(64));
    await unlock.getByRole('button', { name: 'Unlock' }).click();
    await unlock.getByText('That key was not accepted').waitFor();
    const waiting = await api(rig!.port, 'GET', `/api/sessions/${sessionId}/approvals`);
    assert.is(waiting.body.items.length, 1, 'still waiting');
    await unlock.getByTestId('key-unlock-input').fill(rig!.server.key());
    await unlock.getByRole('button', { name: 'Unlock' }).click();
    await dialog.waitFor({ state: 'detached' });
    await p.page
      .locator('[data-testid=tool-card][data-tool=write_file][data-status=done]')
      .waitFor();
    await p.page.getByTestId('assistant-message').filter({ hasText: 'Wrote it.' }).waitFor();
    await idle();
    assert.is(readFileSync(file, 'utf8'), 'written once');
  });

  test('deny with Escape, as the dialog says: the call is refused, the model is told, the file is never written', async () => {
    const file = join(outDir, 'denied.txt');
    const dialog = await ask(file, 'must not exist', 'Understood, I will not.');
    // The dialog says what Escape does, and Escape does it.
    const hint = dialog.getByTestId('approval-escape');
    assert.ok(await hint.isVisible(), 'the Escape hint is visible');
    assert.is(await hint.innerText(), 'Esc denies this call.');
    await p.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    const card = p.page.locator('[data-testid=tool-card][data-tool=write_file]').last();
    await card.and(p.page.locator('[data-status=error]')).waitFor();
    assert.match(await card.getByTestId('tool-output').innerText(), /denied|refused/i);
    await p.page
      .getByTestId('assistant-message')
      .filter({ hasText: 'Understood, I will not.' })
      .waitFor();
    await idle();
    assert.is(existsSync(file), false);
  });

  test('a page reloaded while a call waits shows the dialog again, and answering it works', async () => {
    const file = join(outDir, 'reload.txt');
    await ask(file, 'after a reload', 'Wrote it after the reload.');
    await p.page.reload();
    const dialog = p.page.getByTestId('approval-dialog');
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /reload\.txt/);
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    await dialog.waitFor({ state: 'detached' });
    await p.page
      .getByTestId('assistant-message')
      .filter({ hasText: 'Wrote it after the reload.' })
      .waitFor();
    await idle();
    assert.is(readFileSync(file, 'utf8'), 'after a reload');
  });

  test('allow for this session: the call runs', async () => {
    const file = join(outDir, 'session.txt');
    const dialog = await ask(file, 'for the session', 'Done for the session.');
    await dialog.getByRole('button', { name: 'Allow for this session' }).click();
    await dialog.waitFor({ state: 'detached' });
    await p.page
      .getByTestId('assistant-message')
      .filter({ hasText: 'Done for the session.' })
      .waitFor();
    await idle();
    assert.is(readFileSync(file, 'utf8'), 'for the session');
    assert.equal(p.errors, [], 'no errors in the page');
  });
}

test.run();
