import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startFakeTelegram, type FakeTelegram } from '../fixtures/fake-telegram.js';
import { platformNames } from '../../src/shared/config/channels.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { newChat, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Cron notify targets end to end: Telegram connected through the real API (the channels worker
 * talking to the fake Bot API), a cron task with a telegram notify target, and a run whose result
 * (and the approval it asks for) arrives in that chat, recorded on the run. A target for a
 * platform that is not connected is a 400 naming the field; a chat that cannot be reached is
 * recorded on the run and fails nothing.
 */

const TOKEN = '123456789:AAHsvcFakeTokenForCronNotify_abcXYZ';
const CHAT = '7373';

let rig: TurnRig;
let tg: FakeTelegram;

test.before(async () => {
  tg = await startFakeTelegram(TOKEN);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});
test.after(async () => {
  await rig?.stop();
  await tg?.close();
});

const runsOf = async (id: string) => {
  const r = await api(rig.port, 'GET', `/api/tasks/${id}/runs`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  return r.body.items as any[];
};
/** Starts a run now and waits until it has ended and `n` notify results are recorded on it. */
const runAndNotify = async (taskId: string, n: number) => {
  const r = await api(rig.port, 'POST', `/api/tasks/${taskId}/run`);
  assert.is(r.status, 202, JSON.stringify(r.body));
  const run = await waitFor(
    async () => {
      const x = (await runsOf(taskId)).find((y) => y.id === r.body.run_id);
      return x && x.status !== 'running' && x.notify_results.length >= n ? x : undefined;
    },
    30_000,
    `the run to end with ${n} notify results`,
  );
  return { run, sessionId: r.body.session_id as string };
};
const chatTexts = (chat: string) => tg.chat(chat).map((m) => m.text);

test('a notify target for a platform that is not connected is a 400 naming the field', async () => {
  const cases: Array<[unknown[], string]> = [
    [[{ platform: 'telegram', chat_id: CHAT }], 'notify.0.platform'],
    [
      [
        { platform: 'telegram', chat_id: CHAT },
        { platform: 'messenger', chat_id: 'x' },
      ],
      'notify.0.platform',
    ],
    [[{ platform: 'slack', chat_id: 'C1' }], 'notify.0.platform'],
  ];
  for (const [notify, field] of cases) {
    const r = await api(rig.port, 'POST', '/api/tasks', {
      kind: 'cron',
      name: 'n',
      schedule: '@daily',
      prompt: 'p',
      notify,
    });
    assert.is(r.status, 400, JSON.stringify(r.body));
    assert.is(r.body.error.code, 'invalid_request');
    assert.match(r.body.error.message, `${field}:`);
    assert.match(r.body.error.message, 'not a connected channel');
  }
  const irc = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'n',
    schedule: '@daily',
    prompt: 'p',
    notify: [{ platform: 'irc', chat_id: 'C1' }],
  });
  assert.is(irc.status, 400);
  assert.match(irc.body.error.message, `svc knows ${platformNames.join(', ')}`);
  assert.equal(
    (await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items,
    [],
    'nothing was created',
  );
});

test("telegram connected through the API: the task is accepted and a run's result arrives in the chat, recorded on the run", async () => {
  const saved = await api(rig.port, 'POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/telegram')).body.state === 'running',
    20_000,
    'telegram running',
  );

  // A target on a connected platform is accepted now; one on another platform still is not.
  const other = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'n',
    schedule: '@daily',
    prompt: 'p',
    notify: [
      { platform: 'telegram', chat_id: CHAT },
      { platform: 'messenger', chat_id: 'x' },
    ],
  });
  assert.is(other.status, 400, JSON.stringify(other.body));
  assert.match(other.body.error.message, 'notify.1.platform:');
  assert.match(other.body.error.message, 'connected: telegram');

  rig.fake.enqueue(textReply('The kettle ', 'is on: **tea** at five.'));
  const created = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Tea time',
    schedule: '0 17 * * *',
    prompt: 'Remind me of tea.',
    enabled: false,
    notify: [{ platform: 'telegram', chat_id: CHAT }],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.notify, [{ platform: 'telegram', chat_id: CHAT }]);
  const { run } = await runAndNotify(created.body.id, 1);
  assert.is(run.status, 'completed', JSON.stringify(run));

  // What the user sees in Telegram: one message to that chat, the task's name and the model's reply (Markdown rendered).
  const sent = tg.chat(CHAT);
  assert.is(sent.length, 1, JSON.stringify(chatTexts(CHAT)));
  assert.match(sent[0]!.text, 'Tea time');
  assert.match(sent[0]!.text, 'The kettle is on: <b>tea</b> at five.');
  assert.is(sent[0]!.parse_mode, 'HTML');
  assert.ok(
    tg.calls.some(
      (c) => c.method === 'sendMessage' && String(c.body.chat_id) === CHAT && c.status === 200,
    ),
  );
  // And the run records it: delivered, with Telegram's message id.
  assert.is(run.notify_results.length, 1);
  const [n] = run.notify_results;
  assert.equal(
    [n.kind, n.platform, n.chat_id, n.ok, n.message_id, n.error],
    ['result', 'telegram', CHAT, true, String(sent[0]!.message_id), undefined],
  );
  // The token never shows in what the API answers.
  assert.not.ok(JSON.stringify(run).includes(TOKEN));
  assert.not.ok(JSON.stringify(created.body).includes(TOKEN));
});

test('an approval asked during a run reaches the notify target; the denial and the result follow', async () => {
  const work = mkdtempSync(join(tmpdir(), 'svc-cron-notify-'));
  const chat = '8181';
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'c1',
            name: 'terminal',
            arguments: [JSON.stringify({ command: 'curl --version >/dev/null 2>&1; echo asked' })],
          },
        },
      ],
      stop: 'tool_use',
    },
    textReply('Went on without curl.'),
  );
  const t = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Fetcher',
    schedule: '0 0 1 1 *',
    prompt: 'fetch it',
    enabled: false,
    permission_mode: 'interactive',
    working_dir: work,
    approval_timeout_seconds: 3,
    notify: [{ platform: 'telegram', chat_id: chat }],
  });
  assert.is(t.status, 201, JSON.stringify(t.body));
  const { run, sessionId } = await runAndNotify(t.body.id, 2);
  assert.is(run.status, 'completed', JSON.stringify(run));
  assert.equal(
    run.approvals.map((a: any) => [a.tool, a.decision]),
    [['terminal', 'deny']],
  );
  const texts = chatTexts(chat);
  assert.is(texts.length, 2, JSON.stringify(texts));
  assert.match(texts[0]!, 'Fetcher asks to use terminal');
  assert.match(texts[0]!, sessionId);
  assert.match(texts[1]!, 'Went on without curl.');
  assert.equal(run.notify_results.map((r: any) => [r.kind, r.chat_id, r.ok]).sort(), [
    ['approval', chat, true],
    ['result', chat, true],
  ]);
  rmSync(work, { recursive: true, force: true });
});

test("a chat Telegram refuses is recorded on the run with the platform's reason; the run still completes", async () => {
  const lost = '-1004041';
  rig.fake.enqueue(textReply('Nobody will read this.'));
  const t = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Lost',
    schedule: '0 0 1 1 *',
    prompt: 'p',
    enabled: false,
    notify: [
      { platform: 'telegram', chat_id: lost },
      { platform: 'telegram', chat_id: CHAT },
    ],
  });
  assert.is(t.status, 201, JSON.stringify(t.body));
  const before = tg.chat(CHAT).length;
  const { run } = await runAndNotify(t.body.id, 2);
  assert.is(run.status, 'completed');
  const byChat = Object.fromEntries(run.notify_results.map((r: any) => [r.chat_id, r]));
  assert.is(byChat[lost].ok, false);
  assert.match(byChat[lost].error, 'chat not found');
  assert.not.ok(byChat[lost].error.includes(TOKEN), 'the token is not in the recorded error');
  assert.is(byChat[CHAT].ok, true, 'the other target still got it');
  assert.is(tg.chat(CHAT).length, before + 1);
  assert.match(tg.chat(CHAT).at(-1)!.text, 'Nobody will read this.');
});

test('a one-second schedule fires and its result is delivered without anyone pressing run', async () => {
  const chat = '9191';
  rig.fake.enqueue(textReply('Fired on schedule.'));
  const t = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Ticker',
    schedule: '* * * * * *',
    prompt: 'tick',
    notify: [{ platform: 'telegram', chat_id: chat }],
  });
  assert.is(t.status, 201, JSON.stringify(t.body));
  const msg = await waitFor(() => tg.chat(chat)[0], 30_000, 'a message from the scheduled run');
  assert.is(
    (await api(rig.port, 'PATCH', `/api/tasks/${t.body.id}`, { enabled: false })).status,
    200,
  );
  assert.match(msg.text, 'Fired on schedule.');
  const run = await waitFor(
    async () =>
      (await runsOf(t.body.id)).find(
        (r) =>
          r.status !== 'running' &&
          r.notify_results.some((n: any) => n.ok && n.chat_id === chat && n.kind === 'result'),
      ),
    20_000,
    'the run recording the delivery',
  );
  assert.ok(['schedule', 'catch_up'].includes(run.trigger), run.trigger);
});

test('a budget warning goes to the chats the schedules notify, once per limit and period', async () => {
  const chat = '5151';
  // An enabled schedule (its time far off) that notifies this chat.
  const t = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Watcher',
    schedule: '0 0 1 1 *',
    prompt: 'watch',
    notify: [{ platform: 'telegram', chat_id: chat }],
  });
  assert.is(t.status, 201, JSON.stringify(t.body));
  // A daily limit 1M tokens above what today spent so far; one call of 850k crosses 80 % of it.
  const probe = await api(rig.port, 'PUT', '/api/budgets', { daily: { tokens: 1e12 } });
  assert.is(probe.status, 200, JSON.stringify(probe.body));
  const spent = probe.body.states.find((x: any) => x.key === 'daily').spent as number;
  await api(rig.port, 'PUT', '/api/budgets', { daily: { tokens: spent + 1_000_000 } });
  const id = await newChat(rig.port);
  const turn = async (reply: Parameters<typeof rig.fake.enqueue>[0]) => {
    rig.fake.enqueue(reply);
    const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'go' });
    assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  };
  await turn({ parts: [{ text: 'A big answer.' }], usage: { input: 850_000, output: 10 } });
  const warning = await waitFor(
    () => tg.chat(chat).find((m) => m.text.includes('budget warning')),
    20_000,
    'the warning in the chat',
  );
  assert.match(warning.text, 'The daily budget (budgets.daily: ');
  assert.match(warning.text, /has spent [\d,]+ tokens, (8\d|9\d) % of it/);
  assert.match(warning.text, 'It resets at ');
  // Another call past 80 % warns no more; the task's run, whose result reaches the same chat
  // after that, shows nothing else came.
  await turn({ parts: [{ text: 'A small one.' }], usage: { input: 10, output: 1 } });
  rig.fake.enqueue(textReply('Watched.'));
  await runAndNotify(t.body.id, 1);
  const texts = chatTexts(chat);
  assert.is(texts.filter((x) => x.includes('budget warning')).length, 1, JSON.stringify(texts));
  assert.match(texts.at(-1)!, 'Watched.');
  await api(rig.port, 'PUT', '/api/budgets', {});
  await api(rig.port, 'PATCH', `/api/tasks/${t.body.id}`, { enabled: false });
});

test.run();
