import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeProvider, type FakeProvider } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  screenshotPath,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { removeHome, startServer, waitFor, type RunningServer } from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The Web UI from a fresh SVC_HOME: onboarding (a failing test shows its reason, then a working
 * key), the profile step, finishing, and a first answer streamed into the chat.
 */

const KEY = 'sk-fake-web-onboarding-0123456789';
const reason = browserUnavailable();

if (reason) {
  skipFile(reason);
} else {
  let fake: FakeProvider;
  let server: RunningServer;
  let browser: Browser;
  let rig: PageRig;

  test.before(async () => {
    fake = await startFakeProvider({ apiKey: KEY });
    server = await startServer();
    browser = await launch();
    rig = await newPage(browser);
  });

  test.after(async () => {
    await rig?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await server?.stop();
    await fake?.close();
    if (server) removeHome(server.home);
  });

  test('a fresh server opens onboarding; a wrong key fails the test with its reason, the right one passes', async () => {
    const { page } = rig;
    await page.goto(server.base + '/');
    await page.getByTestId('onboarding').waitFor();
    assert.match(page.url(), /#\/onboarding$/);

    const form = page.getByTestId('model-form');
    await form.locator('select[name=provider]').selectOption('custom');
    await form.locator('select[name=protocol]').selectOption('openai');
    await form.locator('input[name=base_url]').fill(fake.baseUrl('openai'));
    await form.locator('input[name=model]').fill('fake');
    await form.locator('input[name=api_key]').fill('sk-not-the-right-key');
    await form.getByRole('button', { name: 'Save and test' }).click();

    const result = page.getByTestId('test-result');
    await result.and(page.locator('[data-ok=false]')).waitFor();
    const failure = await result.innerText();
    assert.match(failure, /failed/i);
    assert.match(failure, /bad key/, `the reason is shown: ${failure}`);
    assert.ok(
      await page.getByTestId('onboarding-next').isDisabled(),
      'no next step before a passing test',
    );

    await form.locator('input[name=api_key]').fill(KEY);
    await form.getByRole('button', { name: 'Save and test again' }).click();
    await page.locator('[data-testid=test-result][data-ok=true]').waitFor();
    assert.match(await result.innerText(), /answered in \d+ ms/);

    const models = await api(server.port, 'GET', '/api/config/models');
    assert.is(models.body.items.length, 1, 'the retry edited the entry instead of adding another');
    assert.is(models.body.slots.default, models.body.items[0].id);
    assert.is(models.body.items[0].api_key_set, true);
    await page.screenshot({ path: screenshotPath('onboarding.png'), fullPage: true });
  });

  test('the optional steps follow the first choice, one primary button each; service, phone and sandbox steps; then finish', async () => {
    const { page } = rig;
    const card = page.getByTestId('onboarding').locator('section.card');
    const primaries = () => card.locator('button.primary').count();
    assert.is(await primaries(), 1, 'the model step: Next is the one primary once tested');
    assert.is(await page.getByTestId('onboarding-next').getAttribute('class'), 'primary');
    await page.getByTestId('onboarding-next').click();
    await page.getByRole('heading', { name: 'A lite model (optional)' }).waitFor();
    // The lite model starts from the main model's provider and endpoint, not the catalogue's first.
    const lite = page.getByTestId('model-form');
    assert.is(await lite.locator('select[name=provider]').inputValue(), 'custom');
    assert.is(await lite.locator('select[name=protocol]').inputValue(), 'openai');
    assert.is(await lite.locator('input[name=base_url]').inputValue(), fake.baseUrl('openai'));
    // The key given for the main model is used unless another is typed (api_key_from).
    const mainId = (await api(server.port, 'GET', '/api/config/models')).body.items[0].id;
    assert.is(
      await lite.locator('input[name=api_key]').getAttribute('placeholder'),
      `the key of ${mainId} (leave empty to use it)`,
    );
    assert.is(await primaries(), 1, 'the lite step: its form is the one primary; Skip is not');
    await page.getByTestId('onboarding-next').click(); // skip the lite model
    await page.getByRole('heading', { name: 'Profile (optional)' }).waitFor();
    await page.locator('textarea[name=soul]').fill('You answer briefly.');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Saved.').waitFor();
    assert.is(await primaries(), 1, 'the profile step, once saved: Next');
    await page.getByTestId('onboarding-next').click();

    await page.getByRole('heading', { name: 'Keep svc running (optional)' }).waitFor();
    const service = page.getByTestId('setup-service');
    if (process.platform === 'linux' || process.platform === 'darwin')
      assert.is(await service.getByTestId('setup-command').innerText(), 'svc service install');
    assert.is(await primaries(), 1);
    await page.getByTestId('onboarding-next').click();

    await page.getByRole('heading', { name: 'Use it from your phone (optional)' }).waitFor();
    const phone = page.getByTestId('setup-phone');
    // The test server listens on loopback only: the step says so and how to open it up.
    assert.match(
      await phone.innerText(),
      new RegExp(`only on this machine now \\(127\\.0\\.0\\.1:${server.port}\\)`),
    );
    assert.is(
      await phone.getByTestId('setup-command').innerText(),
      `svc serve --addr :${server.port}`,
    );
    const setup = await api(server.port, 'GET', '/api/onboard/setup');
    assert.is(setup.status, 200);
    assert.not.ok(JSON.stringify(setup.body).includes(server.key()), 'no key in the setup answer');
    const unkeyed = await api(server.port, 'GET', '/api/onboard/phone');
    assert.is(unkeyed.status, 403, 'the key is shown only to whoever sent it');
    assert.is(unkeyed.body.error.code, 'key_required');
    // Showing the key asks for it first (this browser came in from loopback without it).
    await phone.getByRole('button', { name: /Show the address with the key/ }).click();
    const unlock = phone.getByTestId('key-unlock');
    await unlock.getByLabel('Access key').fill(server.key());
    await unlock.getByRole('button', { name: 'Unlock' }).click();
    const shown = phone.getByTestId('phone-key');
    const qr = shown.getByRole('img', { name: 'QR code of the address with the access key' });
    await qr.waitFor();
    assert.match((await qr.getAttribute('src')) ?? '', /^data:image\/png;base64,/);
    assert.ok(
      (await qr.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)) > 0,
      'the PNG decodes',
    );
    const url = await shown.locator('code').innerText();
    assert.ok(
      url.endsWith(`:${server.port}/?access_key=${server.key()}`),
      'the address carries the key',
    );
    await shown.getByRole('button', { name: 'Hide the key' }).click();
    assert.is(await shown.count(), 0);
    assert.is(await primaries(), 1);
    await page.getByTestId('onboarding-next').click();

    await page.getByRole('heading', { name: 'The sandbox' }).waitFor();
    const health = (await api(server.port, 'GET', '/api/health')).body.sandbox;
    const box = page.getByTestId('setup-sandbox');
    await box.getByText(health.state === 'on' ? 'sandbox on' : /sandbox off|no sandbox/).waitFor();
    if (health.state !== 'on')
      assert.is(await box.getByTestId('sandbox-fix').innerText(), health.message);
    await page.getByTestId('onboarding-next').click();

    await page.getByRole('heading', { name: 'Ready' }).waitFor();
    await page.getByTestId('onboarding-finish').click();
    await page.getByTestId('composer-input').waitFor();
    assert.match(page.url(), /#\/chat$/);
    const status = await api(server.port, 'GET', '/api/onboard/status');
    assert.is(status.body.state, 'done');
    assert.is(status.body.steps.profile_written, true);
  });

  test('a first message is answered, streamed as it comes, and ends whole', async () => {
    const { page, errors } = rig;
    const chunks = [
      'Hello',
      ' from',
      ' **the**',
      ' fake',
      ' model',
      '.\n\n```js\nconst x = 1;\n```',
    ];
    fake.enqueue({ parts: [{ text: chunks }], delayMs: 300 });
    const input = page.getByTestId('composer-input');
    await input.fill('Say hello');
    await input.press('Enter');

    // While it streams, the live reply holds a part of the text.
    const liveReply = page.getByTestId('live-reply');
    await liveReply.locator('.md').waitFor();
    const partial = await liveReply.innerText();
    assert.ok(partial.startsWith('Hello'), `streaming text: ${partial}`);

    const final = page.getByTestId('assistant-message');
    await final.waitFor();
    await waitFor(async () => (await liveReply.count()) === 0, 10_000, 'the live reply to end');
    const text = await final.locator('.md').innerText();
    assert.match(text, /^Hello from the fake model\./);
    assert.is(await final.locator('strong').innerText(), 'the');
    assert.is(await final.locator('.code .tk-keyword').first().innerText(), 'const');
    assert.is((text.match(/Hello/g) ?? []).length, 1, 'the text shows once');
    assert.is(await page.getByTestId('user-message').innerText(), 'Say hello');
    assert.match(page.url(), /#\/chat\/s_/);
    const sessions = await api(server.port, 'GET', '/api/sessions');
    assert.is(sessions.body.items.length, 1);
    assert.equal(errors, [], 'no errors in the page');
  });
}

test.run();
