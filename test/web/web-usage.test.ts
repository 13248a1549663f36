import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { active, axe } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { skipFile } from '../helpers/skip.js';
import { KEY, startRig, type TurnRig } from '../helpers/turns.js';
import { waitFor } from '../helpers/server.js';

/*
 * The Usage page (issue 33): a chart per day drawn by uPlot, the same numbers in a table, the
 * budgets with what they spent, and the top sessions with their cost, after real turns. Also the
 * chat's cost in its header, and (issue 35) a chat's export and import and the Status page's
 * backups, on the same server.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  let session = '';

  test.before(async () => {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    const prices = await api(rig.port, 'PATCH', '/api/config/models/oa', {
      prices: { input: 2, output: 8 },
    });
    assert.is(prices.status, 200);
    await api(rig.port, 'PUT', '/api/budgets', { daily: { usd: 10 } });
    session = (await api(rig.port, 'POST', '/api/chat', {})).body.session_id;
    // 100k input and 10k output tokens: $0.20 + $0.08.
    rig.fake.enqueue({
      parts: [{ text: 'Costly answer' }],
      usage: { input: 100_000, output: 10_000 },
    });
    const r = await api(rig.port, 'POST', `/api/chat/${session}/turn`, { message: 'hi' });
    assert.is(r.body.status, 'completed', JSON.stringify(r.body));
    browser = await launch();
    p = await newPage(browser);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  test('the Usage page charts the days, lists the budgets and the top sessions, and passes axe', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/usage`);
    await page.getByTestId('usage-chart').locator('canvas').waitFor();
    assert.is(await page.getByTestId('usage-cost').innerText(), '$0.28');
    const top = page.getByTestId('usage-session').first();
    assert.match(await top.innerText(), session);
    assert.match(await top.innerText(), '$0.28');
    const budget = page.getByTestId('budget-state').first();
    assert.match(await budget.innerText(), 'daily');
    assert.match(await budget.innerText(), '$0.28 of $10.00');
    // Keyboard: the day table is reachable and named for screen readers.
    const days = page.getByRole('region', { name: 'Usage per day' });
    await days.focus();
    assert.match(await active(page), 'Usage per day');
    assert.equal(await axe(page, 'usage'), []);
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await axe(page, 'usage (dark)'), []);
    await page.setViewportSize({ width: 390, height: 780 });
    await page.reload();
    await page.getByTestId('usage-chart').locator('canvas').waitFor();
    assert.equal(await axe(page, 'usage (dark, phone)'), []);
    assert.equal(p.errors, [], 'no errors in the page');
  });

  test("a chat's header shows what it cost so far, and follows a new turn", async () => {
    const { page } = p;
    await page.setViewportSize({ width: 1200, height: 800 });
    await page.goto(`${rig.server.base}/#/chat/${session}`);
    const chip = page.getByTestId('chat-spend');
    await waitFor(async () => (await chip.innerText()) === '$0.28', 10_000, 'the cost chip');
    assert.match((await chip.getAttribute('aria-label')) ?? '', 'Cost so far: $0.28');
    // 50k in, 5k out: $0.10 + $0.04 more.
    rig.fake.enqueue({
      parts: [{ text: 'Another answer' }],
      usage: { input: 50_000, output: 5_000 },
    });
    const input = page.getByTestId('composer-input');
    await input.fill('again');
    await input.press('Enter');
    await page.getByTestId('transcript').getByText('Another answer').waitFor();
    await waitFor(async () => (await chip.innerText()) === '$0.42', 10_000, 'the new cost');
    // Each turn's details, under its reply: folded to its cost, open for its tokens.
    const details = page.getByTestId('turn-details');
    await waitFor(async () => (await details.count()) === 2, 10_000, 'both turns detailed');
    assert.equal(
      (await details.locator('summary').allInnerTexts()).map((t) => t.trim()),
      ['Turn: $0.28 · 110k tokens', 'Turn: $0.14 · 55.0k tokens'],
    );
    const last = details.nth(1);
    await last.locator('summary').focus();
    await page.keyboard.press('Enter');
    assert.match(await last.innerText(), '50.0k input tokens, 5000 output');
    assert.match(await last.innerText(), '1 model call');
    assert.match(await last.innerText(), 'Cost: $0.14');
    // In the messages' column at 1200 px, not at the transcript's edge.
    const left = async (l: typeof last) => Math.round((await l.boundingBox())?.x ?? -1);
    assert.is(
      await left(last),
      await left(page.getByTestId('assistant-message').last()),
      'aligned with the reply',
    );
  });

  test('a chat exports as Markdown and JSON from its panel; the JSON imports as a new chat', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/chat/${session}`);
    await page.getByTestId('session-settings-toggle').click();
    const [md] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download as Markdown' }).click(),
    ]);
    assert.match(md.suggestedFilename(), /\.md$/);
    const text = readFileSync(await md.path(), 'utf8');
    for (const part of ['hi', 'Costly answer', 'again', 'Another answer'])
      assert.match(text, part, `the Markdown has "${part}"`);
    const [json] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download as JSON' }).click(),
    ]);
    const file = await json.path();
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    assert.ok(Array.isArray(doc.messages), 'a JSON document with the messages');

    // A file that is not JSON, then JSON that is not an export: a sentence each, no new chat.
    const before = await page.getByTestId('session-item').count();
    const picker = page.getByTestId('import-file');
    await picker.setInputFiles({
      name: 'notes.json',
      mimeType: 'application/json',
      buffer: Buffer.from('not json at all'),
    });
    const err = page.getByTestId('import-error');
    assert.match(
      await err.innerText(),
      'Could not import "notes.json": "notes.json" is not a chat',
    );
    await picker.setInputFiles({
      name: 'other.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{"hello": 1}'),
    });
    await waitFor(
      async () =>
        (await err.innerText()).startsWith(
          'Could not import "other.json": it is not a chat exported as JSON by svc (',
        ),
      10_000,
      'the server refusing a document that is not an export',
    );
    assert.is(await page.getByTestId('session-item').count(), before);

    await picker.setInputFiles(file);
    await page.waitForURL((u) => /#\/chat\/s_/.test(u.hash) && !u.hash.includes(session));
    const imported = new URL(page.url()).hash.replace('#/chat/', '');
    await page.getByTestId('transcript').getByText('Another answer').waitFor();
    const users = await page.getByTestId('user-message').allInnerTexts();
    assert.equal(
      users.map((u) => u.trim()),
      ['hi', 'again'],
    );
    assert.is(await page.getByTestId('import-error').count(), 0);
    assert.is(
      await page.locator(`[data-testid=session-item][data-id="${imported}"]`).count(),
      1,
      'the imported chat is in the list',
    );
    assert.equal(p.errors, [], 'no errors in the page');
  });

  test('the Status page shows the backups, makes one now, and downloads the newest', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/status`);
    const box = page.getByTestId('backup-status');
    await waitFor(
      async () => (await box.getByTestId('backup-last').count()) > 0,
      10_000,
      'the backup state',
    );
    assert.is(await box.getByTestId('backup-schedule').innerText(), 'not scheduled');
    assert.is(await box.getByTestId('backup-last').innerText(), 'none yet');
    assert.is(await box.getByTestId('backup-download').count(), 0);
    await box.getByRole('button', { name: 'Back up now' }).click();
    const result = box.getByTestId('backup-result');
    await waitFor(async () => (await result.innerText()) !== '', 30_000, 'the backup to finish');
    const said = await result.innerText();
    assert.match(said, /^Backed up \d+ files to svc-backup-\d{8}-\d{6}\.zip \(/);
    const listed = (await api(rig.port, 'GET', '/api/backups')).body;
    assert.is(listed.last.ok, true);
    await waitFor(
      async () => (await box.getByTestId('backup-last').innerText()).includes(': ok, '),
      10_000,
      'the last backup shown',
    );
    const link = box.getByTestId('backup-download');
    assert.match(await link.innerText(), listed.items[0].name);
    const [zip] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.is(zip.suggestedFilename(), listed.items[0].name);
    const entries = unzipSync(new Uint8Array(readFileSync(await zip.path())));
    assert.ok('manifest.json' in entries && 'svc.db' in entries, 'a whole backup archive');
    assert.equal(await axe(page, 'status with backups'), []);
    assert.equal(p.errors, [], 'no errors in the page');
  });

  /** A model entry's prices as the API answers them. */
  async function pricesOf(id: string) {
    const r = await api(rig.port, 'GET', '/api/config/models');
    const m = (r.body.items as Array<Record<string, unknown>>).find((x) => x.id === id);
    return m && { prices: m.prices, source: m.prices_source };
  }

  // Last: it changes oa's prices, which the tests above count with.
  test("the model form sets prices per million tokens, showing svc's shipped price, and saves them", async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/settings/models`);
    const row = page.locator('[data-testid=model-entry][data-id="oa"]');
    await row.getByTestId('edit-model').click();
    const form = row.getByTestId('model-form');
    await form.getByText('Advanced').click();
    const field = (name: string) => form.locator(`input[name=price_${name}]`);
    // The entry's own prices fill the fields; svc ships none for a custom server's model.
    assert.is(await field('input').inputValue(), '2');
    assert.is(await field('cached_input').inputValue(), '');
    assert.is(await field('output').inputValue(), '8');
    assert.match(await form.getByTestId('shipped-prices').innerText(), 'svc ships no price');
    // Only one of input and output, with no shipped price to take the other from: a sentence.
    await field('input').fill('');
    await field('output').fill('9');
    await form.getByRole('button', { name: 'Save' }).click();
    assert.match(
      await form.getByRole('alert').innerText(),
      'give both the input and the output price',
    );
    assert.equal(await pricesOf('oa'), { prices: { input: 2, output: 8 }, source: 'config' });
    await field('input').fill('2.5');
    await field('cached_input').fill('0.25');
    await form.getByRole('button', { name: 'Save' }).click();
    await waitFor(
      async () => (await pricesOf('oa'))?.source === 'config' && !(await form.count()),
      10_000,
      'the form saved and closed',
    );
    assert.equal(await pricesOf('oa'), {
      prices: { input: 2.5, cached_input: 0.25, output: 9 },
      source: 'config',
    });

    // A model svc ships a price for: shown, dated, as the placeholders; an empty field takes it.
    await page.getByRole('button', { name: '+ Add a model' }).click();
    const add = page.getByTestId('model-form');
    await add.locator('select[name=provider]').selectOption('anthropic');
    await add.locator('input[name=base_url]').fill(rig.fake.baseUrl('anthropic'));
    await add.locator('input[name=model]').fill('claude-haiku-4-5');
    await add.locator('input[name=api_key]').fill(KEY);
    await add.getByText('Advanced').click();
    const note = await add.getByTestId('shipped-prices').innerText();
    assert.match(note, 'Shipped price for claude-haiku-4-5');
    assert.match(note, /as listed on \d{4}-\d{2}-\d{2}/);
    assert.match(note, 'input $1, cached input $0.1, output $5');
    assert.is(await add.locator('input[name=price_input]').getAttribute('placeholder'), '1');
    assert.is(await add.locator('input[name=price_output]').getAttribute('placeholder'), '5');
    assert.equal(await axe(page, 'model form with prices'), []);
    await add.locator('input[name=price_input]').fill('1.5');
    await add.getByRole('button', { name: 'Add' }).click();
    const saved = await waitFor(
      async () => (await pricesOf('claude-haiku-4-5')) ?? undefined,
      10_000,
      'the new entry',
    );
    // Cache writes (not asked in the form) keep the shipped price too.
    assert.equal(saved, {
      prices: { input: 1.5, cached_input: 0.1, cache_write: 1.25, output: 5 },
      source: 'config',
    });

    // Emptied: the entry's own prices go and the shipped ones apply again.
    const haiku = page.locator('[data-testid=model-entry][data-id="claude-haiku-4-5"]');
    await haiku.getByTestId('edit-model').click();
    const edit = haiku.getByTestId('model-form');
    await edit.getByText('Advanced').click();
    assert.is(await edit.locator('input[name=price_input]').inputValue(), '1.5');
    await edit.locator('input[name=price_input]').fill('');
    await edit.locator('input[name=price_cached_input]').fill('');
    await edit.locator('input[name=price_output]').fill('');
    await edit.getByRole('button', { name: 'Save' }).click();
    await waitFor(
      async () => (await pricesOf('claude-haiku-4-5'))?.source === 'builtin',
      10_000,
      'the shipped price back',
    );
    assert.equal((await pricesOf('claude-haiku-4-5'))?.prices, {
      input: 1,
      cached_input: 0.1,
      cache_write: 1.25,
      output: 5,
    });
    assert.equal(p.errors, [], 'no errors in the page');
  });

  test.run();
}
