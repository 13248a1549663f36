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

  test('the optional steps, then finish', async () => {
    const { page } = rig;
    await page.getByTestId('onboarding-next').click();
    await page.getByRole('heading', { name: 'A lite model (optional)' }).waitFor();
    await page.getByTestId('onboarding-next').click(); // skip the lite model
    await page.getByRole('heading', { name: 'Profile (optional)' }).waitFor();
    await page.locator('textarea[name=soul]').fill('You answer briefly.');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByTestId('onboarding-next').click();
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
