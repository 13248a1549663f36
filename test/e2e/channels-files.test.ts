import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startFakeTelegram, type FakeTelegram, type TgUser } from '../fixtures/fake-telegram.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Files over Telegram, end to end with the real svc and a local fake of the Bot API: a document
 * sent to the bot is fetched (getFile, then the file URL), stored as an upload and reaches the
 * model as the turn's attachment, as an API turn's would; one over the cap gets a reply and no
 * turn; a file the agent wrote goes back to the chat with send-file {artifact}.
 */

const TOKEN = '123456789:AAHsvcFakeTokenForFiles_abcdefXYZ';
const ALICE: TgUser = { id: 4343, first_name: 'Alice' };
const CAP = 64 * 1024;

let rig: TurnRig;
let tg: FakeTelegram;
let dir = '';

const settled = (text: string) =>
  waitFor(() => tg.chat(ALICE.id).find((m) => m.text === text), 20_000, `a message "${text}"`);
const lastText = () => tg.chat(ALICE.id).at(-1)?.text ?? '';

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-ch-files-'));
  tg = await startFakeTelegram(TOKEN);
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: `limits:\n  upload_bytes: ${CAP}\n`,
  });
  const saved = await api(rig.port, 'POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
    allowed_users: String(ALICE.id),
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/telegram')).body.state === 'running',
    20_000,
    'telegram running',
  );
});

test.after(async () => {
  await rig?.stop();
  await tg?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("a document sent to the bot reaches the model as the turn's attachment, stored as an upload", async () => {
  const before = rig.fake.requests.length;
  rig.fake.enqueue(textReply('Got your notes.'));
  tg.userSendsDocument(ALICE, {
    filename: 'notes.txt',
    mime: 'text/plain',
    bytes: Buffer.from('remember the milk, 42 litres'),
    caption: 'what is in this file?',
  });
  await settled('Got your notes.');
  assert.is(rig.fake.requests.length, before + 1);
  assert.is(tg.downloads.length, 1, 'fetched once from the file URL');
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /what is in this file\?/);
  const path = /Attached file: \S*notes\.txt \(text\/plain, 28 bytes\) at ([^\]"\\]+)/.exec(
    sent,
  )?.[1];
  assert.ok(path, `the model was told of the file: ${sent.slice(0, 2000)}`);
  assert.is(
    readFileSync(path!, 'utf8'),
    'remember the milk, 42 litres',
    'the path holds the bytes the user sent',
  );

  // The chat's session stores the message with the upload, as for an API turn; the upload is served.
  const session = (await api(rig.port, 'GET', '/api/sessions')).body.items.find(
    (s: { channel: string }) => s.channel === 'telegram',
  );
  const msgs = (await api(rig.port, 'GET', `/api/sessions/${session.id}/messages`)).body.items;
  const user = msgs.find((m: { role: string }) => m.role === 'user');
  assert.is(user.content.text, 'what is in this file?');
  const [att] = user.content.attachments;
  assert.match(att.name, /^\d{8}-\d{6}-[a-z0-9]{6}_notes\.txt$/);
  assert.is(att.mime, 'text/plain');
  const res = await fetch(
    `http://127.0.0.1:${rig.port}/api/uploads/${encodeURIComponent(att.name)}`,
  );
  assert.is(res.status, 200);
  assert.is(await res.text(), 'remember the milk, 42 litres');

  // Without a caption the file alone starts the turn.
  rig.fake.enqueue(textReply('A CSV, thanks.'));
  tg.userSendsDocument(ALICE, { filename: 'data.csv', bytes: Buffer.from('a,b\n1,2\n') });
  await settled('A CSV, thanks.');
  const second = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(second, /\(sent data\.csv\)/);
  assert.match(second, /Attached file: \S*data\.csv \(text\/csv, 8 bytes\)/);
});

// A 1×1 PNG (Telegram would send a JPEG; the bytes decide the type either way).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

test('a photo reaches a model that takes images as the picture itself, at its largest size', async () => {
  assert.is((await api(rig.port, 'PATCH', '/api/config/models/oa', { vision: true })).status, 200);
  rig.fake.enqueue(textReply('A single dot.'));
  tg.userSendsPhoto(ALICE, { bytes: PNG, caption: 'what is this?' });
  await settled('A single dot.');
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.ok(
    sent.includes(`data:image/png;base64,${PNG.toString('base64')}`),
    'the largest size went inline',
  );
  assert.not.ok(
    sent.includes(Buffer.from('thumbnail bytes').toString('base64')),
    'not the thumbnail',
  );
  assert.is((await api(rig.port, 'PATCH', '/api/config/models/oa', { vision: false })).status, 200);
});

test('a file over the cap gets a reply saying so and starts no turn', async () => {
  const before = rig.fake.requests.length;
  const downloads = tg.downloads.length;
  tg.userSendsDocument(ALICE, {
    filename: 'big.bin',
    bytes: Buffer.alloc(CAP + 1, 7),
    caption: 'read this',
  });
  await waitFor(() => lastText().startsWith('big.bin is too large'), 20_000, 'the too-large reply');
  assert.is(
    lastText(),
    'big.bin is too large (65537 bytes): files up to 64 KiB reach the agent. Nothing was sent to it.',
  );
  assert.is(tg.downloads.length, downloads, 'a file announced over the cap is not even fetched');

  // A file whose announced size understates it is cut off while it downloads.
  tg.userSendsDocument(ALICE, {
    filename: 'sneaky.bin',
    bytes: Buffer.alloc(CAP * 2, 1),
    size: 10,
  });
  await waitFor(
    () => lastText().startsWith('sneaky.bin is too large'),
    20_000,
    'the too-large reply while fetching',
  );
  assert.is(
    lastText(),
    'sneaky.bin is too large: files up to 64 KiB reach the agent. Nothing was sent to it.',
  );
  assert.is(rig.fake.requests.length, before, 'nothing reached the model');

  // The chat still works afterwards.
  rig.fake.enqueue(textReply('Still here.'));
  tg.userSays(ALICE, 'hello?');
  await settled('Still here.');
});

test('send-file sends an artifact the agent wrote; exactly one of upload or artifact; 404 for unknown ones', async () => {
  // Outside the session's folder, so the write is asked in the chat and allowed there.
  const target = join(dir, 'summary.txt');
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'w1',
            name: 'write_file',
            arguments: [JSON.stringify({ path: target, content: 'the summary: all good\n' })],
          },
        },
      ],
      stop: 'tool_use',
    },
    textReply('Wrote the summary.'),
  );
  tg.userSays(ALICE, 'write a summary');
  const q = await waitFor(
    () =>
      tg
        .chat(ALICE.id)
        .find((m) => m.text.startsWith('⚠️ Allow write_file') && m.text.includes(target)),
    20_000,
    'the question',
  );
  const allow = (
    q.reply_markup as { inline_keyboard: { callback_data: string }[][] }
  ).inline_keyboard.flat()[0]!;
  tg.press(ALICE, q.message_id, allow.callback_data);
  await settled('Wrote the summary.');
  const session = (await api(rig.port, 'GET', '/api/sessions')).body.items.find(
    (s: { channel: string }) => s.channel === 'telegram',
  );
  const artifacts = (await api(rig.port, 'GET', `/api/sessions/${session.id}/artifacts`)).body
    .items as { id: string; path: string }[];
  const summary = artifacts.find((a) => a.path === target);
  assert.ok(summary, JSON.stringify(artifacts));

  const sent = await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
    chat_id: String(ALICE.id),
    artifact: summary!.id,
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  const doc = tg.documents.at(-1)!;
  assert.equal(
    [doc.chat_id, doc.filename, doc.bytes.toString()],
    [String(ALICE.id), 'summary.txt', 'the summary: all good\n'],
  );
  assert.is(sent.body.message_id, String(doc.message_id));

  const both = await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
    chat_id: String(ALICE.id),
    artifact: summary!.id,
    upload: 'x.txt',
  });
  assert.is(both.status, 400, JSON.stringify(both.body));
  assert.match(both.body.error.message, /exactly one of upload .* or artifact/);
  const neither = await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
    chat_id: String(ALICE.id),
  });
  assert.is(neither.status, 400);
  const unknown = await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
    chat_id: String(ALICE.id),
    artifact: 'a_nope',
  });
  assert.is(unknown.status, 404, JSON.stringify(unknown.body));
  assert.match(unknown.body.error.message, /no artifact "a_nope"/);
  assert.is(
    (
      await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
        chat_id: String(ALICE.id),
        upload: 'nope.txt',
      })
    ).status,
    404,
  );
  const refused = await api(rig.port, 'POST', '/api/channels/telegram/send-file', {
    chat_id: '-100404009',
    artifact: summary!.id,
  });
  assert.is(refused.status, 502, JSON.stringify(refused.body));
});

test("the bot token never appears in the output or the model's requests", async () => {
  assert.not.ok(rig.server.output().includes(TOKEN));
  for (const r of rig.fake.requests) assert.not.ok(JSON.stringify(r.body).includes(TOKEN));
});

test.run();
