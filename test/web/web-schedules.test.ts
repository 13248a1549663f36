import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { axe } from '../helpers/a11y.js';
import { api } from '../helpers/api.js';
import {
  assistantTexts,
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
 * The Schedules page in headless Chromium against the real server: create a task with a cron
 * expression and read its preview (and a bad one's error), run it now and follow the run history
 * to its session, disable and enable it, edit its schedule, and delete it to the trash.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let browser: Browser;
  let p: PageRig;

  test.before(async () => {
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
  });

  const card = () => p.page.locator('[data-testid="schedule"][data-name="Weekday brief"]');

  test('the nav leads to Schedules; a new task shows a readable preview with the next time, and a bad expression its error', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByText('No scheduled task yet').waitFor();
    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.locator('[data-testid="schedule-form"]');
    await form.getByRole('textbox', { name: 'Name' }).fill('Weekday brief');
    const expr = form.getByRole('textbox', { name: 'Schedule', exact: true });
    await expr.fill('every morning');
    const preview = form.locator('[data-testid="schedule-preview"]');
    await preview.locator('.error').waitFor();
    assert.match(await preview.innerText(), /schedule/);
    // A preset fills the field; the preview says it in words with the next three runs.
    await form.getByRole('textbox', { name: 'Time zone' }).fill('Europe/Berlin');
    const weekdays = form.getByRole('button', { name: 'Weekdays at 9' });
    await weekdays.click();
    assert.is(await expr.inputValue(), '0 9 * * 1-5');
    assert.is(await weekdays.getAttribute('aria-pressed'), 'true');
    await preview.getByText('At 09:00, Monday through Friday.').waitFor();
    const day = '(Mon|Tue|Wed|Thu|Fri) \\d{1,2} [A-Z][a-z]{2} 09:00';
    assert.match(
      await preview.getByTestId('schedule-next-runs').innerText(),
      new RegExp(`^Next runs: ${day} · ${day} · ${day}$`),
    );
    assert.equal(await axe(page, 'schedule form'), []);
    // Typed by hand, the preview follows as the expression changes.
    await expr.fill('0 * * * *');
    await preview.getByText('Every hour.').waitFor();
    assert.is(
      await form.getByRole('button', { name: 'Every hour' }).getAttribute('aria-pressed'),
      'true',
    );
    await expr.fill('0 9 * * 1-5');
    await preview.getByText('At 09:00, Monday through Friday.').waitFor();
    await form.getByRole('textbox', { name: 'Prompt' }).fill('Write the morning brief.');
    await form.getByRole('button', { name: 'Create' }).click();
    await card().waitFor();
    assert.match(
      await card().locator('[data-testid="schedule-when"]').innerText(),
      /At 09:00, Monday through Friday 0 9 \* \* 1-5 \(Europe\/Berlin\)/,
    );
    assert.match(
      await card().locator('[data-testid="schedule-next"]').innerText(),
      /^Next: (Mon|Tue|Wed|Thu|Fri) \d{1,2} [A-Z][a-z]{2} 09:00/,
    );
    const [t] = (await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items;
    assert.equal(
      [t.name, t.timezone, t.prompt, t.enabled],
      ['Weekday brief', 'Europe/Berlin', 'Write the morning brief.', true],
    );
  });

  test('run now: the run appears in the history with a link to its session, which shows the reply', async () => {
    const { page } = p;
    rig.fake.enqueue(textReply('Here is your morning brief.'));
    await card().getByRole('button', { name: 'Run now' }).click();
    await card().getByText('Run history').click();
    const run = card().locator('[data-testid="run"][data-status="completed"]');
    await run.waitFor();
    assert.match(await run.innerText(), /manual/);
    await run.getByRole('link', { name: 'Open session' }).click();
    await waitFor(
      async () => (await assistantTexts(page)).includes('Here is your morning brief.'),
      15_000,
      "the run's reply in its session",
    );
    assert.match(page.url(), /#\/chat\/s_/);
  });

  test('disable and enable; edit the schedule; delete to the trash', async () => {
    const { page } = p;
    await page.getByRole('link', { name: 'Schedules', exact: true }).click();
    await card().getByRole('button', { name: 'Disable' }).click();
    await card().getByText('Not scheduled while disabled').waitFor();
    assert.is((await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items[0].enabled, false);
    await card().getByRole('button', { name: 'Enable' }).click();
    await card()
      .locator('[data-testid="schedule-next"]', { hasText: /^Next: / })
      .waitFor();
    await card().getByRole('button', { name: 'Edit' }).click();
    const form = card().locator('[data-testid="schedule-form"]');
    await form.getByRole('textbox', { name: 'Schedule', exact: true }).fill('*/30 * * * *');
    await form
      .locator('[data-testid="schedule-preview"]')
      .getByText(/^Every 30 minutes\.$/)
      .waitFor();
    await form.getByRole('button', { name: 'Save' }).click();
    await card()
      .locator('[data-testid="schedule-when"]', { hasText: 'Every 30 minutes' })
      .waitFor();
    assert.is(
      (await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items[0].schedule,
      '*/30 * * * *',
    );
    await card().getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No scheduled task yet').waitFor();
    const trash = await api(rig.port, 'GET', '/api/trash');
    assert.ok(
      trash.body.items.some((i: any) => i.kind === 'cron_task' && i.name === 'Weekday brief'),
    );
    assert.equal(p.errors, []);
  });
}

test.run();
