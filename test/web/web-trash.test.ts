import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
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
 * The Trash page with more items than one page (issue 22): it shows the first page and the
 * totals, loads the rest as its end scrolls into view (and by "Load more"), and a restore from
 * a later page works.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;
  const titles: string[] = [];

  test.before(async () => {
    rig = await startRig({ models: { oa: { protocol: 'openai' } } });
    await finishOnboarding(rig.port, 'oa');
    for (let i = 0; i < 120; i++) {
      const title = `Paged ${String(i).padStart(3, '0')}`;
      const s = (await api(rig.port, 'POST', '/api/sessions', { title })).body;
      await api(rig.port, 'DELETE', `/api/sessions/${s.id}`);
      titles.push(title);
    }
    browser = await launch();
    p = await newPage(browser);
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  const rows = () => p.page.locator('[data-testid=trash-item]');

  test('the Trash page shows the first page and the totals, then loads more as it scrolls and by Load more', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/settings/trash`);
    await page.getByText(/120 items/).waitFor();
    await rows().first().waitFor();
    const first = await rows().count();
    assert.ok(first >= 50 && first < 120, `one page first (${first} rows)`);
    assert.match(await rows().first().innerText(), /Paged 119/, 'newest first');

    // Scrolling the list's end into view loads the next page.
    await rows().last().scrollIntoViewIfNeeded();
    await page
      .getByTestId('trash-more')
      .scrollIntoViewIfNeeded()
      .catch(() => undefined);
    await waitFor(
      async () => (await rows().count()) > first,
      10_000,
      'a second page to load on scroll',
    );
    // Whatever is left comes by the button (or by scrolling again).
    while ((await page.getByTestId('trash-more').count()) > 0) {
      await page
        .getByTestId('trash-more')
        .click()
        .catch(() => undefined);
      await waitFor(
        async () =>
          (await page.getByTestId('trash-more').count()) === 0 ||
          !(await page.getByTestId('trash-more').isDisabled()),
        10_000,
        'the page to load',
      );
    }
    await waitFor(async () => (await rows().count()) === 120, 10_000, 'every item');
    const shown = await rows().evaluateAll((els) =>
      els.map((e) => e.querySelector('strong')?.textContent ?? ''),
    );
    assert.equal(shown, [...titles].reverse(), 'each item once, newest first');
  });

  test('an item from a later page restores, and leaves the list', async () => {
    const { page } = p;
    const row = rows().filter({ hasText: 'Paged 000' });
    await row.getByRole('button', { name: 'Restore' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText(/119 items/).waitFor();
    const list = (await api(rig.port, 'GET', '/api/sessions?limit=200')).body.items.map(
      (s: { title: string }) => s.title,
    );
    assert.ok(list.includes('Paged 000'));
  });
}

test.run();
