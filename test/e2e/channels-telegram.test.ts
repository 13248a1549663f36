import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { startFakeTelegram, type FakeTelegram, type TgUser } from '../fixtures/fake-telegram.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Telegram end to end: the real svc with a channels worker talking grammY to a local fake of the
 * Bot API. A user writes in a chat; the agent (fake model) answers there, streamed by edits;
 * strangers get a pairing code; commands, approvals with buttons, send/test/send-file, 429s,
 * and a kill -9 of the worker with nothing lost or answered twice. The bot token never shows.
 */

const TOKEN = '123456789:AAHsvcFakeTokenForTests_abcdefXYZ';
const ALICE: TgUser = { id: 4242, first_name: 'Alice' };
const MALLORY: TgUser = { id: 6666, first_name: 'Mallory' };

let rig: TurnRig;
let tg: FakeTelegram;
const answered: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}

const channel = async (p = 'telegram') => (await api('GET', `/api/channels/${p}`)).body;
const running = () =>
  waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    20_000,
    'telegram running',
  );
/** The bot's messages in a chat once `n` of them exist. */
const botSaid = (user: TgUser, n: number) =>
  waitFor(
    () => (tg.chat(user.id).length >= n ? tg.chat(user.id) : undefined),
    20_000,
    `${n} bot messages to ${user.first_name}`,
  );
const lastText = (user: TgUser) => tg.chat(user.id).at(-1)?.text ?? '';
const settled = (user: TgUser, text: string) =>
  waitFor(
    () => tg.chat(user.id).find((m) => m.text === text),
    20_000,
    `a message "${text}" to ${user.first_name}`,
  );

test.before(async () => {
  tg = await startFakeTelegram(TOKEN);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  await tg?.close();
});

test('connect: saved with the secret masked, the worker starts, the bot connects', async () => {
  const bad = await api('POST', '/api/channels/telegram', { bot_token: 'nope', base_url: tg.url });
  assertFieldError(bad, { path: 'bot_token', label: 'Bot token' }, /looks like 123456789:AAH/);
  const badServer = await api('POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: 'ftp://example.com',
  });
  assertFieldError(
    badServer,
    { path: 'base_url', label: 'Bot API server' },
    /Bot API server: must be an http:\/\/ or https:\/\/ address/,
  );
  const badChat = await api('POST', '/api/channels/telegram/test', { chat_id: '9'.repeat(129) });
  assertFieldError(
    badChat,
    { path: 'chat_id', label: 'Chat id for a test message' },
    /must be at most 128 characters/,
  );
  const unknown = await api('POST', '/api/channels/telegram', { bot_token: TOKEN, colour: 'blue' });
  assert.is(unknown.status, 400);
  assert.match(unknown.body.error.message, /colour/);
  assert.is((await api('GET', '/api/channels/nope')).status, 404);

  const saved = await api('POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
    allowed_users: String(ALICE.id),
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.fields.bot_token, `********${TOKEN.slice(-4)}`);
  assert.equal(saved.body.fields.allowed_users, [String(ALICE.id)]);
  const ch = await running();
  assert.is(ch.account, '@svc_test_bot');
  const list = await api('GET', '/api/channels');
  assert.equal(
    list.body.channels.map((c: any) => [c.platform, c.state]),
    [['telegram', 'running']],
  );
  const avail = await api('GET', '/api/channels/available');
  const fields = avail.body.platforms.find((p: any) => p.platform === 'telegram').fields;
  assert.equal(
    fields.find((f: any) => f.name === 'bot_token'),
    {
      name: 'bot_token',
      label: 'Bot token',
      required: true,
      secret: true,
      description: fields[0].description,
    },
  );

  // Saving again with the masked token (as the form sends it back) keeps the real one.
  const again = await api('POST', '/api/channels/telegram', {
    bot_token: saved.body.fields.bot_token,
    parse_mode: 'HTML',
  });
  assert.is(again.status, 200, JSON.stringify(again.body));
  const yml = readFileSync(join(rig.server.home, 'config.yml'), 'utf8');
  assert.ok(yml.includes(TOKEN), 'config.yml keeps the real token');
  await running();
});

test('an allowed user writes; the agent answers in that chat, streamed by edits', async () => {
  const reply: FakeReply = {
    parts: [{ text: ['Hello ', 'from ', '**svc**', ', streaming', ' by edits.'] }],
    delayMs: 400,
  };
  rig.fake.enqueue(reply);
  tg.userSays(ALICE, 'hi there');
  const final = await settled(ALICE, 'Hello from <b>svc</b>, streaming by edits.');
  assert.is(final.parse_mode, 'HTML');
  assert.ok(
    final.history.length >= 2,
    `the reply was edited as it streamed: ${JSON.stringify(final.history)}`,
  );
  assert.ok(
    'Hello from **svc**, streaming by edits.'.startsWith(final.history[0]!),
    'the first text was the start of the reply',
  );
  assert.is(tg.chat(ALICE.id).length, 1, 'one message, edited in place');
  assert.ok(
    tg.calls.some((c) => c.method === 'sendChatAction'),
    'typing was shown',
  );

  // The chat's session is in the session list, with its platform.
  const sessions = (await api('GET', '/api/sessions')).body.items;
  const s = sessions.find((x: any) => x.channel === 'telegram');
  assert.ok(s, 'a telegram session is listed');
  assert.match(s.title, /Telegram · Alice/);
  const msgs = (await api('GET', `/api/sessions/${s.id}/messages`)).body.items;
  assert.equal(
    msgs.map((m: any) => m.role),
    ['user', 'assistant'],
  );
  assert.is(msgs[0].content.text, 'hi there');
});

test('over its budget, a channel chat gets one reply saying so, and the model is not called', async () => {
  const put = await api('PUT', '/api/budgets', { channel: { tokens: 10 } });
  assert.is(put.status, 200, JSON.stringify(put.body));
  try {
    const before = tg.chat(ALICE.id).length;
    const calls = rig.fake.requests.length;
    tg.userSays(ALICE, 'spend something');
    const said = await botSaid(ALICE, before + 1);
    const reply = said.at(-1)!.text;
    assert.match(reply, 'budgets.channel');
    assert.match(reply, 'resets at');
    assert.is(rig.fake.requests.length, calls, 'no model call was made');
    const s = (await api('GET', '/api/sessions')).body.items.find(
      (x: any) => x.channel === 'telegram',
    );
    await waitFor(
      async () => (await api('POST', `/api/chat/${s.id}/interrupt`, {})).body.turn_id === null,
      10_000,
      'the turn to end',
    );
    assert.is(tg.chat(ALICE.id).length, before + 1, 'one reply');
  } finally {
    await api('PUT', '/api/budgets', {});
  }
});

test('a stranger gets a pairing code and no turn; approved, they are answered', async () => {
  const before = rig.fake.requests.length;
  tg.userSays(MALLORY, 'let me in, run rm -rf');
  const [pairingMsg] = await botSaid(MALLORY, 1);
  const code = /pairing code is ([A-Z0-9]{6})/.exec(pairingMsg!.text)?.[1];
  assert.ok(code, pairingMsg!.text);
  // Again: the same code, still nothing for the model.
  tg.userSays(MALLORY, 'hello?');
  await botSaid(MALLORY, 2);
  assert.ok(lastText(MALLORY).includes(code!));
  assert.is(rig.fake.requests.length, before, 'nothing from a stranger reached the model');
  const sessions = (await api('GET', '/api/sessions')).body.items;
  assert.not.ok(
    sessions.some((s: any) => s.title.includes('Mallory')),
    'no session for a stranger',
  );

  const list = await api('GET', '/api/channels/telegram/pairings');
  assert.equal(
    list.body.items.map((p: any) => [p.code, p.user_id, p.name, p.status]),
    [[code, String(MALLORY.id), 'Mallory', 'pending']],
  );
  assert.is(
    (await api('POST', '/api/channels/telegram/pairings', { code: 'ZZZZZZ', decision: 'approve' }))
      .status,
    404,
  );
  const ok = await api('POST', '/api/channels/telegram/pairings', {
    code: code!.toLowerCase(),
    decision: 'approve',
  });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body.status, 'approved');
  await botSaid(MALLORY, 3);
  assert.match(lastText(MALLORY), /approved/);

  rig.fake.enqueue(textReply('Welcome, Mallory.'));
  tg.userSays(MALLORY, 'now?');
  await settled(MALLORY, 'Welcome, Mallory.');
  assert.is(rig.fake.requests.length, before + 1);
});

test('/help, /status, /new and /stop answer without the model', async () => {
  const before = rig.fake.requests.length;
  tg.userSays(ALICE, '/help');
  await waitFor(() => lastText(ALICE).includes('/new'), 20_000, 'help');
  tg.userSays(ALICE, '/status');
  await waitFor(() => lastText(ALICE).startsWith('Session "Telegram · Alice"'), 20_000, 'status');
  const first = /\((s_[a-z0-9]+)\)/.exec(lastText(ALICE))![1];
  tg.userSays(ALICE, '/new');
  await waitFor(() => lastText(ALICE).startsWith('New session started'), 20_000, '/new');
  const second = /\((s_[a-z0-9]+)\)/.exec(lastText(ALICE))![1];
  assert.is.not(first, second);
  tg.userSays(ALICE, '/stop');
  await waitFor(() => lastText(ALICE) === 'Nothing is running.', 20_000, '/stop idle');
  tg.userSays(ALICE, '/frobnicate');
  await waitFor(() => lastText(ALICE).startsWith('Unknown command /frobnicate'), 20_000, 'unknown');
  assert.is(rig.fake.requests.length, before, 'commands never reach the model');

  // /stop interrupts a running turn; the chat is told.
  rig.fake.enqueue({ parts: [{ text: ['Working', ' on', ' it', ' slowly', '…'] }], delayMs: 1500 });
  tg.userSays(ALICE, 'a long one');
  await waitFor(
    () => tg.chat(ALICE.id).some((m) => m.text.startsWith('Working')),
    20_000,
    'the reply started',
  );
  tg.userSays(ALICE, '/stop');
  const stopped = await waitFor(
    () =>
      tg.chat(ALICE.id).find((m) => m.text.startsWith('Working') && m.text.includes('(stopped)')),
    20_000,
    'the reply marked stopped',
  );
  assert.not.ok(stopped.text.includes('slowly…'));
  const s = (await api('GET', `/api/sessions/${second}`)).body;
  assert.is(s.channel, 'telegram');
});

test("send, test and send-file deliver; the platform's refusal is a 502 with its reason; 429s are waited out", async () => {
  const sent = await api('POST', '/api/channels/telegram/send', {
    chat_id: String(ALICE.id),
    text: 'ping **bold**',
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  await settled(ALICE, 'ping <b>bold</b>');
  assert.is(sent.body.message_id, String(tg.chat(ALICE.id).at(-1)!.message_id));

  const refused = await api('POST', '/api/channels/telegram/send', {
    chat_id: '-100404000',
    text: 'to nowhere',
  });
  assert.is(refused.status, 502, JSON.stringify(refused.body));
  assert.is(refused.body.error.code, 'platform_error');
  assert.match(refused.body.error.message, /chat not found/);
  assert.is(
    (await api('POST', '/api/channels/telegram/send', { chat_id: '1', text: '' })).status,
    400,
  );

  // A 429 with retry_after: waited out, then delivered once.
  tg.failNext('sendMessage', {
    error_code: 429,
    description: 'Too Many Requests: retry after 1',
    retry_after: 1,
  });
  const slowed = await api('POST', '/api/channels/telegram/send', {
    chat_id: String(ALICE.id),
    text: 'after a pause',
  });
  assert.is(slowed.status, 200, JSON.stringify(slowed.body));
  const tries = tg.calls.filter(
    (c) => c.method === 'sendMessage' && c.body.text === 'after a pause',
  );
  assert.equal(
    tries.map((c) => c.status),
    [429, 200],
  );
  assert.ok(tries[1]!.at - tries[0]!.at >= 900, 'retry_after was honoured');
  assert.is(tg.chat(ALICE.id).filter((m) => m.text === 'after a pause').length, 1);

  // Markdown the platform will not parse goes again as plain text; a long text is split at the cap.
  tg.failNext('sendMessage', {
    error_code: 400,
    description:
      "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3",
  });
  assert.is(
    (
      await api('POST', '/api/channels/telegram/send', {
        chat_id: String(ALICE.id),
        text: 'a **b** c',
      })
    ).status,
    200,
  );
  const plain = tg.chat(ALICE.id).at(-1)!;
  assert.equal([plain.text, plain.parse_mode], ['a **b** c', undefined]);
  const long = Array.from({ length: 300 }, (_, i) => `Line ${i} of a long report.`).join('\n');
  const before = tg.chat(ALICE.id).length;
  assert.is(
    (await api('POST', '/api/channels/telegram/send', { chat_id: String(ALICE.id), text: long }))
      .status,
    200,
  );
  const parts = tg.chat(ALICE.id).slice(before);
  assert.ok(
    parts.length >= 2 && parts.every((m) => m.text.length <= 4096),
    `split into ${parts.length}`,
  );
  assert.is(parts.map((m) => m.text).join('\n'), long);

  const tested = await api('POST', '/api/channels/telegram/test', {});
  assert.is(tested.status, 200, JSON.stringify(tested.body));
  assert.ok([String(ALICE.id), String(MALLORY.id)].includes(tested.body.chat_id));
  assert.match(tg.chat(tested.body.chat_id).at(-1)!.text, /Test message from svc/);
  const testedBad = await api('POST', '/api/channels/telegram/test', { chat_id: '-100404001' });
  assert.is(testedBad.status, 502);

  const form = new FormData();
  form.append('file', new Blob([Buffer.from('report body 42')]), 'report.txt');
  const up = await fetch(`http://127.0.0.1:${rig.port}/api/upload`, { method: 'POST', body: form });
  assert.is(up.status, 201);
  const name = ((await up.json()) as { files: { name: string }[] }).files[0]!.name;
  const file = await api('POST', '/api/channels/telegram/send-file', {
    chat_id: String(ALICE.id),
    upload: name,
  });
  assert.is(file.status, 200, JSON.stringify(file.body));
  const doc = tg.documents.at(-1)!;
  assert.equal(
    [doc.chat_id, doc.filename, doc.bytes.toString()],
    [String(ALICE.id), 'report.txt', 'report body 42'],
  );
  assert.is(
    (await api('POST', '/api/channels/telegram/send-file', { chat_id: '-100404002', upload: name }))
      .status,
    502,
  );
  assert.is(
    (await api('POST', '/api/channels/telegram/send-file', { chat_id: '1', upload: 'nope.txt' }))
      .status,
    404,
  );
});

test('an approval is asked in the chat with buttons; a press answers it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ch-outside-'));
  const target = join(dir, 'x.txt');
  try {
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'tg1',
              name: 'write_file',
              arguments: [JSON.stringify({ path: target, content: 'from the chat' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Written.'),
    );
    tg.userSays(ALICE, 'write the file');
    const q = await waitFor(
      () =>
        tg
          .chat(ALICE.id)
          .find((m) => m.text.startsWith('⚠️ Allow write_file') && m.text.includes(target)),
      20_000,
      'the question',
    );
    const keyboard = (
      q.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] }
    ).inline_keyboard.flat();
    assert.equal(
      keyboard.map((b) => b.text),
      ['✅ Allow once', '🔁 Allow for session', '❌ Deny'],
    );
    assert.not.ok(existsSync(target));
    tg.press(ALICE, q.message_id, keyboard[0]!.callback_data);
    await settled(ALICE, 'Written.');
    assert.is(readFileSync(target, 'utf8'), 'from the chat');
    assert.match(q.text, /→ Allowed once$/);
    assert.ok(tg.calls.some((c) => c.method === 'answerCallbackQuery'));
    // A stranger's press does nothing.
    tg.press(MALLORY, q.message_id, keyboard[0]!.callback_data.replace(/:o$/, ':d'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('kill -9 of the channels worker: the adapter comes back, nothing is lost or answered twice', async () => {
  const pidOf = async () =>
    ((await api('GET', '/api/status')).body.processes as { role: string; pid: number }[]).find(
      (p) => p.role === 'channels' && p.pid > 0,
    )?.pid;
  const pid = await waitFor(pidOf, 10_000, 'the channels worker');
  rig.fake.enqueue({
    parts: [{ text: ['Survived ', 'the ', 'crash ', 'without ', 'a ', 'scratch.'] }],
    delayMs: 500,
  });
  const first = tg.userSays(ALICE, 'survive this');
  // Killed once the reply was edited: svc had recorded which message it streams into (a kill
  // between Telegram taking the first sendMessage and svc hearing its id would leave that message
  // behind, as on any platform: seen once under load).
  await waitFor(
    () => tg.chat(ALICE.id).some((m) => m.text.startsWith('Survived') && m.history.length >= 2),
    20_000,
    'the reply started',
  );
  process.kill(pid, 'SIGKILL');
  // Written while the worker is down, and a redelivery of the first (as when a confirm was lost).
  rig.fake.enqueue(textReply('Second answer.'));
  tg.userSays(ALICE, 'and this one');
  tg.redeliver(first);
  await waitFor(async () => ((await pidOf()) ?? pid) !== pid, 20_000, 'a new channels worker');
  await settled(ALICE, 'Survived the crash without a scratch.');
  await settled(ALICE, 'Second answer.');
  await running();
  // Let anything still queued happen, then count.
  tg.userSays(ALICE, '/help');
  await waitFor(() => lastText(ALICE).includes('/new'), 20_000, 'help after');
  const texts = tg.chat(ALICE.id).map((m) => m.text);
  assert.is(
    texts.filter((t) => t.startsWith('Survived')).length,
    1,
    `one reply to the first message: ${JSON.stringify(texts)}`,
  );
  assert.is(texts.filter((t) => t === 'Second answer.').length, 1);
});

test('a message during a restart drain is told to come again; the running turn still finishes', async () => {
  rig.fake.enqueue({ parts: [{ text: ['Long ', 'answer ', 'done.'] }], delayMs: 700 });
  tg.userSays(ALICE, 'take your time');
  await waitFor(
    () => tg.chat(ALICE.id).some((m) => m.text.startsWith('Long')),
    20_000,
    'the reply started',
  );
  assert.is((await api('POST', '/api/restart', {})).status, 202);
  tg.userSays(MALLORY, 'are you there?');
  await waitFor(() => lastText(MALLORY).includes('restarting'), 20_000, 'the restarting reply');
  await settled(ALICE, 'Long answer done.');
  await waitFor(
    async () => (await api('GET', '/api/status')).body?.state === 'running',
    30_000,
    'restarted',
  );
});

test('disabled: 409; deleted: 404, in the trash, restorable', async () => {
  assert.is((await api('POST', '/api/channels/telegram', { enabled: false })).status, 200);
  assert.is((await channel()).state, 'stopped');
  const off = await api('POST', '/api/channels/telegram/send', {
    chat_id: String(ALICE.id),
    text: 'x',
  });
  assert.is(off.status, 409, JSON.stringify(off.body));
  assert.is((await api('POST', '/api/channels/telegram', { enabled: true })).status, 200);
  await running();

  const del = await api('DELETE', '/api/channels/telegram');
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.is((await api('GET', '/api/channels/telegram')).status, 404);
  assert.equal((await api('GET', '/api/channels')).body.channels, []);
  assert.is(
    (await api('POST', '/api/channels/telegram/send', { chat_id: '1', text: 'x' })).status,
    404,
  );
  const restored = await api('POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(restored.status, 200, JSON.stringify(restored.body));
  await running();
});

test('a token the platform refuses: the state says why in words, and the adapter retries', async () => {
  const wrong = '987654321:AAHthisTokenIsNotKnownToTheFake_xyz';
  assert.is((await api('POST', '/api/channels/telegram', { bot_token: wrong })).status, 200);
  const failing = await waitFor(
    async () => {
      const c = await channel();
      return c.state === 'error' ? c : undefined;
    },
    20_000,
    'the error state',
  );
  assert.match(
    failing.error,
    /Telegram did not accept the bot: 401 Unauthorized \(trying again in \d+ s\)/,
  );
  assert.not.ok(JSON.stringify(failing).includes(wrong));
  assert.is((await api('POST', '/api/channels/telegram', { bot_token: TOKEN })).status, 200);
  await running();
});

test('the bot token never appears in a response or a log', async () => {
  for (const body of answered)
    assert.not.ok(body.includes(TOKEN), `a response carried the token: ${body.slice(0, 200)}`);
  assert.not.ok(rig.server.output().includes(TOKEN), 'the console output carries the token');
  const logs = join(rig.server.home, 'logs');
  for (const f of readdirSync(logs))
    assert.not.ok(
      readFileSync(join(logs, f), 'utf8').includes(TOKEN),
      `logs/${f} carries the token`,
    );
});

test.run();
