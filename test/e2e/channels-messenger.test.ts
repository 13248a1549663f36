import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startFakeIlink, type FakeIlink } from '../fixtures/fake-ilink.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * The messenger (WeChat iLink) end to end: the QR login through a local fake of the iLink server
 * (code, scanned, expired and refreshed, confirmed), credentials kept 0600 and never answered,
 * then a conversation with context tokens; the expiry limit, cancel, and logout.
 */

const ALICE = 'wxid_alice@im.wechat';
let rig: TurnRig;
let wx: FakeIlink;
const answered: string[] = [];

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}
const login = async () => (await api('GET', '/api/channels/messenger/login')).body;
const loginIs = (status: string, extra: (s: any) => boolean = () => true) =>
  waitFor(
    async () => {
      const s = await login();
      return s.status === status && extra(s) ? s : undefined;
    },
    20_000,
    `login ${status}`,
  );
const channel = async () => (await api('GET', '/api/channels/messenger')).body;

test.before(async () => {
  wx = await startFakeIlink();
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  await wx?.close();
});

test('QR login: a code as URL and PNG, scanned, expired and refreshed, confirmed; credentials 0600', async () => {
  const badCdn = await api('POST', '/api/channels/messenger', {
    base_url: wx.url,
    cdn_base_url: 'file:///etc',
  });
  assertFieldError(
    badCdn,
    { path: 'cdn_base_url', label: 'Media server' },
    /Media server: must be an http:\/\/ or https:\/\/ address/,
  );
  const saved = await api('POST', '/api/channels/messenger', {
    base_url: wx.url,
    allowed_users: ALICE,
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.label, 'WeChat');
  await waitFor(async () => (await channel()).state === 'needs_login', 20_000, 'needs_login');

  const started = await api('POST', '/api/channels/messenger/login', {});
  assert.is(started.status, 200, JSON.stringify(started.body));
  assert.is(started.body.status, 'pending');
  assert.match(started.body.qr_url, /^https:\/\/liteapp\.weixin\.qq\.com\/q\//);
  assert.match(started.body.qr_png, /^data:image\/png;base64,/);
  const png = Buffer.from(started.body.qr_png.split(',')[1], 'base64');
  assert.equal([...png.subarray(1, 4)], [...Buffer.from('PNG')]);
  assert.is(started.body.codes, 1);
  // One flow at a time: asking again answers the same flow.
  assert.is(
    (await api('POST', '/api/channels/messenger/login', {})).body.qr_url,
    started.body.qr_url,
  );

  wx.scan(wx.codes[0]!);
  await loginIs('scanned');
  wx.expire(wx.codes[0]!);
  const fresh = await loginIs('pending', (s) => s.codes === 2);
  assert.is.not(fresh.qr_url, started.body.qr_url);
  wx.confirm(wx.codes[1]!, ALICE);
  const done = await loginIs('confirmed');
  assert.is(done.user_id, ALICE);

  const file = join(rig.server.home, 'channels', 'messenger.json');
  assert.ok(existsSync(file));
  assert.is(statSync(file).mode & 0o777, 0o600);
  const ch = await waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    20_000,
    'messenger running',
  );
  assert.is(ch.account, ALICE);
  // Already logged in: POST answers so, without a new code.
  assert.is((await api('POST', '/api/channels/messenger/login', {})).body.status, 'logged_in');
});

test('a message from an allowed user is answered with its context token; send and its 502', async () => {
  rig.fake.enqueue(textReply('Hello **from** svc over WeChat.'));
  wx.userSays(ALICE, '你好');
  const reply = await waitFor(() => wx.sent.find((m) => m.to === ALICE), 20_000, 'the reply');
  assert.is(reply.text, 'Hello from svc over WeChat.');
  assert.match(reply.context_token, /^ctx-/);
  // "Typing…" was shown while the turn ran (a ticket from getconfig), and taken away at the reply.
  const typed = await waitFor(
    () =>
      wx.typing.filter((t) => t.to === ALICE).at(-1)?.status === 2
        ? wx.typing.filter((t) => t.to === ALICE)
        : undefined,
    20_000,
    'typing stopped',
  );
  assert.is(typed[0]!.status, 1, JSON.stringify(typed));
  assert.ok(
    wx.calls.some(
      (c) =>
        c.path === '/ilink/bot/getconfig' &&
        c.body.ilink_user_id === ALICE &&
        String(c.body.context_token).startsWith('ctx-'),
    ),
  );
  const sessions = (await api('GET', '/api/sessions')).body.items;
  assert.ok(sessions.some((s: any) => s.channel === 'messenger'));

  const sent = await api('POST', '/api/channels/messenger/send', {
    chat_id: ALICE,
    text: 'from the API',
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  await waitFor(() => wx.sent.some((m) => m.text === 'from the API'), 20_000, 'sent');
  const nobody = await api('POST', '/api/channels/messenger/send', {
    chat_id: 'wxid_nobody',
    text: 'x',
  });
  assert.is(nobody.status, 502, JSON.stringify(nobody.body));
  assert.match(nobody.body.error.message, /wrote to it first/);
  // Every authenticated call carried the protocol's headers.
  const posts = wx.calls.filter((c) => c.path.startsWith('/ilink/bot/send'));
  assert.ok(
    posts.every(
      (c) =>
        c.headers.authorizationtype === 'ilink_bot_token' &&
        typeof c.headers['x-wechat-uin'] === 'string',
    ),
  );
});

test('an approval is asked in words and answered by a reply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wx-outside-'));
  const target = join(dir, 'y.txt');
  try {
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'wx1',
              name: 'write_file',
              arguments: [JSON.stringify({ path: target, content: 'via wechat' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Done writing.'),
    );
    wx.userSays(ALICE, 'please write it');
    const q = await waitFor(
      () => wx.sent.find((m) => m.text.startsWith('⚠️ Allow write_file')),
      20_000,
      'the question',
    );
    assert.match(q.text, /Reply "yes"/);
    wx.userSays(ALICE, 'yes');
    await waitFor(() => wx.sent.find((m) => m.text === 'Done writing.'), 30_000, 'the reply');
    assert.is(readFileSync(target, 'utf8'), 'via wechat');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('expired three times: the flow gives up; cancel; logout', async () => {
  const again = await api('POST', '/api/channels/messenger/login', { force: true });
  assert.is(again.body.status, 'pending');
  for (let i = 1; i <= 3; i++) {
    const code = wx.codes.at(-1)!;
    wx.expire(code);
    if (i < 3) await loginIs('pending', (s) => s.codes === i + 1);
  }
  const gaveUp = await loginIs('expired');
  assert.match(gaveUp.error, /expired 3 times/);

  await api('POST', '/api/channels/messenger/login', { force: true });
  await loginIs('pending');
  const cancelled = await api('DELETE', '/api/channels/messenger/login');
  assert.is(cancelled.body.status, 'cancelled');
  // Still logged in with the earlier credentials; DELETE again logs out.
  const out = await api('DELETE', '/api/channels/messenger/login');
  assert.is(out.body.status, 'idle');
  assert.not.ok(existsSync(join(rig.server.home, 'channels', 'messenger.json')));
  await waitFor(
    async () => (await channel()).state === 'needs_login',
    20_000,
    'needs_login after logout',
  );
});

test('the bot token never appears in a response or a log', async () => {
  for (const body of answered)
    assert.not.ok(body.includes(wx.token), `a response carried the token: ${body.slice(0, 200)}`);
  assert.not.ok(rig.server.output().includes(wx.token));
  const logs = join(rig.server.home, 'logs');
  for (const f of readdirSync(logs))
    assert.not.ok(readFileSync(join(logs, f), 'utf8').includes(wx.token), `logs/${f}`);
});

test.run();
