import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  signIn,
  type PageRig,
} from '../helpers/browser.js';
import { removeHome, startServer, waitFor } from '../helpers/server.js';
import { KEY, startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The Web UI's small defects (issue 9, item 8 and the form of item 7) and the hostile chat id of
 * issue 23, each as a user meets it, against the real server and the fake provider.
 */

const reason = browserUnavailable();

if (reason) {
  skipFile(reason);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;

  test.before(async () => {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    await signIn(p.page, rig.server.base, rig.server.key());
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  const open = async (page: Page, hash: string) => {
    await page.goto(`${rig.server.base}/${hash}`);
  };
  const newSession = async (body: Record<string, unknown> = {}) =>
    (await api(rig.port, 'POST', '/api/sessions', body)).body.id as string;
  const send = async (page: Page, text: string) => {
    const input = page.getByTestId('composer-input');
    await input.fill(text);
    await input.press('Enter');
  };
  const idle = (page: Page) =>
    waitFor(
      async () =>
        (await page.getByTestId('live-reply').count()) === 0 &&
        (await page.getByTestId('send').count()) === 1,
      15_000,
      'the turn to end',
    );

  test('a chat id that is not one opens nothing and asks the server nothing (no walking to other routes)', async () => {
    const { page } = p;
    await open(page, '#/chat');
    await page.getByTestId('composer-input').waitFor();
    const seen: string[] = [];
    const onRequest = (r: { url: () => string; method: () => string }) =>
      seen.push(`${r.method()} ${r.url()}`);
    page.on('request', onRequest);
    try {
      for (const hostile of [
        '..%2F..%2Fapi%2Fstatus%3Fx%3D',
        '..%2Fsessions',
        's_0000000000000000000000%2F..%2F..%2Fstatus',
        '%2E%2E',
      ]) {
        await page.evaluate(`location.hash = '#/chat/${hostile}'`);
        await page.getByTestId('bad-chat').waitFor();
        assert.is(
          await page.getByTestId('composer-input').count(),
          0,
          'no message box to send from',
        );
      }
    } finally {
      page.off('request', onRequest);
    }
    // The app's own background reads (health, the chat list) may come and go; nothing may reach a
    // session, a chat, the status route, or write anything.
    const walked = seen.filter(
      (s) => /\/api\/(status|chat|sessions\/)/.test(s) || !s.startsWith('GET '),
    );
    assert.equal(walked, [], 'no request for a hostile id');
  });

  test('a [link](javascript:…) renders as its text, without a stray ")"', async () => {
    const { page } = p;
    const id = await newSession();
    rig.fake.enqueue(
      textReply('See [link](javascript:alert(1)) and [docs](https://example.com/a_(b)) here.'),
    );
    await open(page, `#/chat/${id}`);
    await send(page, 'Give me links');
    await idle(page);
    const last = page.getByTestId('assistant-message').last();
    assert.is((await last.innerText()).trim(), 'See link and docs here.');
    const links = last.locator('a');
    assert.is(await links.count(), 1);
    assert.is(
      await links.first().getAttribute('href'),
      'https://example.com/a_(b)',
      'parentheses inside a link target are kept',
    );
  });

  test('a call waiting for approval says it waits; a command that exits with code 7 says so (not a green "done")', async () => {
    const { page } = p;
    const id = await newSession({ permission_mode: 'interactive' });
    const file = join(rig.server.home, 'never.txt');
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              name: 'write_file',
              arguments: [JSON.stringify({ path: file, content: 'x' })],
            },
          },
        ],
      },
      textReply('Not written.'),
    );
    await open(page, `#/chat/${id}`);
    await send(page, 'Write it');
    const dialog = page.getByTestId('approval-dialog');
    await dialog.waitFor();
    const writing = page.locator('[data-testid=tool-card][data-tool=write_file]').last();
    await writing.and(page.locator('[data-status=waiting]')).waitFor({ state: 'attached' });
    assert.is(await writing.getByTestId('tool-status').textContent(), 'waiting for your approval');
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await writing.and(page.locator('[data-status=error]')).waitFor();
    await idle(page);

    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              name: 'terminal',
              arguments: [JSON.stringify({ command: 'echo almost; exit 7' })],
            },
          },
        ],
      },
      textReply('It failed with 7.'),
    );
    await send(page, 'Run it');
    const card = page.locator('[data-testid=tool-card][data-tool=terminal]').last();
    const asked = page.getByTestId('approval-dialog');
    // Whether the permission rules ask for this command or not, the card ends the same way.
    await waitFor(
      async () =>
        (await asked.count()) > 0 ||
        (await card.and(page.locator('[data-status=exited]')).count()) > 0,
      15_000,
      'the command to run or ask',
    );
    if ((await asked.count()) > 0) await asked.getByRole('button', { name: 'Allow once' }).click();
    await card.and(page.locator('[data-status=exited]')).waitFor();
    assert.is(await card.getByTestId('tool-status').innerText(), 'exit 7');
    assert.is(await card.locator('.ic-check').count(), 0, 'no check mark');
    await idle(page);
  });

  test('a chat without a goal opens without a 404', async () => {
    const { page } = p;
    const id = await newSession({ title: 'No goal here' });
    const notFound: string[] = [];
    const onResponse = (r: { status: () => number; url: () => string }) =>
      r.status() === 404 && notFound.push(r.url());
    page.on('response', onResponse);
    try {
      await open(page, `#/chat/${id}`);
      await page.locator('.chat-head h2', { hasText: 'No goal here' }).waitFor();
      await page.getByTestId('composer-input').waitFor();
      await page.getByTestId('session-settings-toggle').click();
      await page.getByTestId('goal-panel').waitFor();
    } finally {
      page.off('response', onResponse);
    }
    assert.equal(notFound, []);
    await page.keyboard.press('Escape');
    await page.getByTestId('session-side').waitFor({ state: 'detached' });
  });

  test('closing the session panel with an unsaved change asks first; the open panel leaves Send usable', async () => {
    const { page } = p;
    const id = await newSession({ title: 'Panel' });
    await open(page, `#/chat/${id}`);
    await page.getByTestId('composer-input').fill('still here');
    await page.getByTestId('session-settings-toggle').click();
    const side = page.getByTestId('session-side');
    await side.waitFor();
    const sendBox = (await page.getByTestId('send').boundingBox())!;
    const sideBox = (await side.boundingBox())!;
    assert.ok(
      sendBox.x + sendBox.width <= sideBox.x,
      `Send (${JSON.stringify(sendBox)}) is beside the panel (${JSON.stringify(sideBox)}), not under it`,
    );
    const hit = await page.evaluate(
      `document.elementFromPoint(${sendBox.x + sendBox.width / 2}, ${sendBox.y + sendBox.height / 2})?.getAttribute('data-testid')`,
    );
    assert.is(hit, 'send', 'Send is what a tap there reaches');

    await side.locator('input').first().fill('Renamed but not saved');
    await side.getByRole('button', { name: 'Close the session panel' }).click();
    const ask = page.getByTestId('unsaved-changes');
    await ask.waitFor();
    assert.ok(await side.isVisible(), 'the panel stays open');
    await ask.getByRole('button', { name: 'Keep editing' }).click();
    await ask.waitFor({ state: 'detached' });
    await side.getByRole('button', { name: 'Close the session panel' }).click();
    await ask.getByRole('button', { name: 'Discard changes' }).click();
    await side.waitFor({ state: 'detached' });
    assert.is(
      (await api(rig.port, 'GET', `/api/sessions/${id}`)).body.title,
      'Panel',
      'nothing was saved',
    );

    // Saved changes close without asking.
    await page.getByTestId('session-settings-toggle').click();
    await side.locator('input').first().fill('Panel renamed');
    await side.getByRole('button', { name: 'Save' }).click();
    await side.getByText('Saved.').waitFor();
    await side.getByRole('button', { name: 'Close the session panel' }).click();
    await side.waitFor({ state: 'detached' });
    assert.is((await api(rig.port, 'GET', `/api/sessions/${id}`)).body.title, 'Panel renamed');
  });

  test('after a restore from the Trash page, the Undo toast of the delete is gone (no raw API text)', async () => {
    const { page } = p;
    const id = await newSession({ title: 'Undo me' });
    await open(page, `#/chat/${id}`);
    const item = page.locator(`[data-testid=session-item][data-id="${id}"]`);
    await item.getByRole('button', { name: /^Delete/ }).click();
    const undo = page.getByTestId('toast').getByRole('button', { name: 'Undo' });
    await undo.waitFor();
    await page.evaluate(`location.hash = '#/settings/trash'`);
    const row = page.locator('[data-testid=trash-item]', { hasText: 'Undo me' });
    await row.getByRole('button', { name: 'Restore' }).click();
    await row.waitFor({ state: 'detached' });
    await undo.waitFor({ state: 'detached' });
    const texts = await page.getByTestId('toast').allInnerTexts();
    assert.ok(
      !texts.some((t) => /\/api\/|t_[a-z0-9]{10}/.test(t)),
      `no raw API text: ${JSON.stringify(texts)}`,
    );
    assert.is((await api(rig.port, 'GET', `/api/sessions/${id}`)).status, 200);
  });

  test('phone: the model card keeps its description readable beside no button; the Status table keeps Memory and Running turns', async () => {
    const phone = await newPage(browser, { viewport: { width: 360, height: 740 } });
    try {
      const { page } = phone;
      await page.goto(`${rig.server.base}/#/settings/models`);
      const card = page.locator('[data-testid=model-entry][data-id=oa]');
      await card.waitFor();
      const desc = card.locator('.grow .muted.small');
      const d = (await desc.boundingBox())!;
      assert.ok(d.width >= 200, `the description has room (${d.width}px wide)`);
      for (const name of ['Test', 'Edit', 'Remove']) {
        const b = (await card.getByRole('button', { name }).boundingBox())!;
        const overlaps =
          b.x < d.x + d.width &&
          d.x < b.x + b.width &&
          b.y < d.y + d.height &&
          d.y < b.y + b.height;
        assert.not.ok(
          overlaps,
          `${name} (${JSON.stringify(b)}) does not overlap the description (${JSON.stringify(d)})`,
        );
      }
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      assert.ok(width <= 360, `no sideways scrolling (${width})`);

      await page.goto(`${rig.server.base}/#/status`);
      const row = page.locator('[data-testid=process-row]', { hasText: 'gateway' });
      await row.waitFor();
      for (const label of ['Memory', 'Running turns']) {
        const cell = row.locator(`td[data-label="${label}"]`);
        const box = (await cell.boundingBox())!;
        assert.ok(
          box && box.width > 0 && box.x >= 0 && box.x + box.width <= 360,
          `${label} is on screen: ${JSON.stringify(box)}`,
        );
      }
      assert.equal(phone.errors, []);
    } finally {
      await phone.close();
    }
  });

  test('the OpenAI provider form has a base URL field (an OpenAI-compatible server elsewhere)', async () => {
    const { page } = p;
    await open(page, '#/settings/models');
    await page.getByRole('button', { name: '+ Add a model' }).click();
    const form = page.getByTestId('model-form');
    await form.locator('select[name=provider]').selectOption('openai');
    const url = form.locator('input[name=base_url]');
    await url.waitFor();
    assert.match(
      await url.inputValue(),
      /^https:\/\/api\.openai\.com/,
      "prefilled with the provider's own address",
    );
    await url.fill(rig.fake.baseUrl('openai'));
    await form.locator('input[name=model]').fill('fake');
    await form.locator('input[name=api_key]').fill(KEY);
    await form.getByRole('button', { name: 'Add' }).click();
    const entry = page.locator('[data-testid=model-entry]', { hasText: 'openai ·' });
    await entry.locator('[data-testid=test-result][data-ok=true]').waitFor();
    const saved = (await api(rig.port, 'GET', '/api/config/models')).body.items.find(
      (m: { provider: string }) => m.provider === 'openai',
    );
    assert.is(saved.base_url, rig.fake.baseUrl('openai'));
  });

  test('sending with no model keeps the typed text, links to Settings, and shows no "Nothing here yet"', async () => {
    const bare = await startServer();
    const page2 = await newPage(browser);
    try {
      const { page } = page2;
      await page.addInitScript(`localStorage.setItem('svc.onboarding.skipped', '1')`);
      await page.goto(`${bare.base}/#/chat`);
      await send(page, 'Hello with no model');
      const error = page.getByTestId('turn-error');
      await error.waitFor();
      assert.match(await error.innerText(), /No model is set up/);
      assert.is(await error.locator('a').getAttribute('href'), '#/settings/models');
      await waitFor(
        async () =>
          (await page.getByTestId('composer-input').inputValue()) === 'Hello with no model',
        10_000,
        'the text back in the box',
      );
      assert.is(await page.getByText('Nothing here yet').count(), 0);
      await error.locator('a').click();
      await page.getByTestId('models-panel').waitFor();
    } finally {
      await page2.close();
      await bare.stop();
      removeHome(bare.home);
    }
  });
}

test.run();
