import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeDiscord, type FakeDiscord } from '../fixtures/fake-discord.js';
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
 * Discord on the Channels page in headless Chromium against the real server and the local fake of
 * Discord: its card and field list come from the platform's description; a malformed token is
 * refused in words on the form; connected from its fields it runs as the bot; a stranger's
 * pairing request appears live and is approved, and the stranger is told in Discord.
 */

const browserMissing = browserUnavailable();
const TOKEN = 'MTAwMDAwMDAwMDAwMDAwMDAy.GwebUI.FakeDiscordTokenForWebUI_abcdefXYZ01';

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let dc: FakeDiscord;

  test.before(async () => {
    dc = await startFakeDiscord(TOKEN);
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
    await dc?.close();
  });

  const card = () => p.page.locator('[data-testid="channel"][data-platform="discord"]');

  test('connect Discord from its fields; a malformed token is refused in words; it runs; the token is never on the page', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
    await card().getByRole('heading', { name: 'Discord' }).waitFor();
    await card().getByText('Not connected.').waitFor();
    await card().getByRole('button', { name: 'Set up Discord', exact: true }).click();
    assert.is(await card().locator('input[name="bot_token"]').getAttribute('type'), 'password');
    for (const name of ['allowed_users', 'api_base_url', 'gateway_url'])
      assert.is(await card().locator(`input[name="${name}"]`).count(), 1, name);

    await card().locator('input[name="bot_token"]').fill('not-a-token');
    await card().locator('input[name="api_base_url"]').fill(dc.apiUrl);
    await card().locator('input[name="gateway_url"]').fill(dc.gatewayUrl);
    await card().getByRole('button', { name: 'Connect' }).click();
    const alert = card().getByRole('alert');
    await alert.waitFor();
    // The field named as the form labels it, not by its config key.
    const said = await alert.innerText();
    assert.match(said, /Bot token: .*Developer Portal/s);
    assert.not.match(said, /bot_token/);

    await card().locator('input[name="bot_token"]').fill(TOKEN);
    await card().locator('input[name="allowed_users"]').fill('100000000000000042');
    await card().getByRole('button', { name: 'Connect' }).click();
    await card().locator('[data-testid="channel-state"]', { hasText: 'running' }).waitFor();
    assert.match(await card().innerText(), /@svc_test_bot/);
    assert.not.ok((await page.content()).includes(TOKEN), 'the token is never on the page');
  });

  test("a stranger's pairing request appears live and is approved; they are told in Discord", async () => {
    const bob = { id: '100000000000000077', username: 'bob' };
    dc.userSaysDM(bob, 'hi');
    const row = card().locator('[data-testid="pairing"]');
    await row.waitFor();
    assert.match(await row.innerText(), /bob/);
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached' });
    await waitFor(
      () => dc.channel(dc.dmOf(bob)).some((m) => /approved/.test(m.content)),
      20_000,
      'bob told',
    );
    assert.equal(p.errors, []);
  });
}

test.run();
