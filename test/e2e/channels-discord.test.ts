import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { startFakeDiscord, type DcUser, type FakeDiscord } from '../fixtures/fake-discord.js';
import { startFakeTelegram } from '../fixtures/fake-telegram.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Discord end to end: the real svc with a channels worker talking @discordjs/ws and
 * @discordjs/rest to a local fake of Discord's Gateway and REST API. A user writes in a DM; the
 * agent (fake model) answers there, streamed by edits; strangers get a pairing code; in a server
 * only what mentions or replies to the bot is answered; approvals are buttons; a dropped gateway
 * connection is resumed (RESUME, the missed event replayed); send/test/send-file with a 502 and
 * Discord's reason, a 429 waited out. The bot token never shows.
 */

const TOKEN = 'MTAwMDAwMDAwMDAwMDAwMDAx.GsvcFk.FakeDiscordTokenForTests_abcdefXYZ012';
const TG_TOKEN = '123456789:AAHsvcFakeTokenBesideDiscord_abcdXY';
const ALICE: DcUser = { id: '100000000000000042', username: 'alice' };
const MALLORY: DcUser = { id: '100000000000000066', username: 'mallory' };
const GENERAL = { id: '300000000000000001', name: 'general' };

let rig: TurnRig;
let dc: FakeDiscord;
const answered: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}

const channel = async () => (await api('GET', '/api/channels/discord')).body;
const running = () =>
  waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    20_000,
    'discord running',
  );
const dmOf = (u: DcUser) => dc.channel(dc.dmOf(u));
const lastText = (u: DcUser) => dmOf(u).at(-1)?.content ?? '';
const settledIn = (channelId: string, text: string) =>
  waitFor(
    () => dc.channel(channelId).find((m) => m.content === text),
    20_000,
    `a message "${text}" in ${channelId}`,
  );
const settled = (u: DcUser, text: string) => settledIn(dc.dmOf(u), text);
/** What the model was last given as the user's words. */
const lastUserWords = () => {
  const body = rig.fake.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
  return String(body.messages.filter((m) => m.role === 'user').at(-1)!.content);
};

test.before(async () => {
  dc = await startFakeDiscord(TOKEN);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  await dc?.close();
});

test('connect: validated, saved with the token masked; the bot identifies on the configured gateway', async () => {
  const bad = await api('POST', '/api/channels/discord', {
    bot_token: '123456789',
    api_base_url: dc.apiUrl,
  });
  // Each refusal names the field as the form labels it (the key stays in details).
  assertFieldError(bad, { path: 'bot_token', label: 'Bot token' }, /Developer Portal/);
  const missing = await api('POST', '/api/channels/discord', { allowed_users: ALICE.id });
  assertFieldError(missing, { path: 'bot_token', label: 'Bot token' }, /Bot token: required\.$/);
  const badGw = await api('POST', '/api/channels/discord', {
    bot_token: TOKEN,
    gateway_url: 'http://example.com',
  });
  assertFieldError(
    badGw,
    { path: 'gateway_url', label: 'Gateway address' },
    /Gateway address: must be a ws:\/\/ or wss:\/\/ address/,
  );

  const username = await api('POST', '/api/channels/discord', {
    bot_token: TOKEN,
    allowed_users: 'alice, 100000000000000042',
  });
  assertFieldError(
    username,
    { path: 'allowed_users.0', label: 'Who may talk to the agent, entry 1' },
    /a Discord user id is 17-20 digits/,
  );
  const versioned = await api('POST', '/api/channels/discord', {
    bot_token: TOKEN,
    api_base_url: 'https://discord.com/api/v10',
  });
  assertFieldError(
    versioned,
    { path: 'api_base_url', label: 'REST API address' },
    /the API root without the version/,
  );

  const saved = await api('POST', '/api/channels/discord', {
    bot_token: TOKEN,
    api_base_url: dc.apiUrl,
    gateway_url: dc.gatewayUrl,
    allowed_users: ALICE.id,
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.fields.bot_token, `********${TOKEN.slice(-4)}`);
  assert.equal(saved.body.fields.allowed_users, [ALICE.id]);
  const ch = await running();
  assert.is(ch.account, '@svc_test_bot');
  const avail = await api('GET', '/api/channels/available');
  const discord = avail.body.platforms.find((p: any) => p.platform === 'discord');
  assert.is(discord.label, 'Discord');
  assert.equal(
    discord.fields.map((f: any) => [f.name, f.required, f.secret]),
    [
      ['bot_token', true, true],
      ['allowed_users', false, false],
      ['api_base_url', false, false],
      ['gateway_url', false, false],
    ],
  );

  // The gateway: the configured address (not the one GET /gateway/bot names), IDENTIFY with
  // the message intents, heartbeats answered.
  assert.equal(dc.connections, ['/gateway']);
  const identify = dc.frames.filter((f) => f.op === 2);
  assert.is(identify.length, 1);
  assert.is((identify[0]!.d as { intents: number }).intents, (1 << 9) | (1 << 12));
  await waitFor(() => dc.frames.some((f) => f.op === 1), 20_000, 'a heartbeat');
  assert.ok(
    dc.calls.some((c) => c.method === 'GET' && c.path === '/users/@me'),
    'who the bot is was asked first',
  );

  // Saving again with the masked token (as the form sends it back) keeps the real one.
  const again = await api('POST', '/api/channels/discord', {
    bot_token: saved.body.fields.bot_token,
    allowed_users: `${ALICE.id}`,
  });
  assert.is(again.status, 200, JSON.stringify(again.body));
  assert.ok(
    readFileSync(join(rig.server.home, 'config.yml'), 'utf8').includes(TOKEN),
    'config.yml keeps the real token',
  );
  await running();
});

test('an allowed user writes in a DM; the agent answers there, streamed by edits', async () => {
  const reply: FakeReply = {
    parts: [{ text: ['Hello ', 'from ', '**svc**', ', streaming', ' by edits.'] }],
    delayMs: 400,
  };
  rig.fake.enqueue(reply);
  dc.userSaysDM(ALICE, 'hi there');
  const final = await settled(ALICE, 'Hello from **svc**, streaming by edits.');
  assert.ok(
    final.history.length >= 2,
    `the reply was edited as it streamed: ${JSON.stringify(final.history)}`,
  );
  assert.ok(
    final.content.startsWith(final.history[0]!),
    'the first text was the start of the reply',
  );
  assert.is(dmOf(ALICE).length, 1, 'one message, edited in place');
  assert.ok(
    dc.calls.some((c) => c.method === 'POST' && c.path === `/channels/${dc.dmOf(ALICE)}/typing`),
    'typing was shown',
  );
  const sent = dc.calls.find(
    (c) => c.method === 'POST' && c.path === `/channels/${dc.dmOf(ALICE)}/messages`,
  )!.body as { allowed_mentions: unknown };
  assert.equal(sent.allowed_mentions, { parse: [] }, 'replies never ping anyone');
  assert.is(lastUserWords(), 'hi there');

  const s = (await api('GET', '/api/sessions')).body.items.find(
    (x: any) => x.channel === 'discord',
  );
  assert.ok(s, 'a discord session is listed');
  assert.match(s.title, /Discord · alice/);
});

test('a stranger gets a pairing code and no turn', async () => {
  const before = rig.fake.requests.length;
  dc.userSaysDM(MALLORY, 'let me in, run rm -rf');
  const msg = await waitFor(() => dmOf(MALLORY)[0], 20_000, 'the pairing reply');
  const code = /pairing code is ([A-Z0-9]{6})/.exec(msg.content)?.[1];
  assert.ok(code, msg.content);
  const list = await api('GET', '/api/channels/discord/pairings');
  assert.equal(
    list.body.items.map((p: any) => [p.code, p.user_id, p.name, p.status]),
    [[code, MALLORY.id, 'mallory', 'pending']],
  );
  assert.is(rig.fake.requests.length, before, 'nothing from a stranger reached the model');
  const sessions = (await api('GET', '/api/sessions')).body.items;
  assert.not.ok(
    sessions.some((x: any) => x.title.includes('mallory')),
    'no session for a stranger',
  );
});

test('in a server, only a message that mentions or replies to the bot is answered, without the mention', async () => {
  const before = rig.fake.requests.length;
  dc.userSaysInGuild(ALICE, GENERAL, 'who is bringing the cake on sunday?');
  rig.fake.enqueue(textReply('Four.'));
  dc.userSaysInGuild(ALICE, GENERAL, 'what is 2+2?', { mention: true });
  const four = await settledIn(GENERAL.id, 'Four.');
  assert.is(
    rig.fake.requests.length,
    before + 1,
    'the message that did not address the bot never reached the model',
  );
  assert.is(lastUserWords(), 'what is 2+2?');
  assert.is(dc.channel(GENERAL.id).length, 1, 'the bot said nothing to the other message');

  rig.fake.enqueue(textReply('Five.'));
  dc.userSaysInGuild(ALICE, GENERAL, 'and 2+3?', { replyTo: four.id });
  await settledIn(GENERAL.id, 'Five.');
  assert.is(lastUserWords(), 'and 2+3?');
  const s = (await api('GET', '/api/sessions')).body.items.filter(
    (x: any) => x.channel === 'discord' && x.title.includes('#general'),
  );
  assert.is(s.length, 1, 'the server channel is its own session, titled by its name');
});

test('an approval is asked with buttons; a press answers it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-discord-outside-'));
  const target = join(dir, 'x.txt');
  try {
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'dc1',
              name: 'write_file',
              arguments: [JSON.stringify({ path: target, content: 'from discord' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Written.'),
    );
    dc.userSaysDM(ALICE, 'write the file');
    const q = await waitFor(
      () =>
        dmOf(ALICE).find(
          (m) => m.content.startsWith('⚠️ Allow write_file') && m.content.includes(target),
        ),
      20_000,
      'the question',
    );
    const buttons = (
      q.components as {
        type: number;
        components: { type: number; label: string; custom_id: string }[];
      }[]
    ).flatMap((row) => (assert.is(row.type, 1), row.components));
    assert.equal(
      buttons.map((b) => [b.type, b.label]),
      [
        [2, '✅ Allow once'],
        [2, '🔁 Allow for session'],
        [2, '❌ Deny'],
      ],
    );
    assert.not.ok(existsSync(target));
    const pressed = dc.press(ALICE, q, buttons[0]!.custom_id);
    await settled(ALICE, 'Written.');
    assert.is(readFileSync(target, 'utf8'), 'from discord');
    assert.equal(
      dc.callbacks.find((c) => c.id === pressed),
      { id: pressed, type: 6 },
      'the press was acknowledged (deferred update)',
    );
    await waitFor(
      () => /→ Allowed once$/.test(q.content),
      20_000,
      'the question edited with the answer',
    );
    assert.equal(q.components, [], 'the answered question keeps no buttons');

    // In a server channel the question is asked there, and a member's press answers it (denied here).
    const denied = join(dir, 'y.txt');
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'dc2',
              name: 'write_file',
              arguments: [JSON.stringify({ path: denied, content: 'no' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Not written, then.'),
    );
    dc.userSaysInGuild(ALICE, GENERAL, 'write another file', { mention: true });
    const gq = await waitFor(
      () =>
        dc
          .channel(GENERAL.id)
          .find((m) => m.content.startsWith('⚠️ Allow write_file') && m.content.includes(denied)),
      20_000,
      'the question in the server',
    );
    const deny = (
      gq.components as { components: { label: string; custom_id: string }[] }[]
    )[0]!.components.find((b) => b.label === '❌ Deny')!;
    dc.press(ALICE, gq, deny.custom_id);
    await settledIn(GENERAL.id, 'Not written, then.');
    assert.not.ok(existsSync(denied));
    await waitFor(
      () => /→ Denied$/.test(gq.content),
      20_000,
      'the server question edited with the answer',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a dropped gateway connection is resumed: what came meanwhile is replayed and answered, and so is the next message', async () => {
  assert.is(dc.frames.filter((f) => f.op === 6).length, 0);
  dc.dropConnection();
  rig.fake.enqueue(textReply('Got it while you were away.'));
  dc.userSaysDM(ALICE, 'are you still there?');
  await settled(ALICE, 'Got it while you were away.');
  const resume = dc.frames.find((f) => f.op === 6);
  assert.ok(resume, 'RESUME was sent');
  assert.is(resume!.path, '/resume', 'on the resume_gateway_url READY gave');
  assert.is(
    dc.frames.filter((f) => f.op === 2).length,
    1,
    'no second IDENTIFY: the session was resumed',
  );
  rig.fake.enqueue(textReply('And this one too.'));
  dc.userSaysDM(ALICE, 'and now?');
  await settled(ALICE, 'And this one too.');
  assert.is(
    dmOf(ALICE).filter((m) => m.content === 'Got it while you were away.').length,
    1,
    'answered once',
  );
  assert.is((await channel()).state, 'running');
});

test('/help and /status answer without the model', async () => {
  const before = rig.fake.requests.length;
  dc.userSaysDM(ALICE, '/help');
  await waitFor(() => lastText(ALICE).includes('/new'), 20_000, 'help');
  dc.userSaysDM(ALICE, '/status');
  await waitFor(() => lastText(ALICE).startsWith('Session "Discord · alice"'), 20_000, 'status');
  assert.is(rig.fake.requests.length, before);
});

test('a file sent to the bot reaches the agent as an attachment', async () => {
  rig.fake.enqueue(textReply('Got your notes.'));
  dc.userSaysDM(ALICE, 'what is in this file?', {
    attachments: [
      {
        filename: 'notes.txt',
        bytes: Buffer.from('remember the milk, 42 litres'),
        contentType: 'text/plain',
      },
    ],
  });
  await settled(ALICE, 'Got your notes.');
  assert.equal(dc.downloads, ['notes.txt']);
  const path = /Attached file: \S*notes\.txt \(text\/plain, 28 bytes\) at ([^\]"\\]+)/.exec(
    JSON.stringify(rig.fake.requests.at(-1)!.body),
  )?.[1];
  assert.ok(path, 'the model was told of the file');
  assert.is(readFileSync(path!, 'utf8'), 'remember the milk, 42 litres');

  // An attachment that points anywhere but Discord's CDN is not fetched, and nothing reaches the model.
  const before = rig.fake.requests.length;
  dc.userSaysDM(ALICE, 'and this one?', {
    attachments: [
      { filename: 'evil.txt', bytes: Buffer.from('x'), url: 'https://evil.example.com/evil.txt' },
    ],
  });
  await waitFor(
    () => lastText(ALICE).startsWith('evil.txt could not be received'),
    20_000,
    'the refusal',
  );
  assert.match(lastText(ALICE), /fetched from Discord's CDN only, not evil\.example\.com/);
  assert.is(rig.fake.requests.length, before);
});

test("send, test and send-file deliver; Discord's refusal is a 502 with its reason; a 429 is waited out", async () => {
  const dm = dc.dmOf(ALICE);
  const sent = await api('POST', '/api/channels/discord/send', {
    chat_id: dm,
    text: 'ping **bold**',
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  const ping = await settled(ALICE, 'ping **bold**');
  assert.is(sent.body.message_id, ping.id);

  const refused = await api('POST', '/api/channels/discord/send', {
    chat_id: '404000000000000001',
    text: 'to nowhere',
  });
  assert.is(refused.status, 502, JSON.stringify(refused.body));
  assert.is(refused.body.error.code, 'platform_error');
  assert.match(refused.body.error.message, /Discord did not take the message: 404 Unknown Channel/);
  const notAnId = await api('POST', '/api/channels/discord/send', {
    chat_id: '123/../../users/@me',
    text: 'x',
  });
  assert.is(notAnId.status, 502, JSON.stringify(notAnId.body));
  assert.match(notAnId.body.error.message, /is not a Discord id/);

  // A real 429 (Retry-After and retry_after): waited out, then delivered once.
  dc.rateLimitNext(`POST /channels/${dm}/messages$`, 1);
  const slowed = await api('POST', '/api/channels/discord/send', {
    chat_id: dm,
    text: 'after a pause',
  });
  assert.is(slowed.status, 200, JSON.stringify(slowed.body));
  const tries = dc.calls.filter(
    (c) =>
      c.method === 'POST' &&
      c.path === `/channels/${dm}/messages` &&
      (c.body as { content?: string }).content === 'after a pause',
  );
  assert.equal(
    tries.map((c) => c.status),
    [429, 200],
  );
  assert.ok(
    tries[1]!.at - tries[0]!.at >= 900,
    `retry_after was honoured (${tries[1]!.at - tries[0]!.at} ms)`,
  );
  assert.is(dmOf(ALICE).filter((m) => m.content === 'after a pause').length, 1);

  // A wait longer than 30 s is not waited: the send fails at once with the reason.
  const busy = '555000000000000001';
  dc.rateLimitNext(`POST /channels/${busy}/messages$`, 60);
  const started = Date.now();
  const limited = await api('POST', '/api/channels/discord/send', { chat_id: busy, text: 'later' });
  assert.is(limited.status, 502, JSON.stringify(limited.body));
  assert.match(limited.body.error.message, /rate limited for 60 s/, limited.body.error.message);
  // Sooner than the minute asked for (however loaded the machine), and never tried again.
  assert.ok(Date.now() - started < 60_000, 'not held up for the minute');
  assert.equal(
    dc.calls
      .filter((c) => c.method === 'POST' && c.path === `/channels/${busy}/messages`)
      .map((c) => c.status),
    [429],
  );

  // Content Discord refuses as an invalid form body goes again as plain text.
  dc.failNext(`POST /channels/${dm}/messages$`, {
    status: 400,
    body: {
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        content: { _errors: [{ code: 'CONTENT_TYPE_INVALID', message: 'Invalid content.' }] },
      },
    },
  });
  assert.is(
    (
      await api('POST', '/api/channels/discord/send', {
        chat_id: dm,
        text: 'a **b** [c](https://example.com/c)',
      })
    ).status,
    200,
  );
  assert.is(lastText(ALICE), 'a b c (https://example.com/c)');

  // Past Discord's 2000 characters a text goes as several messages.
  const long = Array.from({ length: 150 }, (_, i) => `Line ${i} of a long report.`).join('\n');
  const before = dmOf(ALICE).length;
  assert.is(
    (await api('POST', '/api/channels/discord/send', { chat_id: dm, text: long })).status,
    200,
  );
  const parts = dmOf(ALICE).slice(before);
  assert.ok(
    parts.length >= 2 && parts.every((m) => m.content.length <= 2000),
    `split into ${parts.length}`,
  );
  assert.is(parts.map((m) => m.content).join('\n'), long);

  const tested = await api('POST', '/api/channels/discord/test', { chat_id: dm });
  assert.is(tested.status, 200, JSON.stringify(tested.body));
  assert.match(lastText(ALICE), /Test message from svc/);
  const testedBad = await api('POST', '/api/channels/discord/test', {
    chat_id: '404000000000000002',
  });
  assert.is(testedBad.status, 502);
  assert.match(testedBad.body.error.message, /Unknown Channel/);

  const form = new FormData();
  form.append('file', new Blob([Buffer.from('report body 42')]), 'report.txt');
  const up = await fetch(`http://127.0.0.1:${rig.port}/api/upload`, { method: 'POST', body: form });
  assert.is(up.status, 201);
  const name = ((await up.json()) as { files: { name: string }[] }).files[0]!.name;
  const file = await api('POST', '/api/channels/discord/send-file', { chat_id: dm, upload: name });
  assert.is(file.status, 200, JSON.stringify(file.body));
  const att = dmOf(ALICE).at(-1)!.attachments;
  assert.equal(
    att.map((a) => [a.filename, a.bytes.toString()]),
    [['report.txt', 'report body 42']],
  );
  const fileBad = await api('POST', '/api/channels/discord/send-file', {
    chat_id: '404000000000000003',
    upload: name,
  });
  assert.is(fileBad.status, 502);
  assert.match(fileBad.body.error.message, /Unknown Channel/);
});

test('kill -9 of the channels worker: the adapter comes back and finishes the reply it was streaming, once', async () => {
  const pidOf = async () =>
    ((await api('GET', '/api/status')).body.processes as { role: string; pid: number }[]).find(
      (p) => p.role === 'channels' && p.pid > 0,
    )?.pid;
  const pid = await waitFor(pidOf, 10_000, 'the channels worker');
  const identifies = dc.frames.filter((f) => f.op === 2).length;
  rig.fake.enqueue({
    parts: [{ text: ['Survived ', 'the ', 'crash ', 'without ', 'a ', 'scratch.'] }],
    delayMs: 500,
  });
  dc.userSaysDM(ALICE, 'survive this');
  // Edited once: the worker had the streamed message's id (a kill between Discord taking the first
  // POST and the worker hearing its id would leave that first message behind, as on any platform).
  await waitFor(
    () => dmOf(ALICE).some((m) => m.content.startsWith('Survived') && m.history.length >= 2),
    20_000,
    'the reply streaming',
  );
  process.kill(pid, 'SIGKILL');
  await waitFor(async () => ((await pidOf()) ?? pid) !== pid, 20_000, 'a new channels worker');
  await settled(ALICE, 'Survived the crash without a scratch.');
  await running();
  assert.is(
    dc.frames.filter((f) => f.op === 2).length,
    identifies + 1,
    'the new worker identified afresh',
  );
  dc.userSaysDM(ALICE, '/help');
  await waitFor(() => lastText(ALICE).includes('/new'), 20_000, 'help after');
  assert.is(
    dmOf(ALICE).filter((m) => m.content.startsWith('Survived')).length,
    1,
    'one message for the reply, finished in place',
  );
});

test('a gateway closed with a fatal code: only the Discord adapter restarts, Telegram keeps running', async () => {
  const tg = await startFakeTelegram(TG_TOKEN);
  try {
    assert.is(
      (await api('POST', '/api/channels/telegram', { bot_token: TG_TOKEN, base_url: tg.url }))
        .status,
      200,
    );
    const tgUp = await waitFor(
      async () =>
        (await api('GET', '/api/channels/telegram')).body.state === 'running'
          ? (await api('GET', '/api/channels/telegram')).body
          : undefined,
      20_000,
      'telegram running',
    );
    const before = await channel();
    dc.closeGateway(4004, 'Authentication failed.');
    const failing = await waitFor(
      async () => {
        const c = await channel();
        return c.state === 'error' ? c : undefined;
      },
      20_000,
      'the discord error state',
    );
    assert.match(
      failing.error,
      /Discord closed the gateway: Authentication failed \(the bot token was refused\) \(trying again in \d+ s\)/,
    );
    const back = await waitFor(
      async () => {
        const c = await channel();
        return c.state === 'running' && c.restarts > before.restarts ? c : undefined;
      },
      30_000,
      'discord restarted',
    );
    assert.is(back.restarts, before.restarts + 1);
    const tgNow = (await api('GET', '/api/channels/telegram')).body;
    assert.equal(
      [tgNow.state, tgNow.restarts, tgNow.connected_since],
      ['running', 0, tgUp.connected_since],
      'telegram was not touched',
    );
    rig.fake.enqueue(textReply('Still here.'));
    dc.userSaysDM(ALICE, 'after the crash?');
    await settled(ALICE, 'Still here.');
  } finally {
    await api('DELETE', '/api/channels/telegram');
    await tg.close();
  }
});

test('a message during a restart drain is told to come again; the running turn still finishes', async () => {
  rig.fake.enqueue({ parts: [{ text: ['Long ', 'answer ', 'done.'] }], delayMs: 700 });
  dc.userSaysDM(ALICE, 'take your time');
  await waitFor(
    () => dmOf(ALICE).some((m) => m.content.startsWith('Long')),
    20_000,
    'the reply started',
  );
  assert.is((await api('POST', '/api/restart', {})).status, 202);
  dc.userSaysInGuild(ALICE, GENERAL, 'are you there?', { mention: true });
  await waitFor(
    () => dc.channel(GENERAL.id).some((m) => m.content.includes('restarting')),
    20_000,
    'the restarting reply',
  );
  await settled(ALICE, 'Long answer done.');
  await waitFor(
    async () => (await api('GET', '/api/status')).body?.state === 'running',
    30_000,
    'restarted',
  );
  await running();
});

test('a token Discord refuses: the state says why in words, and the adapter retries; only Discord restarts', async () => {
  const wrong = 'MTAwMDAwMDAwMDAwMDAwMDk5.GwrongT.ThisTokenIsNotKnownToTheFake_xyz0123';
  assert.is((await api('POST', '/api/channels/discord', { bot_token: wrong })).status, 200);
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
    /Discord did not accept the bot: 401: Unauthorized \(trying again in \d+ s\)/,
  );
  assert.not.ok(JSON.stringify(failing).includes(wrong));
  assert.is((await api('POST', '/api/channels/discord', { bot_token: TOKEN })).status, 200);
  await running();
  rig.fake.enqueue(textReply('Back.'));
  dc.userSaysDM(ALICE, 'back?');
  await settled(ALICE, 'Back.');
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
