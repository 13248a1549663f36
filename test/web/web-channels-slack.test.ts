import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeSlack, type FakeSlack } from '../fixtures/fake-slack.js';
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
 * Slack on the Channels page in headless Chromium against the real server and the local fake of
 * Slack: its card comes from the platform list, it connects from its two token fields, runs, and
 * neither token is ever on the page; a stranger's pairing request appears and is approved.
 */

const browserMissing = browserUnavailable();
const APP_TOKEN = 'xapp-1-A0WEB-1234567890-webchannelsapptoken0123456789';
const BOT_TOKEN = 'xoxb-1234567890-0987654321-WebChannelsBotToken';
const ALICE = { id: 'U01ALICE', name: 'Alice' };
const BOB = { id: 'U01BOB', name: 'Bob' };

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let slack: FakeSlack;

  test.before(async () => {
    slack = await startFakeSlack({ app: APP_TOKEN, bot: BOT_TOKEN }, [ALICE, BOB]);
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/chat`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    await slack?.close();
  });

  const card = () => p.page.locator('[data-testid="channel"][data-platform="slack"]');

  test('connect Slack from its fields; it runs; the tokens are never on the page', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
    await card().getByText('Not connected.').waitFor();
    await card().getByRole('button', { name: 'Set up Slack', exact: true }).click();
    assert.match(await card().innerText(), /Slack/);
    await card().locator('input[name="app_token"]').fill(APP_TOKEN);
    await card().locator('input[name="bot_token"]').fill(BOT_TOKEN);
    await card().locator('input[name="api_base_url"]').fill(slack.apiUrl);
    await card().locator('input[name="allowed_users"]').fill(ALICE.id);
    await card().getByRole('button', { name: 'Connect' }).click();
    await card().locator('[data-testid="channel-state"]', { hasText: 'running' }).waitFor();
    assert.match(await card().innerText(), /@svc \(Fake Workspace\)/);
    const html = await page.content();
    assert.not.ok(
      html.includes(APP_TOKEN) || html.includes(BOT_TOKEN),
      'the tokens are never on the page',
    );
  });

  test("a stranger's pairing request appears live and is approved", async () => {
    slack.dm(BOB, 'hi');
    const row = card().locator('[data-testid="pairing"]');
    await row.waitFor();
    assert.match(await row.innerText(), /Bob/);
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached' });
    await waitFor(
      () => slack.posted(slack.dmOf(BOB)).some((m) => /approved/.test(m.text)),
      20_000,
      'Bob told',
    );
    const list = await api(rig.port, 'GET', '/api/channels/slack/pairings');
    assert.ok(
      list.body.items.some(
        (x: { user_id: string; status: string }) => x.user_id === BOB.id && x.status === 'approved',
      ),
    );
    assert.equal(p.errors, []);
  });
}

test.run();
