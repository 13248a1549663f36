import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { httpError, textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  screenshotPath,
  finishOnboarding,
  launch,
  newPage,
  type PageRig,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/server.js';
import { KEY, messagesOf, startRig, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The chat in a browser against the real server and the fake provider: tool cards with their
 * results, reasoning, sanitised Markdown, attachments, interrupt, a failed turn's error box (after
 * a reload too), session settings and goal,
 * delete with undo and restore from the trash, the settings and status views, phone width and
 * the dark theme.
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
    await p.page.goto(rig.server.base + '/');
    await p.page.getByTestId('composer-input').waitFor();
  });

  test.after(async () => {
    await p?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await rig?.stop();
  });

  const send = async (text: string) => {
    const input = p.page.getByTestId('composer-input');
    await input.fill(text);
    await input.press('Enter');
  };
  const idle = () =>
    waitFor(
      async () =>
        (await p.page.getByTestId('live-reply').count()) === 0 &&
        (await p.page.getByTestId('send').count()) === 1,
      10_000,
      'the turn to end',
    );
  const currentId = () => /#\/chat\/(s_[A-Za-z0-9_-]+)/.exec(p.page.url())?.[1] ?? '';

  test('a tool call shows as a card with its result; reasoning folds; Shift+Enter makes a new line', async () => {
    const { page } = p;
    rig.fake.enqueue(
      {
        parts: [
          { reasoning: ['The user wants ', 'the time.'] },
          { text: 'Let me look at the clock.' },
          { toolCall: { name: 'current_time', arguments: ['{"time_zone":', '"UTC"}'] } },
        ],
      },
      textReply(
        'It is ',
        'a fine **time** to ship.\n\n',
        '```python\ndef ship():\n    return "now"  # soon\n```\n',
      ),
    );
    const input = page.getByTestId('composer-input');
    await input.fill('What time is it?');
    await input.press('Shift+Enter');
    await input.type('In UTC please.');
    assert.is(
      await input.inputValue(),
      'What time is it?\nIn UTC please.',
      'Shift+Enter adds a line instead of sending',
    );
    await input.press('Enter');

    const card = page.locator('[data-testid=tool-card][data-tool=current_time]');
    await card.and(page.locator('[data-status=done]')).waitFor();
    await idle();
    assert.is(
      (await card.getByTestId('tool-headline').innerText()).replace(/\s+/g, ' '),
      'Checked the time UTC',
      'the headline says what ran, not the tool name and JSON',
    );
    assert.is(await card.getAttribute('open'), '', 'a card of the turn just run is open');
    const output = await card.getByTestId('tool-output').innerText();
    assert.is(JSON.parse(output).time_zone, 'UTC', 'the card shows the tool result');
    await card.locator('summary', { hasText: 'Arguments' }).click();
    assert.match(await card.locator('.tool-args pre').innerText(), /"time_zone": "UTC"/);

    const replies = page.getByTestId('assistant-message');
    assert.is(await replies.count(), 2, 'one reply with the call, one after it');
    const reasoning = replies.first().getByTestId('reasoning');
    assert.is(await reasoning.getAttribute('open'), null, 'committed reasoning is folded');
    await reasoning.locator('summary').click();
    assert.match(await reasoning.innerText(), /The user wants the time\./);
    const last = replies.nth(1);
    assert.is(await last.locator('strong').innerText(), 'time');
    assert.is(await last.locator('.tk-keyword').first().innerText(), 'def');
    assert.is(await last.locator('.tk-comment').innerText(), '# soon');
    assert.is(
      await page.getByTestId('user-message').innerText(),
      'What time is it?\nIn UTC please.',
    );
    // No lite model here: the server titles the chat by its first line, for every client.
    await page
      .getByTestId('chat-title')
      .filter({ hasText: /^What time is it\?$/ })
      .waitFor();
    await page.locator('[data-testid=session-item]', { hasText: 'What time is it?' }).waitFor();
    await waitFor(
      async () =>
        (await api(rig.port, 'GET', `/api/sessions/${currentId()}`)).body.title ===
        'What time is it?',
      10_000,
      'the title on record',
    );
    await page.screenshot({ path: screenshotPath('chat.png') });
  });

  test('a terminal command streams its output into its card while it runs', async () => {
    const { page } = p;
    const command = 'for i in 1 2 3; do echo "line$i"; sleep 1; done';
    rig.fake.enqueue(
      { parts: [{ toolCall: { name: 'terminal', arguments: [JSON.stringify({ command })] } }] },
      textReply('Counted.'),
    );
    await send('Count for me');
    const card = page.locator('[data-testid=tool-card][data-tool=terminal]').last();
    await card
      .and(page.locator('[data-status=running]'))
      .getByTestId('tool-output')
      .filter({ hasText: 'line1' })
      .waitFor();
    assert.not.match(
      await card.getByTestId('tool-output').innerText(),
      /line3/,
      'output shows before the command ends',
    );
    assert.is(
      await card.locator('.tool-subject').innerText(),
      `$ ${command}`,
      'the card names the command while it runs',
    );
    await card.and(page.locator('[data-status=done]')).waitFor();
    await idle();
    assert.match(await card.getByTestId('tool-output').innerText(), /line1[\s\S]*line3/);
    assert.is(await card.getByTestId('tool-status').innerText(), 'exit 0');
    await page.getByTestId('assistant-message').filter({ hasText: 'Counted.' }).waitFor();
    // The fake provider numbers call ids per reply (both calls are call_fake0): each card keeps its own result.
    const clock = await page
      .locator('[data-testid=tool-card][data-tool=current_time]')
      .getByTestId('tool-output')
      .innerText();
    assert.match(clock, /time_zone/);
    assert.not.match(clock, /line1/);
  });

  test('a failed command says its exit status; after a reload, finished cards are folded and open on a click', async () => {
    const { page } = p;
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              name: 'terminal',
              arguments: [JSON.stringify({ command: 'echo oops; exit 3' })],
            },
          },
        ],
      },
      textReply('It failed.'),
    );
    await send('Run the failing command');
    const failed = page.locator('[data-testid=tool-card][data-tool=terminal][data-status=exited]');
    await failed.waitFor();
    await idle();
    assert.is(await failed.getByTestId('tool-status').innerText(), 'exit 3');
    assert.is(await failed.locator('.tool-subject').innerText(), '$ echo oops; exit 3');
    assert.match(await failed.getByTestId('tool-output').innerText(), /oops/);

    await page.reload();
    const counted = page
      .locator('[data-testid=tool-card][data-tool=terminal][data-status=done]')
      .first();
    await counted.waitFor();
    assert.is(await counted.getAttribute('open'), null, 'an older finished card is folded');
    assert.is(await counted.getByTestId('tool-output').isVisible(), false);
    assert.match(await counted.locator('.tool-subject').innerText(), /^\$ for i in 1 2 3/);
    assert.is(await counted.getByTestId('tool-status').innerText(), 'exit 0');
    await counted.locator('summary.tool-head').click();
    await counted.getByTestId('tool-output').filter({ hasText: 'line3' }).waitFor();
    assert.is(await failed.getAttribute('open'), '', 'a failed one stays open, where it is seen');
    await counted.locator('summary', { hasText: 'Arguments' }).click();
    assert.match(await counted.locator('.tool-args pre').innerText(), /"command": "for i in/);
  });

  test('the header names the model that answers and switches it; a lite model titles a new chat after its first reply', async () => {
    const { page } = p;
    const added = await api(rig.port, 'POST', '/api/config/models', {
      id: 'lt',
      provider: 'custom',
      protocol: 'anthropic',
      base_url: rig.fake.baseUrl('anthropic'),
      model: 'fake-lite',
      api_key: KEY,
    });
    assert.is(added.status, 201, JSON.stringify(added.body));
    await api(rig.port, 'PUT', '/api/config/models/lite', { model_id: 'lt' });
    try {
      await page.goto(rig.server.base + '/#/chat');
      await page.getByTestId('composer-input').waitFor();
      rig.fake.enqueue(
        {
          parts: [{ text: ['Paris', ', ', 'of ', 'course', '.', ''] }],
          delayMs: 150,
          match: { stream: true },
        },
        { ...textReply('"Capital of France."'), match: { stream: false } },
      );
      await send('What is the capital of France?\nJust the name.');
      const title = page.getByTestId('chat-title');
      // Until the title arrives, the header shows the first words.
      await title.filter({ hasText: /^What is the capital of France\?$/ }).waitFor();
      await title.filter({ hasText: /^Capital of France$/ }).waitFor({ timeout: 15_000 });
      await page.locator('[data-testid=session-item]', { hasText: 'Capital of France' }).waitFor();
      const id = currentId();
      assert.is(
        (await api(rig.port, 'GET', `/api/sessions/${id}`)).body.title,
        'Capital of France',
      );
      await idle();

      const picker = page.getByTestId('chat-model');
      await waitFor(
        async () =>
          (await picker.locator('option:checked').textContent()) === 'oa · fake (default)',
        10_000,
        'the header to name the default model',
      );
      await picker.selectOption('lt');
      await waitFor(
        async () => (await api(rig.port, 'GET', `/api/sessions/${id}`)).body.model_id === 'lt',
        10_000,
        'the chat to use the lt entry',
      );
      rig.fake.enqueue({
        ...textReply('From the lite entry.'),
        match: { protocol: 'anthropic', stream: true },
      });
      await send('Again, please');
      await page
        .getByTestId('assistant-message')
        .filter({ hasText: 'From the lite entry.' })
        .waitFor();
      await idle();
      assert.is(rig.fake.requests.filter((r) => r.stream).at(-1)?.protocol, 'anthropic');
      await page.reload();
      await waitFor(
        async () => (await page.getByTestId('chat-model').inputValue()) === 'lt',
        10_000,
        'the switch to hold after a reload',
      );
    } finally {
      await api(rig.port, 'PUT', '/api/config/models/lite', { model_id: null });
    }
  });

  test('model output never runs as HTML or script', async () => {
    const { page } = p;
    rig.fake.enqueue(
      textReply(
        'Here: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> ',
        '[click](javascript:window.__pwned=3) [ok](https://example.com/a) <b>bold?</b>\n\n',
        '| a | b |\n|---|---|\n| <i>x</i> | `y` |\n',
      ),
    );
    await send('Try to break the page');
    await idle();
    const last = page.getByTestId('assistant-message').last();
    const text = await last.innerText();
    assert.match(text, /<img src=x onerror="window.__pwned=1">/, 'tags show as text');
    assert.match(text, /<script>window.__pwned=2<\/script>/);
    assert.is(
      await last.locator('img, script, b, i').count(),
      0,
      'no element came from the model text',
    );
    const links = last.locator('a');
    assert.is(await links.count(), 1, 'only the https link is a link');
    assert.is(await links.first().getAttribute('href'), 'https://example.com/a');
    assert.is(await links.first().getAttribute('rel'), 'noopener noreferrer nofollow');
    assert.is(await last.locator('table td code').innerText(), 'y');
    assert.is(await page.evaluate('window.__pwned'), undefined);
  });

  test('a file attached through the clip is uploaded and sent with the message', async () => {
    const { page } = p;
    const file = join(rig.server.home, 'notes.txt');
    writeFileSync(file, 'remember the milk\n');
    rig.fake.enqueue(textReply('Got your notes.'));
    await page.getByTestId('file-input').setInputFiles(file);
    await page.getByTestId('attachment-chip').filter({ hasText: 'notes.txt' }).waitFor();
    await send('Here are my notes');
    await idle();
    const mine = page.getByTestId('user-message').last();
    const link = mine.locator('a.attachment');
    assert.is(
      await link.locator('span').first().innerText(),
      'notes.txt',
      'the file shows under the name it was sent with, not the stored one',
    );
    assert.match((await link.getAttribute('href')) ?? '', /^\/api\/uploads\//);
    assert.is(await page.getByTestId('attachment-chip').count(), 0, 'the composer is cleared');
    const msgs = await messagesOf(rig.port, currentId());
    const user = msgs.filter((m) => m.role === 'user').at(-1);
    assert.is(user.content.attachments?.length, 1, JSON.stringify(user.content));
    assert.is(user.content.attachments[0].original_name, 'notes.txt');
    assert.match(user.content.attachments[0].name, /^\d{8}-\d{6}-[0-9a-z]{6}_notes\.txt$/);
    await page.reload();
    await mine.locator('a.attachment span', { hasText: /^notes\.txt$/ }).waitFor();
  });

  test('a failed turn shows its error box, and the same box after a reload', async () => {
    const { page } = p;
    await page.goto(rig.server.base + '/#/chat');
    await page.getByTestId('composer-input').waitFor();
    rig.fake.enqueue(httpError(401, { message: 'the key was refused for this test' }));
    await send('This one fails');
    const box = page.getByTestId('turn-error');
    await box.waitFor();
    await idle();
    const shown = await box.innerText();
    assert.match(shown, /^The turn failed \(provider_\w+\): /);
    assert.match(shown, /the key was refused for this test/);

    await page.reload();
    await page.getByTestId('user-message').filter({ hasText: 'This one fails' }).waitFor();
    await box.waitFor();
    assert.is(await box.innerText(), shown, 'the same box after a reload');
    assert.is(await box.getAttribute('role'), 'alert');
    assert.is(await page.getByTestId('turn-error').count(), 1);

    // A turn that completes afterwards clears it, after a reload too.
    rig.fake.enqueue(textReply('Working again.'));
    await send('Try again');
    await page.getByTestId('assistant-message').getByText('Working again.').waitFor();
    await idle();
    assert.is(await box.count(), 0);
    await page.reload();
    await page.getByTestId('assistant-message').getByText('Working again.').waitFor();
    assert.is(await box.count(), 0, 'no box for a chat whose last turn completed');
  });

  test('Stop interrupts a streaming reply and keeps what was said, once', async () => {
    const { page } = p;
    const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
    rig.fake.enqueue({ parts: [{ text: words }], delayMs: 100 });
    await send('Talk slowly');
    await page.getByTestId('live-reply').locator('.md').filter({ hasText: 'word2' }).waitFor();
    await page.getByTestId('interrupt').click();
    await page.getByTestId('stopped').first().waitFor();
    await idle();
    await page.getByTestId('assistant-message').last().getByTestId('stopped').waitFor();
    assert.is(await page.getByTestId('stopped').count(), 1, 'one "stopped" mark');
    assert.is(await page.getByText(/Interrupted|\(stopped\)/).count(), 0);
    const last = await page.getByTestId('assistant-message').last().locator('.md').innerText();
    assert.ok(last.startsWith('word0 word1 word2'), last);
    assert.ok(!last.includes('word59'), 'the reply was cut short');
    const saved = (await messagesOf(rig.port, currentId()))
      .filter((m) => m.role === 'assistant')
      .at(-1);
    assert.is(saved.content.text.trim(), last.trim(), 'the page shows exactly what was kept');
    assert.is((last.match(/\bword0\b/g) ?? []).length, 1, 'shown once');
  });

  test('Stop while a tool call runs: one "stopped" mark, still one after a reload, and the card no longer runs', async () => {
    const { page } = p;
    await page.goto(rig.server.base + '/#/chat');
    await page.getByTestId('composer-input').waitFor();
    const command = 'echo started; sleep 30';
    rig.fake.enqueue(
      { parts: [{ toolCall: { name: 'terminal', arguments: [JSON.stringify({ command })] } }] },
      textReply('never asked for'),
    );
    await send('Wait for the long command');
    const card = page.locator('[data-testid=tool-card][data-tool=terminal]').last();
    await card
      .and(page.locator('[data-status=running]'))
      .getByTestId('tool-output')
      .filter({ hasText: 'started' })
      .waitFor();
    await page.getByTestId('interrupt').click();
    await page.getByTestId('stopped').first().waitFor();
    await idle();
    assert.is(await page.getByTestId('stopped').count(), 1, 'one "stopped" mark');
    const id = currentId();

    await page.reload();
    await page
      .getByTestId('user-message')
      .filter({ hasText: 'Wait for the long command' })
      .waitFor();
    await card.waitFor();
    await page.getByTestId('stopped').first().waitFor();
    assert.is(await page.getByTestId('stopped').count(), 1, 'one "stopped" mark after a reload');
    const status = await card.getAttribute('data-status');
    assert.ok(
      status === 'error' || status === 'exited',
      `the stopped call is not running: ${status}`,
    );
    assert.match(await card.getByTestId('tool-output').innerText(), /the turn was stopped/);
    assert.is(currentId(), id);
  });

  test('session settings and the goal are changed from the side panel', async () => {
    const { page } = p;
    const id = currentId();
    await page.getByTestId('session-settings-toggle').click();
    const form = page.getByTestId('session-settings');
    await form.locator('input').first().fill('Clock questions');
    await form.getByTestId('permission-mode').selectOption('strict');
    await form.locator('select').nth(1).selectOption('high');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Saved.').waitFor();
    const s = (await api(rig.port, 'GET', `/api/sessions/${id}`)).body;
    assert.equal(
      [s.title, s.permission_mode, s.reasoning_effort],
      ['Clock questions', 'strict', 'high'],
    );
    await page.locator('.chat-head h2', { hasText: 'Clock questions' }).waitFor();
    await page.locator('[data-testid=session-item]', { hasText: 'Clock questions' }).waitFor();

    const bad = await form.locator('input[placeholder^="/absolute"]');
    await bad.fill('relative/folder');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.error', { hasText: 'absolute' }).waitFor();
    await bad.fill('');

    const goal = page.getByTestId('goal-panel');
    await goal.locator('textarea').fill('Ship the release');
    await goal.locator('input[type=number]').fill('50000');
    await goal.getByRole('button', { name: 'Set goal' }).click();
    await goal.getByTestId('goal-status').filter({ hasText: 'active' }).waitFor();
    await page.getByTestId('goal-chip').filter({ hasText: 'Goal: active' }).waitFor();
    assert.match(await page.getByTestId('goal-chip').innerText(), /\/50\.0k/);
    await goal.getByRole('button', { name: 'Pause' }).click();
    await goal.getByTestId('goal-status').filter({ hasText: 'paused' }).waitFor();
    const g = (await api(rig.port, 'GET', `/api/sessions/${id}/goal`)).body;
    assert.equal([g.objective, g.status, g.token_budget], ['Ship the release', 'paused', 50000]);
    await page.keyboard.press('Escape');
    await page.getByTestId('session-side').waitFor({ state: 'detached' });
  });

  test('delete a chat and undo it; delete it again and restore it from the trash view', async () => {
    const { page } = p;
    const id = currentId();
    const before = (await messagesOf(rig.port, id)).length;
    const item = page.locator(`[data-testid=session-item][data-id="${id}"]`);
    await item.getByRole('button', { name: /^Delete/ }).click();
    await item.waitFor({ state: 'detached' });
    assert.is(
      (await api(rig.port, 'GET', `/api/sessions/${id}`)).status,
      404,
      'deleted on the server',
    );
    await page.getByTestId('toast').getByRole('button', { name: 'Undo' }).click();
    await item.waitFor();
    await waitFor(() => currentId() === id, 5000, 'the restored chat to open');
    await page.locator('.chat-head h2', { hasText: 'Clock questions' }).waitFor();
    assert.is((await messagesOf(rig.port, id)).length, before, 'every message came back');
    assert.is((await page.getByTestId('assistant-message').count()) > 0, true);

    await item.getByRole('button', { name: /^Delete/ }).click();
    await item.waitFor({ state: 'detached' });
    // The trash holds it before the trash view is opened (as it would by the time a person gets there).
    await waitFor(
      async () =>
        (await api(rig.port, 'GET', '/api/trash')).body.items.some(
          (t: { name: string }) => t.name === 'Clock questions',
        ),
      10_000,
      'the chat to be in the trash',
    );
    await page.goto(rig.server.base + '/#/settings/trash');
    const row = page.locator('[data-testid=trash-item]', { hasText: 'Clock questions' });
    await row.getByRole('button', { name: 'Restore' }).click();
    await row.waitFor({ state: 'detached' });
    assert.is((await api(rig.port, 'GET', `/api/sessions/${id}`)).status, 200);
    await page.goto(rig.server.base + `/#/chat/${id}`);
    await page.locator(`[data-testid=session-item][data-id="${id}"]`).waitFor();
    await page.locator('.chat-head h2', { hasText: 'Clock questions' }).waitFor();
  });

  test('the trash view deletes for good and empties', async () => {
    const { page } = p;
    const a = (await api(rig.port, 'POST', '/api/sessions', { title: 'Throwaway A' })).body.id;
    const b = (await api(rig.port, 'POST', '/api/sessions', { title: 'Throwaway B' })).body.id;
    await api(rig.port, 'DELETE', `/api/sessions/${a}`);
    await api(rig.port, 'DELETE', `/api/sessions/${b}`);
    await page.goto(rig.server.base + '/#/settings/trash');
    const rowA = page.locator('[data-testid=trash-item]', { hasText: 'Throwaway A' });
    // "For good" is asked in the app's dialog: Cancel keeps the item.
    const ask = page.getByTestId('trash-confirm');
    await rowA.getByRole('button', { name: 'Delete' }).click();
    await ask.getByText('Delete "Throwaway A" for good?').waitFor();
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    assert.is(await rowA.count(), 1, 'kept');
    await rowA.getByRole('button', { name: 'Delete' }).click();
    await ask.getByRole('button', { name: 'Delete for good' }).click();
    await rowA.waitFor({ state: 'detached' });
    await page.locator('[data-testid=trash-item]', { hasText: 'Throwaway B' }).waitFor();
    await page.getByRole('button', { name: 'Empty the trash' }).click();
    await ask.getByText('Delete everything in the trash for good?').waitFor();
    await ask.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByText('The trash is empty.').waitFor();
    assert.is((await api(rig.port, 'GET', '/api/trash')).body.items.length, 0);
  });

  test('settings show the model entries, the tools and the profile; status shows the processes', async () => {
    const { page } = p;
    await page.goto(rig.server.base + '/#/settings/models');
    const entry = page.locator('[data-testid=model-entry][data-id=oa]');
    await entry.waitFor();
    assert.match(await entry.innerText(), /default/);
    await entry.getByRole('button', { name: 'Test' }).click();
    await entry.locator('[data-testid=test-result][data-ok=true]').waitFor();
    // Removing an entry asks in the app's dialog (the lt entry of the model test above).
    const lt = page.locator('[data-testid=model-entry][data-id=lt]');
    const confirmRemove = page.getByTestId('model-remove-confirm');
    await lt.getByRole('button', { name: 'Remove' }).click();
    await confirmRemove.getByText('Remove the model entry lt?').waitFor();
    await page.keyboard.press('Escape');
    await confirmRemove.waitFor({ state: 'detached' });
    assert.is(await lt.count(), 1, 'Escape keeps it');
    await lt.getByRole('button', { name: 'Remove' }).click();
    await confirmRemove.getByRole('button', { name: 'Remove' }).click();
    await lt.waitFor({ state: 'detached' });
    assert.is((await api(rig.port, 'GET', '/api/config/models')).body.items.length, 1);

    await page.goto(rig.server.base + '/#/settings/tools');
    await page.locator('[data-testid=tool-info]', { hasText: 'current_time' }).waitFor();

    await page.goto(rig.server.base + '/#/settings/profile');
    await page.getByTestId('profile-form').waitFor();
    await page.locator('textarea[name=user]').fill('I like short answers.');
    await page.getByTestId('profile-form').getByRole('button', { name: 'Save profile' }).click();
    await page.getByTestId('profile-form').getByText('Saved.').waitFor();
    await page.reload();
    await waitFor(
      async () =>
        (await page.locator('textarea[name=user]').inputValue()) === 'I like short answers.',
      10_000,
      'the saved user.md to load',
    );
    await page.getByTestId('profile-panel').locator('h2', { hasText: 'Memory' }).waitFor();

    await page.goto(rig.server.base + '/#/status');
    await page.locator('[data-testid=process-row]', { hasText: 'gateway' }).waitFor();
    await page.locator('[data-testid=process-row]', { hasText: 'supervisor' }).waitFor();
    assert.is(await page.getByTestId('server-state').innerText(), 'running');
    const version = (await api(rig.port, 'GET', '/api/version')).body.version;
    assert.is(await page.getByTestId('server-version').innerText(), version);

    // Restart asks in the app's own dialog (never the browser's confirm()); Cancel changes nothing.
    let native = 0;
    const count = () => void native++;
    page.on('dialog', count);
    try {
      const restarts = async () => (await api(rig.port, 'GET', '/api/status')).body.restarts ?? 0;
      const before = await restarts();
      await page.getByRole('button', { name: 'Restart server' }).click();
      const ask = page.getByTestId('restart-confirm');
      await ask.getByText('Restart the server?').waitFor();
      assert.match(await ask.innerText(), /Running turns finish first/);
      assert.match(await ask.innerText(), /Escape cancels\./);
      assert.is(
        await page.evaluate('document.activeElement?.textContent'),
        'Cancel',
        'focus starts on the safe choice',
      );
      await page.keyboard.press('Escape');
      await ask.waitFor({ state: 'detached' });
      assert.is(await restarts(), before, 'no restart');
      await page.getByRole('button', { name: 'Restart server' }).click();
      await ask.getByRole('button', { name: 'Restart', exact: true }).click();
      await ask.waitFor({ state: 'detached' });
      await waitFor(async () => (await restarts()) === before + 1, 60_000, 'the restart');
      await page
        .getByTestId('server-state')
        .filter({ hasText: /^running$/ })
        .waitFor();
      assert.is(native, 0, 'no native dialog');
    } finally {
      page.off('dialog', count);
    }
    assert.equal(p.errors, [], 'no errors in the page');
  });

  test('"?" lists the keyboard shortcuts (not while typing), and Escape closes the list', async () => {
    const { page } = p;
    await page.goto(rig.server.base + '/#/chat');
    const input = page.getByTestId('composer-input');
    await input.fill('Why');
    await input.press('?');
    assert.is(await input.inputValue(), 'Why?', 'a "?" typed in the message box is text');
    assert.is(await page.getByTestId('shortcuts').count(), 0);
    await input.fill('');
    await page.locator('main#main').focus();
    await page.keyboard.press('?');
    const list = page.getByTestId('shortcuts');
    await list.getByRole('heading', { name: 'Keyboard shortcuts' }).waitFor();
    const text = await list.innerText();
    for (const what of ['Search all chats', 'Send the message', 'deny the tool call'])
      assert.match(text, what);
    await page.keyboard.press('Escape');
    await list.waitFor({ state: 'detached' });
    assert.is(
      await page.evaluate('document.activeElement?.id'),
      'main',
      'focus goes back where it was',
    );
  });

  test('a reply and a tool output over 4 KB show whole, though /ws carried them cut', async () => {
    const { page } = p;
    const reply = `${Array.from({ length: 30 }, (_, i) => `Paragraph ${i}: ${'plenty of words, ça va '.repeat(20)}`).join('\n\n')}\n\nREPLY-END`;
    await page.goto(rig.server.base + '/#/chat');
    await page.getByTestId('composer-input').waitFor();
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              name: 'terminal',
              arguments: [JSON.stringify({ command: 'seq 1 3000; echo OUTPUT-END' })],
            },
          },
        ],
      },
      textReply(reply.slice(0, 5000), reply.slice(5000)),
    );
    await send('Count far and tell me at length');
    await page.getByTestId('assistant-message').filter({ hasText: 'REPLY-END' }).waitFor();
    await idle();
    const id = currentId();
    const messages = await messagesOf(rig.port, id);
    const tool = messages.filter((m) => m.role === 'tool').at(-1);
    const output = String(tool.content.output);
    assert.ok(
      output.length > 4096 && output.includes('OUTPUT-END'),
      `the whole output is on record (${output.length} characters)`,
    );
    assert.is(messages.at(-1).content.text, reply);
    // The card holds the whole output (its length is what "Show all" counts), and shows its end once opened.
    const card = page.locator('[data-testid=tool-card][data-tool=terminal]').last();
    await card.getByRole('button', { name: `Show all ${output.length} characters` }).click();
    await card.getByTestId('tool-output').filter({ hasText: 'OUTPUT-END' }).waitFor();
    const shown = await page.getByTestId('assistant-message').last().innerText();
    assert.ok(
      shown.includes('Paragraph 0:') &&
        shown.includes('Paragraph 29:') &&
        shown.includes('REPLY-END'),
      'the whole reply is on the page',
    );
  });

  test('a long chat opens at its newest message, then holds every message in order; Home scrolls to the first', async () => {
    const { page } = p;
    const id = (await api(rig.port, 'POST', '/api/sessions', { title: 'Long history' })).body
      .id as string;
    for (let i = 0; i < 40; i++) {
      rig.fake.enqueue(textReply(`Reply number ${i}.\n\nWith a second paragraph.`));
      const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, {
        message: `Question ${i}`,
        attachments: [],
      });
      assert.is(r.status, 200, JSON.stringify(r.body));
    }
    await page.goto(`${rig.server.base}/#/chat/${id}`);
    await page.getByTestId('assistant-message').filter({ hasText: 'Reply number 39.' }).waitFor();
    const transcript = page.getByTestId('transcript');
    await waitFor(
      async () =>
        (await page.getByTestId('user-message').count()) === 40 &&
        (await page.getByTestId('assistant-message').count()) === 40,
      30_000,
      'every message to be in the page',
    );
    const asked = (await page.getByTestId('user-message').allTextContents()).map((t) => t.trim());
    assert.equal(
      asked,
      Array.from({ length: 40 }, (_, i) => `Question ${i}`),
      'all there, oldest first',
    );
    await waitFor(
      async () =>
        transcript.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 80),
      5000,
      'the newest message in view',
    );
    await transcript.focus();
    await page.keyboard.press('Home');
    const first = page.getByTestId('user-message').first();
    await waitFor(
      async () =>
        (await transcript.evaluate((el) => el.scrollTop === 0)) &&
        (await first.evaluate((m) => {
          const r = m.getBoundingClientRect();
          return (
            r.height > 0 && r.top >= 0 && r.bottom <= m.ownerDocument.documentElement.clientHeight
          );
        })),
      5000,
      'the first message in view',
    );

    // A reply streamed in paragraphs into the long chat reads as written, and the new messages
    // leave the oldest ones as they were (not taken out of the page and drawn again).
    await first.evaluate((el) => el.setAttribute('data-kept', 'yes'));
    rig.fake.enqueue(
      textReply('Streamed one.\n\n', 'Streamed ', 'two.\n\n', '```\ncode\n\nmore\n```\n', 'Tail.'),
    );
    await send('And now?');
    await idle();
    assert.is(
      await page.getByTestId('user-message').first().getAttribute('data-kept'),
      'yes',
      'the first message is the same element',
    );
    const md = page.getByTestId('assistant-message').last().locator('.md');
    assert.equal(await md.locator('p').allTextContents(), [
      'Streamed one.',
      'Streamed two.',
      'Tail.',
    ]);
    assert.is((await md.locator('pre').textContent())?.trim(), 'code\n\nmore');
  });

  test('a streaming reply stays in view while the reader is at the bottom; scrolled up, it lets them read; back down, it follows again', async () => {
    const { page } = p;
    await page.goto(`${rig.server.base}/#/`);
    await page.getByTestId('composer-input').waitFor();
    const lines = Array.from({ length: 600 }, (_, i) => `line${i}\n\n`);
    rig.fake.enqueue({ parts: [{ text: lines }], delayMs: 40 });
    await send('Write many lines');
    const transcript = page.getByTestId('transcript');
    const live = page.getByTestId('live-reply');
    // From the bottom of the transcript to the bottom of what it shows (px).
    const below = () =>
      transcript.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight);
    const streamed = async () =>
      Number(/line(\d+)\D*$/.exec((await live.innerText()) || '')?.[1] ?? -1);
    await waitFor(
      async () =>
        (await live.count()) === 1 &&
        (await streamed()) >= 40 &&
        (await transcript.evaluate((el) => el.scrollHeight > el.clientHeight * 2)) &&
        (await below()) < 80,
      20_000,
      'the newest streamed line in view while the reply grows past the screen',
    );
    // The reader scrolls up: the stream no longer pulls them down.
    await transcript.hover();
    await page.mouse.wheel(0, -3000);
    await waitFor(async () => (await below()) > 300, 5000, 'the transcript scrolled up');
    const from = await streamed();
    await waitFor(
      async () => (await streamed()) >= from + 20,
      20_000,
      'more of the reply streamed',
    );
    assert.ok((await below()) > 300, 'the reader was not pulled back to the bottom');
    // Back at the bottom, the stream is followed again.
    await page.mouse.wheel(0, 100_000);
    await waitFor(async () => (await below()) < 80, 5000, 'the transcript back at the bottom');
    const back = await streamed();
    await waitFor(
      async () => (await streamed()) >= back + 20 && (await below()) < 80,
      20_000,
      'the newest line in view again as the reply grows',
    );
    // Scrolled up again when the reply is stopped and committed: still left where they are.
    await page.mouse.wheel(0, -3000);
    await waitFor(async () => (await below()) > 300, 5000, 'the transcript scrolled up again');
    await page.getByTestId('interrupt').click();
    await idle();
    assert.ok((await below()) > 300, 'nor when the reply was committed');
  });

  test('phone width: the chat list is a drawer and the composer stays usable; dark theme follows the system', async () => {
    const phone = await newPage(browser, {
      viewport: { width: 390, height: 780 },
      colorScheme: 'dark',
    });
    try {
      const { page } = phone;
      await page.goto(rig.server.base + '/#/chat');
      await page.getByTestId('composer-input').waitFor();
      const list = page.locator('.session-list');
      const box = await list.boundingBox();
      assert.ok(!box || box.x + box.width <= 1, `the list is off screen: ${JSON.stringify(box)}`);
      await page.getByRole('button', { name: 'Show chats' }).click();
      await waitFor(
        async () => ((await list.boundingBox())?.x ?? -1) >= 0,
        3000,
        'the drawer to open',
      );
      const width = await page.evaluate('document.documentElement.scrollWidth');
      assert.ok((width as number) <= 390, `no sideways scrolling (${width})`);
      const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
      assert.is(bg, 'rgb(21, 23, 27)', 'the dark palette is used');
      assert.equal(phone.errors, []);
    } finally {
      await phone.close();
    }
  });
}

test.run();
