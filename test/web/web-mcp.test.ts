import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startMcpOAuthServer, type McpOAuthFixture } from '../fixtures/mcp-oauth-server.js';
import { active, axe } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The MCP page in headless Chromium against the real server: add a local server with the form
 * (a real SDK server over stdio), see it connect with its tools, paste an import with a bad entry
 * and read the error, stop a turn during a call that ends only when cancelled (its card says
 * stopped, after a reload too), disable and enable it, and delete it to the trash; sign in to a remote server
 * that requires OAuth (a real SDK authorization server that approves at once) with the Sign in button.
 */

const browserMissing = browserUnavailable();
const fixture = fileURLToPath(new URL('../fixtures/mcp-server.js', import.meta.url));
const SECRET = 'web-mcp-secret-5c1d7e9a3b';

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let dir = '';
  let oauth: McpOAuthFixture | undefined;

  test.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-web-mcp-'));
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/mcp`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    await oauth?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the nav leads to the MCP page; a local server added with the form connects and lists its tools', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'MCP', exact: true }).click();
    await page.getByRole('heading', { name: 'MCP servers' }).waitFor();
    await page.getByText('No MCP server yet').waitFor();
    // The kind of server is one segmented row that fits, on a desktop and on a phone.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      const fit = await page.getByTestId('mcp-kind').evaluate((el) => {
        const box = el.getBoundingClientRect();
        const form = el.parentElement!.getBoundingClientRect();
        const labels = [...el.querySelectorAll('label')].map((l) => l.getBoundingClientRect());
        const css = (
          globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string } }
        ).getComputedStyle(el.querySelector('label'));
        const line = Number.parseFloat(css.fontSize) * 1.3;
        return {
          rows: new Set(labels.map((l) => Math.round(l.top))).size,
          tallest: Math.max(...labels.map((l) => l.height)),
          line: Number.isFinite(line) ? line : 24,
          inside: box.left >= form.left - 0.5 && box.right <= form.right + 0.5,
          clipped: labels.some((l) => l.right > box.right + 0.5),
        };
      });
      assert.is(fit.rows, 1, `one row at ${width} px`);
      assert.ok(fit.tallest < fit.line * 1.5 + 16, `no label wraps at ${width} px: ${fit.tallest}`);
      assert.ok(fit.inside && !fit.clipped, `it fits its card at ${width} px`);
    }
    await page.setViewportSize({ width: 1200, height: 800 });
    assert.equal(await axe(page, 'MCP page'), []);
    await page.getByRole('radio', { name: 'Local' }).focus();
    await page.keyboard.press('ArrowRight');
    await page
      .getByTestId('mcp-kind-help')
      .getByText(/connects to a server that runs elsewhere/)
      .waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('local');
    await page.getByRole('textbox', { name: 'Command', exact: true }).fill(process.execPath);
    await page.getByLabel('Arguments, one a line').fill(`${fixture}\nstdio`);
    await page.getByLabel(/Environment/).fill(`FIXTURE_TOKEN=${SECRET}`);
    await page.getByRole('button', { name: 'Add' }).click();
    const card = page.locator('[data-testid="mcp-server"][data-name="local"]');
    await card.locator('[data-testid="mcp-status"]', { hasText: 'connected' }).waitFor();
    assert.match(await card.innerText(), /secrets set: FIXTURE_TOKEN/);
    assert.not.ok((await page.content()).includes(SECRET), 'the secret is never on the page');
    await card.getByText('7 tools').click();
    await card.getByText('Answers the text it is given.').waitFor();
  });

  test('a connected server lists its resources and prompts; the composer starts a message from a prompt', async () => {
    const { page } = p;
    const card = page.locator('[data-testid="mcp-server"][data-name="local"]');
    await card.getByText('Resources and prompts').click();
    const resources = card.getByTestId('mcp-resources');
    await resources.getByText('fixture://readme').waitFor();
    assert.match(
      await resources.innerText(),
      /Readme fixture:\/\/readme text\/plain · What the fixture is\./,
    );
    assert.match(await resources.innerText(), /fixture:\/\/notes\/\{id\} template/);
    assert.match(
      await card.getByTestId('mcp-prompts').innerText(),
      /Review Asks for a review of a topic\. \(topic\)/,
    );

    const id = (await api(rig.port, 'POST', '/api/sessions', {})).body.id;
    await page.goto(`${rig.server.base}/#/chat/${id}`);
    const box = page.getByTestId('composer-input');
    await box.waitFor();
    await box.fill('Context first.');
    await page.getByRole('button', { name: 'Start from an MCP prompt' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start from an MCP prompt' });
    await dialog
      .getByLabel('Prompt')
      .selectOption({ label: 'local: Review — Asks for a review of a topic.' });
    await dialog.getByLabel('topic (required)').fill('the release notes');
    await dialog.getByRole('button', { name: 'Use prompt' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.is(
      await box.inputValue(),
      'Context first.\n\nPlease review the release notes carefully.',
    );
    assert.match(await active(page), /composer-input/, 'the box has focus, with the text');
    assert.equal(
      await api(rig.port, 'GET', `/api/sessions/${id}/messages`).then((r) => r.body.items),
      [],
      'nothing was sent',
    );

    // A resource attached to the message reaches the model with it; its chip goes once sent.
    await page.getByRole('button', { name: 'Attach an MCP resource' }).click();
    const pick = page.getByRole('dialog', { name: 'Attach an MCP resource' });
    await pick.getByLabel('Resource').selectOption({ label: 'local: Readme (fixture://readme)' });
    await pick.getByRole('button', { name: 'Attach' }).click();
    await pick.waitFor({ state: 'detached' });
    const chip = page.getByTestId('resource-chip');
    assert.is((await chip.innerText()).trim(), 'local: Readme');
    rig.fake.enqueue({ parts: [{ text: 'Read it.' }] });
    const before = rig.fake.requests.length;
    await page.getByTestId('send').click();
    await page.getByTestId('assistant-message').getByText('Read it.').waitFor();
    assert.is(await chip.count(), 0, 'the chip went with the message');
    const sent = JSON.stringify(rig.fake.requests.slice(before).map((r) => r.body));
    assert.match(sent, /The fixture readme: resources reach the model\./);

    // An MCP call's card names the server, the tool and its key argument (strict mode refuses
    // it at once, so no approval waits).
    await api(rig.port, 'PATCH', `/api/sessions/${id}`, { permission_mode: 'strict' });
    rig.fake.enqueue(
      {
        parts: [{ toolCall: { name: 'mcp__local__echo', arguments: ['{"text":"hello card"}'] } }],
      },
      { parts: [{ text: 'Refused.' }] },
    );
    await box.fill('Echo it');
    await page.getByTestId('send').click();
    const call = page.locator('[data-testid=tool-card][data-tool=mcp__local__echo]');
    await page.getByTestId('assistant-message').getByText('Refused.').waitFor();
    assert.is(await call.locator('.tool-label').innerText(), 'local › echo');
    assert.is(await call.locator('.tool-subject').innerText(), 'hello card');
    assert.equal(p.errors, []);
    await page.goto(`${rig.server.base}/#/mcp`);
    await card.waitFor();
  });

  test('Stop during an MCP call that ends only when cancelled: its card says stopped, after a reload too, and the next turn sends that result', async () => {
    const { page } = p;
    try {
      // Auto mode: the call runs without an approval; the slow tool returns only when cancelled.
      const id = (await api(rig.port, 'POST', '/api/sessions', { permission_mode: 'auto' })).body
        .id as string;
      await page.goto(`${rig.server.base}/#/chat/${id}`);
      const box = page.getByTestId('composer-input');
      await box.waitFor();
      rig.fake.enqueue({
        parts: [
          {
            toolCall: {
              id: 'slow_call',
              name: 'mcp__local__slow',
              arguments: ['{"seconds":600}'],
            },
          },
        ],
      });
      await box.fill('Wait for the slow tool');
      await page.getByTestId('send').click();
      const card = page.locator('[data-testid=tool-card][data-tool=mcp__local__slow]');
      await card.and(page.locator('[data-status=running]')).waitFor();
      await page.getByTestId('interrupt').click();
      await card.and(page.locator('[data-status=stopped]')).waitFor();
      assert.is(await card.getByTestId('tool-status').innerText(), 'stopped');
      assert.is(await page.getByTestId('stopped').count(), 1, 'one "stopped" mark');

      await page.reload();
      await page
        .getByTestId('user-message')
        .filter({ hasText: 'Wait for the slow tool' })
        .waitFor();
      await card.waitFor();
      assert.is(await card.getAttribute('data-status'), 'stopped', 'not running after a reload');
      assert.is(await card.getByTestId('tool-status').innerText(), 'stopped');
      assert.is(await card.getAttribute('open'), '', 'a card that did not finish shows open');
      assert.is(await card.getByTestId('tool-output').innerText(), 'Stopped before it finished.');
      assert.is(await page.getByTestId('stopped').count(), 1, 'one "stopped" mark after a reload');
      const stored = (await api(rig.port, 'GET', `/api/sessions/${id}/messages`)).body.items;
      assert.equal(
        stored.filter((m: any) => m.role === 'tool').map((m: any) => m.content),
        [
          {
            tool_call_id: 'slow_call',
            name: 'mcp__local__slow',
            output: 'Stopped before it finished.',
            is_error: true,
            unfinished: 'interrupted',
          },
        ],
      );

      // The next turn gives the model the stored result for that call.
      rig.fake.enqueue({ parts: [{ text: 'Understood.' }] });
      const before = rig.fake.requests.length;
      await box.fill('Never mind');
      await page.getByTestId('send').click();
      await page.getByTestId('assistant-message').getByText('Understood.').waitFor();
      const sent = rig.fake.requests.slice(before).map((r) => r.body?.messages) as any[][];
      const answer = sent[0]?.find((m) => m.role === 'tool' && m.tool_call_id === 'slow_call');
      assert.is(answer?.content, 'Stopped before it finished.');
      assert.equal(p.errors, []);
    } finally {
      // The MCP page, as the next tests expect it, whatever happened here.
      await page.goto(`${rig.server.base}/#/mcp`);
      await page.locator('[data-testid="mcp-server"][data-name="local"]').waitFor();
    }
  });

  test('a pasted import with a bad entry shows the error and adds nothing', async () => {
    const { page } = p;
    await page.getByLabel('Paste JSON').check();
    await page
      .getByLabel(/An \{"mcpServers"/)
      .fill(
        JSON.stringify({ mcpServers: { fine: { command: 'node' }, broken: { url: 'ftp://x' } } }),
      );
    await page.getByRole('button', { name: 'Import' }).click();
    const alert = page.locator('[data-testid="mcp-add"] [role="alert"]');
    await alert.waitFor();
    assert.match(await alert.innerText(), /mcpServers\.broken\.url/);
    assert.is(await page.locator('[data-testid="mcp-server"]').count(), 1);
  });

  test('disable, enable, and delete to the trash', async () => {
    const { page } = p;
    const card = page.locator('[data-testid="mcp-server"][data-name="local"]');
    await card.getByRole('button', { name: 'Disable' }).click();
    await card.locator('[data-testid="mcp-status"]', { hasText: 'disabled' }).waitFor();
    await card.getByRole('button', { name: 'Enable' }).click();
    await card.locator('[data-testid="mcp-status"]', { hasText: 'connected' }).waitFor();
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No MCP server yet').waitFor();
    const trash = await api(rig.port, 'GET', '/api/trash');
    assert.ok(trash.body.items.some((i: any) => i.kind === 'mcp_server' && i.name === 'local'));
    assert.equal(p.errors, []);
  });

  test('Sign in: a server that requires OAuth says so; the button goes through the authorization server and back, connected', async () => {
    const { page } = p;
    oauth = await startMcpOAuthServer();
    assert.is(
      (await api(rig.port, 'POST', '/api/mcp/servers', { name: 'secure', url: oauth.url })).status,
      201,
    );
    const card = page.locator('[data-testid="mcp-server"][data-name="secure"]');
    await card.locator('[data-testid="mcp-error"]', { hasText: 'use Sign in' }).waitFor();
    await card.getByRole('button', { name: 'Sign in' }).click();
    await card.locator('[data-testid="mcp-status"]', { hasText: 'connected' }).waitFor();
    assert.is(new URL(page.url()).hash, '#/mcp', 'back on the MCP page');
    assert.is(await card.getByRole('button', { name: 'Sign in' }).count(), 0);
    assert.equal([oauth.counts.authorizations, oauth.counts.codeExchanges], [1, 1]);
    const html = await page.content();
    assert.ok(
      oauth.issued.every((t) => !html.includes(t)),
      'no token on the page',
    );
    assert.equal(p.errors, []);
  });
}

test.run();
