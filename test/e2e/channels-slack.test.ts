import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { startFakeSlack, type FakeSlack, type SlackUser } from '../fixtures/fake-slack.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Slack end to end: the real svc with a channels worker talking @slack/socket-mode and
 * @slack/web-api to a local fake of Slack (Socket Mode over a real WebSocket, the Web API over
 * HTTP). A member writes the bot; the agent (fake model) answers there, streamed by chat.update;
 * strangers get a pairing code; a channel reaches it only by a mention, answered in the thread;
 * approvals are Block Kit buttons; every envelope is acknowledged; a `disconnect` is followed by
 * a new connection; send/test/send-file, 429s and Slack's refusals; the tokens never show.
 */

const APP_TOKEN = 'xapp-1-A0FAKE-1234567890-abcdef0123456789abcdef0123456789';
const BOT_TOKEN = 'xoxb-1234567890-0987654321-FakeBotTokenForSvcTests';
const ALICE: SlackUser = { id: 'U01ALICE', name: 'Alice' };
const MALLORY: SlackUser = { id: 'U01MALLORY', name: 'Mallory' };
const GENERAL = 'C01GENERAL';

let rig: TurnRig;
let slack: FakeSlack;
const answered: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}

const channel = async () => (await api('GET', '/api/channels/slack')).body;
const running = () =>
  waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    20_000,
    'slack running',
  );
const dm = (u: SlackUser) => slack.dmOf(u);
/** The bot's message in a conversation whose text is exactly `text`. */
const settled = (conv: string, text: string, thread?: string) =>
  waitFor(
    () => slack.posted(conv, thread).find((m) => m.text === text),
    20_000,
    `a message "${text}" in ${conv}`,
  );
const lastText = (conv: string) => slack.posted(conv).at(-1)?.text ?? '';

test.before(async () => {
  slack = await startFakeSlack({ app: APP_TOKEN, bot: BOT_TOKEN }, [ALICE, MALLORY]);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  await slack?.close();
});

test('connect: the form lists Slack; tokens are checked, masked, kept; Socket Mode connects', async () => {
  const avail = await api('GET', '/api/channels/available');
  const info = avail.body.platforms.find((p: any) => p.platform === 'slack');
  assert.is(info.label, 'Slack');
  assert.equal(
    info.fields.map((f: any) => [f.name, f.required, f.secret]),
    [
      ['app_token', true, true],
      ['bot_token', true, true],
      ['api_base_url', false, false],
      ['allowed_users', false, false],
    ],
  );

  const bad = await api('POST', '/api/channels/slack', {
    app_token: BOT_TOKEN,
    bot_token: BOT_TOKEN,
    api_base_url: slack.apiUrl,
  });
  assertFieldError(bad, { path: 'app_token', label: 'App-level token' }, /starts with xapp-/);
  const badBot = await api('POST', '/api/channels/slack', {
    app_token: APP_TOKEN,
    bot_token: 'xoxp-user-token-not-a-bot-1234',
    api_base_url: slack.apiUrl,
  });
  assertFieldError(badBot, { path: 'bot_token', label: 'Bot token' }, /starts with xoxb-/);
  assert.not.ok(
    JSON.stringify(bad.body).includes(BOT_TOKEN) ||
      JSON.stringify(badBot.body).includes('xoxp-user-token'),
    'a refused token is not echoed',
  );

  const saved = await api('POST', '/api/channels/slack', {
    app_token: APP_TOKEN,
    bot_token: BOT_TOKEN,
    api_base_url: slack.apiUrl,
    allowed_users: ALICE.id,
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.fields.app_token, `********${APP_TOKEN.slice(-4)}`);
  assert.is(saved.body.fields.bot_token, `********${BOT_TOKEN.slice(-4)}`);
  assert.equal(saved.body.fields.allowed_users, [ALICE.id]);
  const ch = await running();
  assert.is(ch.account, '@svc (Fake Workspace)');
  assert.ok(
    slack.calls.some((c) => c.method === 'apps.connections.open' && c.auth === 'app'),
    'Socket Mode was opened with the app-level token',
  );
  assert.ok(
    slack.calls.filter((c) => c.method !== 'apps.connections.open').every((c) => c.auth === 'bot'),
    'the Web API was called with the bot token',
  );
  assert.is(slack.connections, 1);

  // Saved again with the masked tokens (as the form sends them back): the real ones stay.
  const again = await api('POST', '/api/channels/slack', {
    app_token: saved.body.fields.app_token,
    bot_token: saved.body.fields.bot_token,
    allowed_users: ALICE.id,
  });
  assert.is(again.status, 200, JSON.stringify(again.body));
  const yml = readFileSync(join(rig.server.home, 'config.yml'), 'utf8');
  assert.ok(yml.includes(APP_TOKEN) && yml.includes(BOT_TOKEN), 'config.yml keeps the real tokens');
  await running();
});

test("an allowed member's DM: the agent answers there, streamed by chat.update, rendered as mrkdwn", async () => {
  const reply: FakeReply = {
    parts: [{ text: ['Hello ', 'from ', '**svc**', ', streaming', ' by updates.'] }],
    delayMs: 400,
  };
  rig.fake.enqueue(reply);
  slack.dm(ALICE, 'hi there');
  const final = await settled(dm(ALICE), 'Hello from *svc*, streaming by updates.');
  assert.ok(
    final.history.length >= 2,
    `the reply was updated as it streamed: ${JSON.stringify(final.history)}`,
  );
  assert.ok(
    'Hello from **svc**, streaming by updates.'.startsWith(final.history[0]!),
    'the first text was the start of the reply',
  );
  assert.is(
    slack.posted(dm(ALICE)).length,
    1,
    'one message, updated in place (its own echo was not answered)',
  );
  assert.ok(slack.calls.some((c) => c.method === 'chat.update'));

  const sessions = (await api('GET', '/api/sessions')).body.items;
  const s = sessions.find((x: any) => x.channel === 'slack');
  assert.ok(s, 'a slack session is listed');
  assert.match(s.title, /Slack · Alice/);
  const msgs = (await api('GET', `/api/sessions/${s.id}/messages`)).body.items;
  assert.equal(
    msgs.map((m: any) => m.role),
    ['user', 'assistant'],
  );
  assert.is(msgs[0].content.text, 'hi there');

  // A message in a thread of the DM is answered in that thread.
  const parent = final.ts;
  rig.fake.enqueue(textReply('In the thread.'));
  slack.dm(ALICE, 'a side question', { threadTs: parent });
  const inThread = await settled(dm(ALICE), 'In the thread.');
  assert.is(inThread.thread_ts, parent);
});

test('a stranger gets a pairing code and no turn; approved, they are answered', async () => {
  const before = rig.fake.requests.length;
  slack.dm(MALLORY, 'let me in, run rm -rf');
  const first = await waitFor(() => slack.posted(dm(MALLORY))[0], 20_000, 'the pairing reply');
  const code = /pairing code is ([A-Z0-9]{6})/.exec(first.text)?.[1];
  assert.ok(code, first.text);
  assert.is(rig.fake.requests.length, before, 'nothing from a stranger reached the model');
  const list = await api('GET', '/api/channels/slack/pairings');
  assert.equal(
    list.body.items.map((p: any) => [p.code, p.user_id, p.name, p.status]),
    [[code, MALLORY.id, 'Mallory', 'pending']],
  );
  const ok = await api('POST', '/api/channels/slack/pairings', { code, decision: 'approve' });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  await waitFor(() => lastText(dm(MALLORY)).includes('approved'), 20_000, 'the approval told');
  rig.fake.enqueue(textReply('Welcome, Mallory.'));
  slack.dm(MALLORY, 'now?');
  await settled(dm(MALLORY), 'Welcome, Mallory.');
  assert.is(rig.fake.requests.length, before + 1);
});

test("in a channel only a mention reaches the agent, answered in the mention's thread", async () => {
  const before = rig.fake.requests.length;
  slack.say(ALICE, GENERAL, 'just chatting with the team, not the bot');
  rig.fake.enqueue(textReply('Answered in the thread.'));
  const ts = slack.say(ALICE, GENERAL, `<@${slack.botUserId}> what is up &amp; running?`);
  const reply = await settled(GENERAL, 'Answered in the thread.');
  assert.is(reply.thread_ts, ts, 'the reply is in the thread of the mention');
  assert.is(
    rig.fake.requests.length,
    before + 1,
    'one turn: the message without a mention was ignored',
  );
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /what is up & running\?/);
  assert.not.ok(sent.includes(slack.botUserId), 'the mention itself is not for the model');
  assert.is(slack.posted(GENERAL).length, 1);

  // A mention inside that thread continues the same session.
  rig.fake.enqueue(textReply('Same thread, same session.'));
  slack.say(ALICE, GENERAL, `<@${slack.botUserId}> and then?`, { threadTs: ts });
  await settled(GENERAL, 'Same thread, same session.', ts);
  const sessions = (await api('GET', '/api/sessions')).body.items.filter(
    (s: any) => s.channel === 'slack',
  );
  const msgs = await Promise.all(
    sessions.map(async (s: any) => (await api('GET', `/api/sessions/${s.id}/messages`)).body.items),
  );
  assert.ok(
    msgs.some((m) => m.length === 4 && m[2].content.text === 'and then?'),
    "the thread's second mention went to its session",
  );
});

test('/help, /status, /new and /stop answer without the model (as message text or slash commands)', async () => {
  const before = rig.fake.requests.length;
  slack.dm(ALICE, ' /help');
  await waitFor(() => lastText(dm(ALICE)).includes('/new'), 20_000, 'help');
  slack.dm(ALICE, '/status');
  await waitFor(() => lastText(dm(ALICE)).startsWith('Session "Slack · Alice"'), 20_000, 'status');
  const first = /\((s_[a-z0-9]+)\)/.exec(lastText(dm(ALICE)))![1];
  slack.dm(ALICE, '/new');
  await waitFor(() => lastText(dm(ALICE)).startsWith('New session started'), 20_000, '/new');
  assert.is.not(/\((s_[a-z0-9]+)\)/.exec(lastText(dm(ALICE)))![1], first);
  slack.dm(ALICE, '/stop');
  await waitFor(() => lastText(dm(ALICE)) === 'Nothing is running.', 20_000, '/stop idle');
  // The same commands registered as the app's slash commands arrive as slash_commands envelopes.
  const n = slack.posted(dm(ALICE)).length;
  slack.slash(ALICE, '/status');
  await waitFor(
    () =>
      slack.posted(dm(ALICE)).length > n &&
      lastText(dm(ALICE)).startsWith('Session "Slack · Alice"')
        ? true
        : undefined,
    20_000,
    'status by slash command',
  );
  assert.is(rig.fake.requests.length, before, 'commands never reach the model');
});

test('an approval is asked with Block Kit buttons; a press answers it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-slack-outside-'));
  const target = join(dir, 'x.txt');
  try {
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'sl1',
              name: 'write_file',
              arguments: [JSON.stringify({ path: target, content: 'from slack' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Written.'),
    );
    slack.dm(ALICE, 'write the file');
    const q = await waitFor(
      () =>
        slack
          .posted(dm(ALICE))
          .find((m) => m.text.startsWith('⚠️ Allow write_file') && m.text.includes(target)),
      20_000,
      'the question',
    );
    const buttons = (
      q.blocks as { type: string; elements?: { text: { text: string }; value: string }[] }[]
    ).find((b) => b.type === 'actions')!.elements!;
    assert.equal(
      buttons.map((b) => b.text.text),
      ['✅ Allow once', '🔁 Allow for session', '❌ Deny'],
    );
    assert.not.ok(existsSync(target));
    slack.press(ALICE, q, buttons[0]!.value);
    await settled(dm(ALICE), 'Written.');
    assert.is(readFileSync(target, 'utf8'), 'from slack');
    await waitFor(
      () => (/→ Allowed once$/.test(q.text) ? q : undefined),
      20_000,
      'the question updated with the answer',
    );
    assert.equal(q.blocks, [], 'the buttons are gone once answered');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file shared in a DM reaches the model as an attachment, fetched with the bot token', async () => {
  rig.fake.enqueue(textReply('Got your notes.'));
  slack.dm(ALICE, 'what is in this file?', {
    file: {
      name: 'notes.txt',
      mime: 'text/plain',
      bytes: Buffer.from('remember the milk, 42 litres'),
    },
  });
  await settled(dm(ALICE), 'Got your notes.');
  assert.is(slack.downloads.length, 1);
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  const path = /Attached file: \S*notes\.txt \(text\/plain, 28 bytes\) at ([^\]"\\]+)/.exec(
    sent,
  )?.[1];
  assert.ok(path, `the model was told of the file: ${sent.slice(0, 1500)}`);
  assert.is(readFileSync(path!, 'utf8'), 'remember the milk, 42 litres');

  // A file over the cap (Slack announces its size): a reply says so; nothing is fetched or sent to the model.
  const before = rig.fake.requests.length;
  slack.dm(ALICE, 'and this huge one', {
    file: {
      name: 'huge.bin',
      mime: 'application/octet-stream',
      bytes: Buffer.from('small really'),
      size: 5 * 1024 * 1024 * 1024,
    },
  });
  await waitFor(
    () => (/huge\.bin is too large/.test(lastText(dm(ALICE))) ? true : undefined),
    20_000,
    'the too-large reply',
  );
  assert.is(slack.downloads.length, 1);
  assert.is(rig.fake.requests.length, before);
});

test("send, test and send-file deliver; Slack's refusal is a 502 with its reason; a 429 is waited out", async () => {
  const sent = await api('POST', '/api/channels/slack/send', {
    chat_id: dm(ALICE),
    text: 'ping **bold**',
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  const m = await settled(dm(ALICE), 'ping *bold*');
  assert.is(sent.body.message_id, m.ts);

  const refused = await api('POST', '/api/channels/slack/send', {
    chat_id: 'C404NOWHERE',
    text: 'to nowhere',
  });
  assert.is(refused.status, 502, JSON.stringify(refused.body));
  assert.is(refused.body.error.code, 'platform_error');
  assert.match(refused.body.error.message, /Slack did not take the message: channel_not_found/);

  // 429 with Retry-After: waited out, then delivered once.
  slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
  const slowed = await api('POST', '/api/channels/slack/send', {
    chat_id: dm(ALICE),
    text: 'after a pause',
  });
  assert.is(slowed.status, 200, JSON.stringify(slowed.body));
  const tries = slack.calls.filter(
    (c) => c.method === 'chat.postMessage' && c.args.text === 'after a pause',
  );
  assert.equal(
    tries.map((c) => c.status),
    [429, 200],
  );
  assert.ok(tries[1]!.at - tries[0]!.at >= 900, 'Retry-After was honoured');
  assert.is(slack.posted(dm(ALICE)).filter((x) => x.text === 'after a pause').length, 1);

  // Formatted text Slack refuses goes again as plain text; a long text is split at the cap.
  slack.failNext('chat.postMessage', { error: 'msg_too_long' });
  assert.is(
    (await api('POST', '/api/channels/slack/send', { chat_id: dm(ALICE), text: 'a **b** <c>' }))
      .status,
    200,
  );
  const plain = slack.posted(dm(ALICE)).at(-1)!;
  assert.is(plain.text, 'a **b** &lt;c&gt;', 'sent as written, only &, < and > escaped');
  const long = Array.from({ length: 300 }, (_, i) => `Line ${i} of a long report.`).join('\n');
  const before = slack.posted(dm(ALICE)).length;
  assert.is(
    (await api('POST', '/api/channels/slack/send', { chat_id: dm(ALICE), text: long })).status,
    200,
  );
  const parts = slack.posted(dm(ALICE)).slice(before);
  assert.ok(
    parts.length >= 2 && parts.every((x) => x.text.length <= 4000),
    `split into ${parts.length}`,
  );
  assert.is(parts.map((x) => x.text).join('\n'), long);

  const tested = await api('POST', '/api/channels/slack/test', { chat_id: dm(ALICE) });
  assert.is(tested.status, 200, JSON.stringify(tested.body));
  assert.match(lastText(dm(ALICE)), /Test message from svc/);
  assert.is((await api('POST', '/api/channels/slack/test', { chat_id: 'C404NONE' })).status, 502);

  const form = new FormData();
  form.append('file', new Blob([Buffer.from('report body 42')]), 'report.txt');
  const up = await fetch(`http://127.0.0.1:${rig.port}/api/upload`, { method: 'POST', body: form });
  assert.is(up.status, 201);
  const name = ((await up.json()) as { files: { name: string }[] }).files[0]!.name;
  const file = await api('POST', '/api/channels/slack/send-file', {
    chat_id: dm(ALICE),
    upload: name,
  });
  assert.is(file.status, 200, JSON.stringify(file.body));
  const got = slack.uploads.at(-1)!;
  assert.equal(
    [got.channel, got.filename, got.bytes.toString()],
    [dm(ALICE), 'report.txt', 'report body 42'],
  );
  assert.is(file.body.message_id, got.id);
  const order = slack.calls.filter((c) => c.method.startsWith('files.')).map((c) => c.method);
  assert.equal(order.slice(-2), ['files.getUploadURLExternal', 'files.completeUploadExternal']);
  const failed = await api('POST', '/api/channels/slack/send-file', {
    chat_id: 'C404FILES',
    upload: name,
  });
  assert.is(failed.status, 502, JSON.stringify(failed.body));
  assert.match(failed.body.error.message, /channel_not_found/);
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
  slack.dm(ALICE, 'survive this');
  // Killed once the reply was updated: svc had recorded which message it streams into (a kill
  // between Slack taking the first post and svc hearing its ts would leave that post behind).
  await waitFor(
    () =>
      slack.posted(dm(ALICE)).some((m) => m.text.startsWith('Survived') && m.history.length >= 2),
    20_000,
    'the reply started',
  );
  process.kill(pid, 'SIGKILL');
  // Written while the worker is down: Slack holds it until a connection acknowledges it.
  rig.fake.enqueue(textReply('Second answer.'));
  slack.dm(ALICE, 'and this one');
  await waitFor(async () => ((await pidOf()) ?? pid) !== pid, 20_000, 'a new channels worker');
  await settled(dm(ALICE), 'Survived the crash without a scratch.');
  await settled(dm(ALICE), 'Second answer.');
  await running();
  slack.dm(ALICE, '/help');
  await waitFor(() => lastText(dm(ALICE)).includes('/new'), 20_000, 'help after');
  const texts = slack.posted(dm(ALICE)).map((m) => m.text);
  assert.is(
    texts.filter((t) => t.startsWith('Survived')).length,
    1,
    `one reply to the first message: ${JSON.stringify(texts.slice(-6))}`,
  );
  assert.is(texts.filter((t) => t === 'Second answer.').length, 1);
});

test('a message during a restart drain is told to come again; the running turn still finishes', async () => {
  rig.fake.enqueue({ parts: [{ text: ['Long ', 'answer ', 'done.'] }], delayMs: 700 });
  slack.dm(ALICE, 'take your time');
  await waitFor(
    () => slack.posted(dm(ALICE)).some((m) => m.text.startsWith('Long')),
    20_000,
    'the reply started',
  );
  assert.is((await api('POST', '/api/restart', {})).status, 202);
  slack.dm(MALLORY, 'are you there?');
  await waitFor(() => lastText(dm(MALLORY)).includes('restarting'), 20_000, 'the restarting reply');
  await settled(dm(ALICE), 'Long answer done.');
  await waitFor(
    async () => (await api('GET', '/api/status')).body?.state === 'running',
    30_000,
    'restarted',
  );
  await running();
});

test('a `disconnect` from Slack: the adapter connects again and the next message is answered', async () => {
  const conns = slack.connections;
  slack.disconnect();
  await waitFor(() => slack.connections > conns, 30_000, 'a new Socket Mode connection');
  assert.ok(
    slack.calls.filter((c) => c.method === 'apps.connections.open').length >= 2,
    'a fresh URL was asked for',
  );
  rig.fake.enqueue(textReply('Still here.'));
  slack.dm(ALICE, 'are you still there?');
  await settled(dm(ALICE), 'Still here.');
  assert.is((await channel()).state, 'running');
});

test('every envelope Slack sent was acknowledged with its envelope_id', async () => {
  await waitFor(
    () => (slack.envelopes.every((e) => slack.acked.has(e.envelope_id)) ? true : undefined),
    10_000,
    'all acknowledged',
  );
  assert.ok(slack.envelopes.length >= 20, `envelopes: ${slack.envelopes.length}`);
  assert.ok(slack.envelopes.some((e) => e.type === 'interactive'));
});

test('a token Slack refuses: the state says why in words; fixed, it runs again', async () => {
  const wrong = 'xoxb-1111111111-2222222222-NotKnownToTheFake';
  assert.is((await api('POST', '/api/channels/slack', { bot_token: wrong })).status, 200);
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
    /Slack did not accept the bot token: invalid_auth \(trying again in \d+ s\)/,
  );
  assert.not.ok(JSON.stringify(failing).includes(wrong));
  assert.is((await api('POST', '/api/channels/slack', { bot_token: BOT_TOKEN })).status, 200);
  await running();

  // An app-level token Slack refuses fails at apps.connections.open, and says so.
  const wrongApp = 'xapp-1-A0FAKE-1111111111-notknowntothefake00000000000';
  assert.is((await api('POST', '/api/channels/slack', { app_token: wrongApp })).status, 200);
  const appFailing = await waitFor(
    async () => {
      const c = await channel();
      return c.state === 'error' ? c : undefined;
    },
    20_000,
    'the error state for the app token',
  );
  assert.match(
    appFailing.error,
    /Slack refused the app token: invalid_auth \(trying again in \d+ s\)/,
  );
  assert.is((await api('POST', '/api/channels/slack', { app_token: APP_TOKEN })).status, 200);
  await running();
});

test('the tokens never appear in a response or a log', async () => {
  for (const body of answered)
    for (const t of [APP_TOKEN, BOT_TOKEN])
      assert.not.ok(body.includes(t), `a response carried a token: ${body.slice(0, 200)}`);
  for (const t of [APP_TOKEN, BOT_TOKEN])
    assert.not.ok(rig.server.output().includes(t), 'the console output carries a token');
  const logs = join(rig.server.home, 'logs');
  for (const f of readdirSync(logs)) {
    const text = readFileSync(join(logs, f), 'utf8');
    for (const t of [APP_TOKEN, BOT_TOKEN])
      assert.not.ok(text.includes(t), `logs/${f} carries a token`);
  }
  for (const r of rig.fake.requests)
    for (const t of [APP_TOKEN, BOT_TOKEN])
      assert.not.ok(JSON.stringify(r.body).includes(t), 'a model request carried a token');
});

test.run();
