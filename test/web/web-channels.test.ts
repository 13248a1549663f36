import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { startFakeWhatsapp, type FakeWhatsapp } from '../fixtures/fake-baileys.js';
import { startFakeIlink, type FakeIlink } from '../fixtures/fake-ilink.js';
import { startFakeTelegram, type FakeTelegram } from '../fixtures/fake-telegram.js';
import { axe } from '../helpers/a11y.js';
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
 * The Channels page in headless Chromium against the real server and local fakes of the
 * Telegram Bot API and the iLink server: connect Telegram from its field list, see it run,
 * approve a stranger's pairing request that appears live, send a test message; connect WeChat
 * and log in by the live QR code as the fake phone scans and confirms; WhatsApp's QR (at Baileys'
 * socket boundary) in its own panel beside it; disconnect to the trash.
 */

const browserMissing = browserUnavailable();
const TOKEN = '123456789:AAHwebChannelsToken_0123456789abc';

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let tg: FakeTelegram;
  let wx: FakeIlink;
  let wa: FakeWhatsapp;

  test.before(async () => {
    tg = await startFakeTelegram(TOKEN);
    wx = await startFakeIlink();
    wa = await startFakeWhatsapp();
    rig = await startRig({
      models: { oa: { protocol: 'openai' } },
      env: {
        SVC_WHATSAPP_TEST_SOCKET: fileURLToPath(
          new URL('../fixtures/fake-baileys.js', import.meta.url),
        ),
        SVC_WHATSAPP_TEST_CONTROL: wa.url,
      },
    });
    await finishOnboarding(rig.port, 'oa');
    browser = await launch();
    p = await newPage(browser);
    await p.page.goto(`${rig.server.base}/#/chat`);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
    await tg?.close();
    await wx?.close();
    await wa?.close();
  });

  const card = (platform: string) =>
    p.page.locator(`[data-testid="channel"][data-platform="${platform}"]`);

  test('connect Telegram from its fields; it runs; the token is never on the page', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Channels', exact: true }).click();
    await page.getByRole('heading', { name: 'Channels', level: 1 }).waitFor();
    const tgCard = card('telegram');
    await tgCard.getByText('Not connected.').waitFor();
    // One platform's form at a time: opening another closes the first.
    const forms = page.getByTestId('channel-form');
    assert.is(await forms.count(), 0, 'no form open at first');
    await tgCard.getByRole('button', { name: 'Set up Telegram', exact: true }).click();
    await card('slack').getByRole('button', { name: 'Set up Slack', exact: true }).click();
    await card('slack').getByTestId('channel-form').waitFor();
    assert.is(await forms.count(), 1, 'one form open');
    assert.is(
      await tgCard.getByRole('button', { name: 'Set up Telegram' }).getAttribute('aria-expanded'),
      'false',
    );
    await tgCard.getByRole('button', { name: 'Set up Telegram', exact: true }).click();
    await tgCard.getByTestId('channel-form').waitFor();
    assert.is(await forms.count(), 1, 'still one form open');
    // Fields in words, not config keys; a closed choice is a select of the schema's values.
    const form = tgCard.getByTestId('channel-form');
    assert.not.match(await form.innerText(), /bot_token|parse_mode|allowed_users|base_url/);
    const format = form.getByLabel('Message format');
    assert.is(await format.evaluate((el) => el.tagName), 'SELECT');
    assert.equal(
      await format
        .locator('option')
        .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)),
      ['HTML', 'plain'],
    );
    assert.is(await format.inputValue(), 'HTML', 'the default is chosen');
    await format.selectOption({ label: 'Plain text' });
    assert.equal(await axe(page, 'channels with a form open'), []);
    await form.getByLabel('Bot token').fill(TOKEN);
    assert.is(await form.getByLabel('Bot token').getAttribute('type'), 'password');
    await form.getByLabel('Bot API server').fill(tg.url);
    await form.getByLabel('Who may talk to the agent').fill('4242');
    await tgCard.getByRole('button', { name: 'Connect' }).click();
    await tgCard.locator('[data-testid="channel-state"]', { hasText: 'running' }).waitFor();
    assert.match(await tgCard.innerText(), /@svc_test_bot/);
    assert.not.ok((await page.content()).includes(TOKEN), 'the token is never on the page');
    assert.is(await forms.count(), 0, 'the form closes once connected');
    const saved = (await api(rig.port, 'GET', '/api/channels')).body.channels;
    assert.is(saved.find((c: any) => c.platform === 'telegram').fields.parse_mode, 'plain');
  });

  test("a stranger's pairing request appears live and is approved; a test message goes out", async () => {
    const { page } = p;
    tg.userSays({ id: 777, first_name: 'Bob' }, 'hi');
    const row = card('telegram').locator('[data-testid="pairing"]');
    await row.waitFor();
    assert.match(await row.innerText(), /Bob/);
    await row.getByRole('button', { name: 'Approve' }).click();
    await row.waitFor({ state: 'detached' });
    await waitFor(() => tg.chat(777).some((m) => /approved/.test(m.text)), 20_000, 'Bob told');

    await card('telegram')
      .getByLabel(/Chat id for a test message/)
      .fill('4242');
    await card('telegram').getByRole('button', { name: 'Send test message' }).click();
    await card('telegram').getByText('Sent a test message to chat 4242.').waitFor();
    assert.ok(tg.chat(4242).some((m) => /Test message from svc/.test(m.text)));
    void page;
  });

  test('WeChat: connect, the QR code shows and follows the phone, then it runs', async () => {
    const wxCard = card('messenger');
    await wxCard.getByRole('button', { name: 'Set up WeChat', exact: true }).click();
    await wxCard.locator('input[name="base_url"]').fill(wx.url);
    await wxCard.getByRole('button', { name: 'Connect' }).click();
    await wxCard.locator('[data-testid="channel-state"]', { hasText: 'needs login' }).waitFor();
    await wxCard.getByRole('button', { name: 'Log in with a QR code' }).click();
    const img = wxCard.getByRole('img', { name: 'WeChat login QR code' });
    await img.waitFor();
    assert.match((await img.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
    assert.is(
      await img.getAttribute('data-url'),
      (await api(rig.port, 'GET', '/api/channels/messenger/login')).body.qr_url,
    );
    const natural = await img.evaluate(
      (el) => (el as unknown as { naturalWidth: number }).naturalWidth,
    );
    assert.ok(natural > 0, 'the PNG decodes');
    wx.scan(wx.codes.at(-1)!);
    await wxCard.getByText('Scanned: confirm the login on your phone.').waitFor();
    wx.confirm(wx.codes.at(-1)!, 'wxid_web');
    await wxCard.getByText('Logged in as wxid_web.').waitFor();
    await wxCard.locator('[data-testid="channel-state"]', { hasText: 'running' }).waitFor();
  });

  test("WhatsApp: its own QR panel shows the socket's code, follows the link, then it runs", async () => {
    const waCard = card('whatsapp');
    await waCard.getByRole('button', { name: 'Set up WhatsApp', exact: true }).click();
    await waCard.locator('input[name="allowed_users"]').fill('4915111111111');
    await waCard.getByRole('button', { name: 'Connect' }).click();
    await waCard.locator('[data-testid="channel-state"]', { hasText: 'needs login' }).waitFor();
    await waCard.getByRole('button', { name: 'Log in with a QR code' }).click();
    const login = await waitFor(() => wa.sockets[0], 30_000, 'the login socket');
    const QR = '2@d2ViQ2hhbm5lbHM=,a2V5,aWQ=,YWR2';
    login.qr(QR);
    const img = waCard.getByRole('img', { name: 'WhatsApp login QR code' });
    await img.waitFor();
    assert.is(await img.getAttribute('data-url'), QR);
    assert.ok(
      (await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)) > 0,
      'the PNG decodes',
    );
    // The WeChat panel still says it is logged in: each platform has its own flow.
    await card('messenger').getByText('Logged in as wxid_web.').waitFor();
    login.emit('creds.update', { me: { id: '4915000000000:3@s.whatsapp.net', name: 'svc' } });
    await waCard.getByText('Scanned: confirm the login on your phone.').waitFor();
    login.close(515, 'Stream Errored (restart required)');
    (await waitFor(() => wa.sockets[1], 30_000, 'the restarted socket')).open(
      '4915000000000:3@s.whatsapp.net',
    );
    await waCard.getByText('Logged in as 4915000000000.').waitFor();
    (await waitFor(() => wa.sockets[2], 30_000, "the adapter's socket")).open(
      '4915000000000:3@s.whatsapp.net',
    );
    await waCard.locator('[data-testid="channel-state"]', { hasText: 'running' }).waitFor();
  });

  test('disconnect Telegram: it goes to the trash', async () => {
    await card('telegram').getByRole('button', { name: 'Disconnect' }).click();
    await card('telegram').getByText('Not connected.').waitFor();
    const trash = await api(rig.port, 'GET', '/api/trash');
    assert.ok(
      trash.body.items.some((i: any) => i.kind === 'channel_config' && i.name === 'telegram'),
    );
    assert.equal(p.errors, []);
  });
}

test.run();
