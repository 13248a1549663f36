import type { Browser, WebSocketRoute } from 'playwright-core';
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
import { messagesOf, startRig, status, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The page keeps its live view through a dropped WebSocket: a drop mid-stream resumes with
 * `since` (same server), a restart (POST /api/restart: drain, then the socket closes with 1012
 * and a new epoch) reloads the chat. Either way the reply ends whole and shown once.
 */

const reason = browserUnavailable();

if (reason) {
  skipFile(reason);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  const sockets: WebSocketRoute[] = [];
  /** What the page sent on each connection, parsed. */
  const sent: any[][] = [];

  test.before(async () => {
    rig = await startRig({
      models: { oa: { protocol: 'openai' } },
      config: 'restart:\n  drain_seconds: 20\n',
    });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    // Every /ws the page opens goes through here, so the test can cut one like a network would.
    await p.page.routeWebSocket(/\/ws$/, (ws) => {
      const server = ws.connectToServer();
      const frames: any[] = [];
      sent.push(frames);
      ws.onMessage((m) => {
        frames.push(JSON.parse(String(m)));
        server.send(m);
      });
      sockets.push(ws);
    });
    await p.page.goto(rig.server.base + '/');
    await p.page.getByTestId('composer-input').waitFor();
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i} `);
  const lastReply = () => p.page.getByTestId('assistant-message').last().locator('.md').innerText();
  const idle = (ms = 20_000) =>
    waitFor(
      async () =>
        (await p.page.getByTestId('live-reply').count()) === 0 &&
        (await p.page.getByTestId('send').count()) === 1,
      ms,
      'the turn to end',
    );
  const send = async (text: string) => {
    const input = p.page.getByTestId('composer-input');
    await input.fill(text);
    await input.press('Enter');
  };
  const currentId = () => /#\/chat\/(s_[A-Za-z0-9_-]+)/.exec(p.page.url())?.[1] ?? '';

  test('a WebSocket dropped mid-stream reconnects, resumes where it was, and the text is whole', async () => {
    const { page } = p;
    const said = words('alpha', 40);
    rig.fake.enqueue({ parts: [{ text: said }], delayMs: 60 });
    await send('Stream for a while');
    const live = page.getByTestId('live-reply').locator('.md');
    await waitFor(
      async () => (await live.count()) > 0 && (await live.innerText()).includes('alpha5'),
      10_000,
      'some text to stream',
    );
    const opened = sockets.length;
    await sockets.at(-1)!.close({ code: 4000, reason: 'test: the network dropped' });
    await page.locator('[data-testid=conn-banner][data-state=reconnecting]').waitFor();
    await waitFor(() => sockets.length > opened, 10_000, 'the page to reconnect by itself');
    await page.locator('.shell[data-conn=online]').waitFor();
    await page.locator('[data-testid=conn-banner][data-state=ok]').waitFor({ state: 'attached' });
    assert.is(
      await page.getByTestId('conn-banner').innerText(),
      '',
      'the banner is empty again (its status region stays for the next announcement)',
    );
    const resubscribe = await waitFor(
      () => sent.at(-1)!.find((f) => f.type === 'subscribe'),
      5000,
      'the page to subscribe again',
    );
    const topic = `session:${currentId()}`;
    assert.ok(resubscribe.topics.includes(topic), JSON.stringify(resubscribe));
    assert.type(
      resubscribe.since?.[topic],
      'number',
      `same server: it resumes with since (${JSON.stringify(resubscribe)})`,
    );
    await idle();
    const text = await lastReply();
    assert.is(text.trim(), said.join('').trim(), 'every word once, in order');
    const saved = (await messagesOf(rig.port, currentId()))
      .filter((m) => m.role === 'assistant')
      .at(-1);
    assert.is(saved.content.text, said.join(''));
  });

  test('a restart mid-stream: the page shows it, the turn finishes, the page reconnects to the new server, the text is whole', async () => {
    const { page } = p;
    const said = words('omega', 30);
    rig.fake.enqueue({ parts: [{ text: said }], delayMs: 80 });
    await send('Stream through a restart');
    const live = page.getByTestId('live-reply').locator('.md');
    await waitFor(
      async () => (await live.count()) > 0 && (await live.innerText()).includes('omega3'),
      10_000,
      'some text to stream',
    );
    const opened = sockets.length;
    const restart = await api(rig.port, 'POST', '/api/restart', {});
    assert.is(restart.status, 202);
    await page.locator('[data-testid=conn-banner][data-state=draining]').waitFor();
    // The old server closes the socket (1012) once the turn is done; the page finds the new one.
    await waitFor(() => sockets.length > opened, 30_000, 'the page to reconnect after the restart');
    await waitFor(
      async () => (await status(rig.port)).restarts === 1,
      20_000,
      'the restart to finish',
    );
    await page.locator('.shell[data-conn=online]').waitFor();
    await page.locator('[data-testid=conn-banner][data-state=ok]').waitFor({ state: 'attached' });
    const resubscribe = await waitFor(
      () => sent.at(-1)!.find((f) => f.type === 'subscribe'),
      5000,
      'the page to subscribe again',
    );
    const topic = `session:${currentId()}`;
    assert.type(
      resubscribe.since?.[topic],
      'number',
      `the numbering goes on across a restart: it resumes with since, no reload (${JSON.stringify(resubscribe)})`,
    );
    await idle();
    const replies = await page.getByTestId('assistant-message').locator('.md').allInnerTexts();
    assert.is(replies.at(-1)!.trim(), said.join('').trim(), 'the reply is whole');
    assert.is(replies.filter((r) => r.includes('omega0')).length, 1, 'and shown once');

    rig.fake.enqueue(textReply('Back ', 'again.'));
    await send('Still there?');
    await page.getByTestId('assistant-message').filter({ hasText: 'Back again.' }).waitFor();
    await idle();
    assert.equal(p.errors, [], 'no errors in the page');
  });
}

test.run();
