import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  startFakeWhatsapp,
  type FakeWhatsapp,
  type WaSocketHandle,
} from '../fixtures/fake-baileys.js';
import { textReply } from '../fixtures/fake-provider.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * WhatsApp at Baileys' socket boundary (the live protocol cannot be served locally): svc's real
 * channels worker runs the real adapter and QR login against a fake socket with Baileys' event
 * shape (test/fixtures/fake-baileys.ts). The QR login through the shared login route, the keys
 * 0600, a connection, an allowed user's turn answered by edits, a stranger's pairing code, an
 * approval by a numbered reply, files both ways, a send failure as 502, logout. And the real
 * Baileys module loads.
 */

const ALICE = '4915111111111';
const ALICE_JID = `${ALICE}@s.whatsapp.net`;
const MALLORY_JID = '4915666666666@s.whatsapp.net';
const BOT = '4915000000000';
let rig: TurnRig;
let wa: FakeWhatsapp;
const answered: string[] = [];
let msgs = 0;

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}
const login = async () => (await api('GET', '/api/channels/whatsapp/login')).body;
const loginIs = (status: string, extra: (s: any) => boolean = () => true) =>
  waitFor(
    async () => {
      const s = await login();
      return s.status === status && extra(s) ? s : undefined;
    },
    30_000,
    `login ${status}`,
  );
const channel = async () => (await api('GET', '/api/channels/whatsapp')).body;
const socket = (n: number) => waitFor(() => wa.sockets[n], 30_000, `WhatsApp socket #${n + 1}`);
/** A user's message as Baileys delivers it: a WebMessageInfo in a `notify` upsert. */
function says(
  sock: WaSocketHandle,
  jid: string,
  message: Record<string, unknown>,
  pushName = 'Alice',
): string {
  const id = `3A${(++msgs).toString().padStart(18, '0')}`;
  sock.emit('messages.upsert', {
    type: 'notify',
    messages: [
      {
        key: { remoteJid: jid, fromMe: false, id },
        messageTimestamp: Math.floor(Date.now() / 1000),
        pushName,
        message,
      },
    ],
  });
  return id;
}
const shows = (jid: string, text: string) =>
  waitFor(() => wa.chat(jid).includes(text) || undefined, 30_000, `"${text}" in ${jid}`);
let live: WaSocketHandle;

test.before(async () => {
  wa = await startFakeWhatsapp();
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    env: {
      SVC_WHATSAPP_TEST_SOCKET: fileURLToPath(
        new URL('../fixtures/fake-baileys.js', import.meta.url),
      ),
      SVC_WHATSAPP_TEST_CONTROL: wa.url,
    },
  });
});

test.after(async () => {
  await rig?.stop();
  await wa?.close();
});

test('the real Baileys module loads and has what svc calls', async () => {
  const b = await import('@whiskeysockets/baileys');
  assert.type(b.makeWASocket, 'function');
  assert.type(b.useMultiFileAuthState, 'function');
  assert.type(b.downloadMediaMessage, 'function');
  assert.type(b.initAuthCreds, 'function');
  assert.is(b.DisconnectReason.restartRequired, 515);
  assert.is(b.DisconnectReason.loggedOut, 401);
  assert.type(b.BufferJSON.reviver, 'function');
  assert.type(b.initAuthCreds().noiseKey.private, 'object');
});

test('QR login through the shared route: codes shown, scanned, restart, open; keys 0600 in a 0700 folder', async () => {
  const bad = await api('POST', '/api/channels/whatsapp', { allowed_users: 'alice' });
  assertFieldError(
    bad,
    { path: 'allowed_users.0', label: 'Who may talk to the agent, entry 1' },
    /a WhatsApp user is a phone number/,
  );
  assert.is(
    (await api('POST', '/api/channels/telegram/login', {})).status,
    404,
    'a token platform has no QR login',
  );
  const saved = await api('POST', '/api/channels/whatsapp', { allowed_users: `+${ALICE}` });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.label, 'WhatsApp');
  assert.equal(saved.body.fields.allowed_users, [ALICE]);
  await waitFor(async () => (await channel()).state === 'needs_login', 30_000, 'needs_login');

  // needs_login can show a moment before the adapter takes a login (the channels worker reports
  // the state, then starts the adapter); svc answers 409 "try again in a moment" meanwhile.
  const started = await waitFor(
    async () => {
      const r = await api('POST', '/api/channels/whatsapp/login', {});
      return r.status === 409 && /not running yet/.test(r.body.error?.message) ? undefined : r;
    },
    30_000,
    'the login to start',
  );
  assert.is(started.status, 200, JSON.stringify(started.body));
  assert.is(started.body.platform, 'whatsapp');
  const s1 = await socket(0);
  assert.not.ok(s1.registered, 'a login socket starts with fresh keys');
  const QR1 = '2@Qm9ndXNRcjE=,Zm9vYmFy,YmF6cXV4,cGFpcg==';
  s1.qr(QR1);
  const shown = await loginIs('pending', (s) => s.qr_url === QR1);
  assert.match(shown.qr_png, /^data:image\/png;base64,/);
  assert.equal(
    [...Buffer.from(shown.qr_png.split(',')[1], 'base64').subarray(1, 4)],
    [...Buffer.from('PNG')],
  );
  // Baileys refreshes the code by itself: the new one is shown.
  s1.qr(`${QR1}-2`);
  await loginIs('pending', (s) => s.qr_url === `${QR1}-2` && s.codes === 2);
  // The phone links the device (pair-success: creds with `me`), then the protocol restarts the socket.
  s1.emit('creds.update', { me: { id: `${BOT}:7@s.whatsapp.net`, name: 'svc' }, registered: true });
  await loginIs('scanned');
  s1.close(515, 'Stream Errored (restart required)');
  const s2 = await socket(1);
  s2.open(`${BOT}:7@s.whatsapp.net`);
  const done = await loginIs('confirmed');
  assert.is(done.user_id, BOT);
  assert.is(done.qr_png, null);

  const dir = join(rig.server.home, 'channels', 'whatsapp');
  assert.is(statSync(dir).mode & 0o777, 0o700);
  const files = readdirSync(dir);
  assert.ok(files.includes('creds.json'), files.join(','));
  for (const f of files) assert.is(statSync(join(dir, f)).mode & 0o777, 0o600, f);
  assert.not.ok(
    existsSync(join(rig.server.home, 'channels', 'whatsapp-login')),
    'the staging keys moved',
  );

  // The adapter opens its own socket with the saved keys; open → running, the account shown.
  live = await socket(2);
  assert.ok(live.registered);
  live.open(`${BOT}:7@s.whatsapp.net`);
  const ch = await waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    30_000,
    'whatsapp running',
  );
  assert.is(ch.account, BOT);
  assert.is((await api('POST', '/api/channels/whatsapp/login', {})).body.status, 'logged_in');
});

test('an allowed user is answered (streamed by edits, WhatsApp markup); a stranger gets a pairing code and no turn; groups are ignored', async () => {
  rig.fake.enqueue(textReply('Hello **from** svc over WhatsApp.'));
  says(live, ALICE_JID, { conversation: 'hallo' });
  await shows(ALICE_JID, 'Hello *from* svc over WhatsApp.');
  assert.ok(
    wa.presence.some((p) => p.jid === ALICE_JID && p.type === 'composing'),
    'typing shown',
  );
  const sessions = (await api('GET', '/api/sessions')).body.items;
  assert.ok(sessions.some((s: any) => s.channel === 'whatsapp'));

  const before = rig.fake.requests.length;
  says(live, MALLORY_JID, { extendedTextMessage: { text: 'let me in' } }, 'Mallory');
  const pairing = await waitFor(
    () => wa.chat(MALLORY_JID).find((t) => /pairing code is [A-Z0-9]{6}/.test(t)),
    30_000,
    'a pairing code',
  );
  const code = /pairing code is ([A-Z0-9]{6})/.exec(pairing)![1]!;
  const pairings = (await api('GET', '/api/channels/whatsapp/pairings')).body.items;
  assert.ok(pairings.some((p: any) => p.code === code && p.user_id === '4915666666666'));
  // A group message, even from Alice, starts nothing.
  says(live, '120363000000000000@g.us', { conversation: 'group chatter' });
  says(live, ALICE_JID, { conversation: '/status' });
  await waitFor(
    () => wa.chat(ALICE_JID).find((t) => t.startsWith('Session "WhatsApp')),
    30_000,
    '/status',
  );
  assert.is(rig.fake.requests.length, before, 'no turn for the stranger, the group or a command');
  rig.fake.reset();
});

test('an approval is asked in the chat and answered by a numbered reply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-whatsapp-outside-'));
  const target = join(dir, 'w.txt');
  try {
    // The user answers before WhatsApp confirms the question's send to svc: the answer still counts.
    wa.confirmLate(400);
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'wa1',
              name: 'write_file',
              arguments: [JSON.stringify({ path: target, content: 'via whatsapp' })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('Done writing.'),
    );
    says(live, ALICE_JID, { conversation: 'please write it' });
    const q = await waitFor(
      () => wa.chat(ALICE_JID).find((t) => t.startsWith('⚠️ Allow write_file')),
      30_000,
      'the question',
    );
    assert.match(q, /\(1\)/);
    says(live, ALICE_JID, { conversation: '1' });
    await shows(ALICE_JID, 'Done writing.').catch((err: Error) => {
      throw new Error(
        `${err.message}; the chat ends: ${JSON.stringify(wa.chat(ALICE_JID).slice(-4))}`,
      );
    });
    // The question is edited to its answer (or, when the answer beat the send's confirmation, the answer follows it).
    await waitFor(
      () =>
        wa
          .chat(ALICE_JID)
          .some(
            (t) =>
              (t.startsWith('⚠️ Allow write_file') && t.endsWith('→ Allowed once')) ||
              t === '→ Allowed once',
          ) || undefined,
      30_000,
      'the answer shown',
    );
    assert.is(readFileSync(target, 'utf8'), 'via whatsapp');
  } finally {
    wa.confirmLate(0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('files: a document sent in reaches the model; send-file sends a document; a refused send is a 502 with the reason', async () => {
  rig.fake.enqueue(textReply('Got the list.'));
  const id = `3A${(++msgs).toString().padStart(18, '0')}`;
  wa.media.set(id, Buffer.from('eggs, milk, 42 apples'));
  live.emit('messages.upsert', {
    type: 'notify',
    messages: [
      {
        key: { remoteJid: ALICE_JID, fromMe: false, id },
        pushName: 'Alice',
        message: {
          documentMessage: {
            fileName: 'list.txt',
            mimetype: 'text/plain',
            fileLength: 21,
            caption: 'what is on it?',
            mediaKey: Buffer.alloc(32, 1).toString('base64'),
            directPath: '/v/t62.7119-24/fake',
          },
        },
      },
    ],
  });
  await shows(ALICE_JID, 'Got the list.');
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /what is on it\?/);
  const path = /Attached file: \S*list\.txt \(text\/plain, 21 bytes\) at ([^\]"\\]+)/.exec(
    sent,
  )?.[1];
  assert.ok(path, sent.slice(0, 1500));
  assert.is(readFileSync(path!, 'utf8'), 'eggs, milk, 42 apples');

  const form = new FormData();
  form.append('file', new Blob([Buffer.from('%PDF-1.4 fake')]), 'report.pdf');
  const up = await fetch(`http://127.0.0.1:${rig.port}/api/upload`, { method: 'POST', body: form });
  const upload = ((await up.json()) as { files: { name: string }[] }).files[0]!.name;
  const file = await api('POST', '/api/channels/whatsapp/send-file', { chat_id: ALICE, upload });
  assert.is(file.status, 200, JSON.stringify(file.body));
  const doc = wa.sent.at(-1)!;
  assert.is(doc.jid, ALICE_JID);
  assert.is(doc.content.fileName, 'report.pdf');
  assert.is(doc.content.mimetype, 'application/pdf');
  assert.is(readFileSync(doc.content.document!.url, 'utf8'), '%PDF-1.4 fake');

  const ok = await api('POST', '/api/channels/whatsapp/send', {
    chat_id: ALICE,
    text: 'from the **API**',
  });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body.message_id, wa.sent.at(-1)!.id);
  await shows(ALICE_JID, 'from the *API*');
  wa.failSends('not-acceptable: the number is not on WhatsApp');
  try {
    const refused = await api('POST', '/api/channels/whatsapp/send', {
      chat_id: '4915999999999',
      text: 'x',
    });
    assert.is(refused.status, 502, JSON.stringify(refused.body));
    assert.match(
      refused.body.error.message,
      /WhatsApp did not take the message: not-acceptable: the number is not on WhatsApp/,
    );
    const test502 = await api('POST', '/api/channels/whatsapp/test', { chat_id: ALICE });
    assert.is(test502.status, 502);
  } finally {
    wa.failSends(null);
  }
  const tested = await api('POST', '/api/channels/whatsapp/test', {});
  assert.is(tested.status, 200, JSON.stringify(tested.body));
  assert.is(tested.body.chat_id, ALICE_JID);
});

test('a message during a restart drain is told to come again; the running turn still finishes', async () => {
  // Mallory is approved by her pairing code: a bound user, with no turn of her own running.
  const code = (await api('GET', '/api/channels/whatsapp/pairings')).body.items.find(
    (p: any) => p.user_id === '4915666666666',
  ).code;
  assert.is(
    (await api('POST', '/api/channels/whatsapp/pairings', { code, decision: 'approve' })).status,
    200,
  );
  await waitFor(
    () => wa.chat(MALLORY_JID).some((t) => /approved/.test(t)) || undefined,
    30_000,
    'Mallory told',
  );
  rig.fake.enqueue({ parts: [{ text: ['Long ', 'answer ', 'done.'] }], delayMs: 700 });
  says(live, ALICE_JID, { conversation: 'take your time' });
  await waitFor(
    () => wa.chat(ALICE_JID).some((t) => t.startsWith('Long')) || undefined,
    30_000,
    'the reply started',
  );
  const n = wa.sockets.length;
  assert.is((await api('POST', '/api/restart', {})).status, 202);
  says(live, MALLORY_JID, { conversation: 'are you there?' }, 'Mallory');
  await waitFor(
    () => wa.chat(MALLORY_JID).some((t) => t.includes('restarting')) || undefined,
    30_000,
    'the restarting reply',
  );
  await shows(ALICE_JID, 'Long answer done.');
  await waitFor(
    async () => (await api('GET', '/api/status')).body?.state === 'running',
    60_000,
    'restarted',
  );
  // A restarted channels worker connects WhatsApp again with a socket of its own.
  const next = await waitFor(
    async () =>
      wa.sockets.slice(n).find((x) => x.registered && !x.ended) ??
      ((await channel()).state === 'running' && wa.sockets.length === n ? live : undefined),
    60_000,
    'WhatsApp back',
  );
  if (next !== live) {
    next.open(`${BOT}:7@s.whatsapp.net`);
    live = next;
  }
  await waitFor(
    async () => (await channel()).state === 'running',
    60_000,
    'whatsapp running after the restart',
  );
});

test('a dropped connection restarts only the adapter; logout removes the keys; a login fails or expires with why', async () => {
  const before = wa.sockets.length;
  live.close(428, 'Connection Closed');
  const again = await socket(before);
  assert.ok(again.registered);
  again.open(`${BOT}:7@s.whatsapp.net`);
  const ch = await waitFor(
    async () => ((await channel()).state === 'running' ? channel() : undefined),
    60_000,
    'running again',
  );
  assert.ok(ch.restarts >= 1);

  const out = await api('DELETE', '/api/channels/whatsapp/login');
  assert.is(out.body.status, 'idle');
  assert.not.ok(existsSync(join(rig.server.home, 'channels', 'whatsapp')));
  await waitFor(
    async () => (await channel()).state === 'needs_login',
    30_000,
    'needs_login after logout',
  );

  // No network: Baileys closes with 408 before any code; the login fails with its reason.
  const n = wa.sockets.length;
  await api('POST', '/api/channels/whatsapp/login', {});
  (await socket(n)).close(408, 'WebSocket Error (getaddrinfo ENOTFOUND web.whatsapp.com)');
  const failed = await loginIs('failed');
  assert.match(failed.error, /ENOTFOUND web\.whatsapp\.com/);
  // Codes shown but never scanned: Baileys gives up (408 after its QR refs) and the flow says expired.
  await api('POST', '/api/channels/whatsapp/login', {});
  const s = await socket(n + 1);
  s.qr('2@dW5zY2FubmVk,a2V5,aWQ=,YWR2');
  await loginIs('pending', (x) => x.codes === 1);
  s.close(408, 'QR refs attempts ended');
  const expired = await loginIs('expired');
  assert.match(expired.error, /QR codes \(1 shown\) expired without being scanned/);
  assert.not.ok(
    existsSync(join(rig.server.home, 'channels', 'whatsapp-login')),
    'the unfinished keys are gone',
  );
});

test('unlinked from the phone: the keys are removed and WhatsApp needs a login again', async () => {
  const n = wa.sockets.length;
  await api('POST', '/api/channels/whatsapp/login', {});
  const s = await socket(n);
  s.qr('2@YWdhaW4=,a2V5,aWQ=,YWR2');
  await loginIs('pending', (x) => x.codes === 1);
  s.emit('creds.update', { me: { id: `${BOT}:8@s.whatsapp.net`, name: 'svc' } });
  s.close(515, 'Stream Errored (restart required)');
  (await socket(n + 1)).open(`${BOT}:8@s.whatsapp.net`);
  await loginIs('confirmed');
  const adapter = await socket(n + 2);
  adapter.open(`${BOT}:8@s.whatsapp.net`);
  await waitFor(async () => (await channel()).state === 'running', 30_000, 'running');
  collect();
  adapter.close(401, 'Connection Failure');
  await waitFor(
    async () => (await channel()).state === 'needs_login',
    30_000,
    'needs_login after the unlink',
  );
  assert.not.ok(
    existsSync(join(rig.server.home, 'channels', 'whatsapp', 'creds.json')),
    'the keys are gone',
  );
  assert.is((await login()).status, 'idle');
});

test('the session keys never appear in a response or a log', async () => {
  // Keys the fake login wrote (Baileys' own fresh credentials): their private halves.
  const secrets = collectedKeys;
  assert.ok(secrets.length >= 2, 'keys were collected');
  for (const body of answered)
    for (const k of secrets)
      assert.not.ok(body.includes(k), `a response carried a key: ${body.slice(0, 200)}`);
  for (const k of secrets) assert.not.ok(rig.server.output().includes(k));
  const logs = join(rig.server.home, 'logs');
  for (const f of readdirSync(logs))
    for (const k of secrets)
      assert.not.ok(readFileSync(join(logs, f), 'utf8').includes(k), `logs/${f}`);
});

const collectedKeys: string[] = [];
/** Reads the private keys out of creds.json while it exists (before logout). */
function collect(): void {
  const file = join(rig.server.home, 'channels', 'whatsapp', 'creds.json');
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(/"private":\{"type":"Buffer","data":"([A-Za-z0-9+/=]{20,})"\}/g))
    collectedKeys.push(m[1]!);
}
test.after.each(() => collect());

test.run();
