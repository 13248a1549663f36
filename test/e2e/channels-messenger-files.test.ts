import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startFakeIlink, type FakeIlink } from '../fixtures/fake-ilink.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Files over the messenger (WeChat iLink), end to end with the real svc and a local fake of the
 * iLink server and its media CDN (real AES-128-ECB): files users send are fetched, decrypted,
 * stored as uploads and reach the model as the turn's attachments (every key format, full_url or
 * query param); one over the cap gets a reply and no turn; send-file encrypts, uploads and sends
 * an item that decrypts on the phone to the original bytes; the CDN's refusal is a 502.
 */

const ALICE = 'wxid_alice_files@im.wechat';
const CAP = 64 * 1024;
let rig: TurnRig;
let wx: FakeIlink;

const replied = (text: string) =>
  waitFor(
    () => wx.sent.find((m) => m.to === ALICE && m.text === text),
    30_000,
    `a message "${text}"`,
  );
const lastText = () => wx.sent.filter((m) => m.to === ALICE).at(-1)?.text ?? '';
/** The attached file's path the model was told of, and that path's bytes. */
function attachment(sent: string, name: string): { path: string; mime: string; bytes: Buffer } {
  const m = new RegExp(
    `Attached file: \\S*${name.replace(/[.]/g, '\\.')} \\(([^,]+), \\d+ bytes\\) at ([^\\]"\\\\]+)`,
  ).exec(sent);
  assert.ok(m, `the model was told of ${name}: ${sent.slice(0, 1500)}`);
  return { mime: m![1]!, path: m![2]!, bytes: readFileSync(m![2]!) };
}
async function upload(name: string, bytes: Buffer): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const up = await fetch(`http://127.0.0.1:${rig.port}/api/upload`, { method: 'POST', body: form });
  assert.is(up.status, 201);
  return ((await up.json()) as { files: { name: string }[] }).files[0]!.name;
}

test.before(async () => {
  wx = await startFakeIlink();
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: `limits:\n  upload_bytes: ${CAP}\n`,
  });
  const saved = await api(rig.port, 'POST', '/api/channels/messenger', {
    base_url: wx.url,
    cdn_base_url: `${wx.url}/c2c`,
    allowed_users: ALICE,
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  assert.is(saved.body.fields.cdn_base_url, `${wx.url}/c2c`);
  await waitFor(
    async () =>
      (await api(rig.port, 'GET', '/api/channels/messenger')).body.state === 'needs_login',
    20_000,
    'needs_login',
  );
  assert.is(
    (await api(rig.port, 'POST', '/api/channels/messenger/login', {})).body.status,
    'pending',
  );
  wx.confirm(wx.codes[0]!, ALICE);
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/messenger')).body.state === 'running',
    20_000,
    'messenger running',
  );
});

test.after(async () => {
  await rig?.stop();
  await wx?.close();
});

test('the default CDN is the real one, and the field is on the form', async () => {
  const avail = await api(rig.port, 'GET', '/api/channels/available');
  const fields = avail.body.platforms.find((p: { platform: string }) => p.platform === 'messenger')
    .fields as { name: string }[];
  assert.ok(fields.some((f) => f.name === 'cdn_base_url'));
});

test("a file sent to the bot reaches the model decrypted, as the turn's attachment stored as an upload", async () => {
  const before = rig.fake.requests.length;
  rig.fake.enqueue(textReply('Got your notes.'));
  wx.userSendsFile(ALICE, {
    kind: 'file',
    name: 'notes.txt',
    bytes: Buffer.from('remember the milk, 42 litres'),
    caption: 'what is in this file?',
    keyFormat: 'hex',
  });
  await replied('Got your notes.');
  assert.is(rig.fake.requests.length, before + 1);
  assert.is(wx.downloads.length, 1, 'fetched once from the CDN');
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /what is in this file\?/);
  const att = attachment(sent, 'notes.txt');
  assert.is(
    att.bytes.toString(),
    'remember the milk, 42 litres',
    'the path holds the decrypted bytes',
  );

  const session = (await api(rig.port, 'GET', '/api/sessions')).body.items.find(
    (s: { channel: string }) => s.channel === 'messenger',
  );
  const msgs = (await api(rig.port, 'GET', `/api/sessions/${session.id}/messages`)).body.items;
  const user = msgs.filter((m: { role: string }) => m.role === 'user').at(-1);
  assert.is(user.content.text, 'what is in this file?');
  assert.match(user.content.attachments[0].name, /^\d{8}-\d{6}-[a-z0-9]{6}_notes\.txt$/);
});

// A 1×1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

test('an image (base64 raw key, by full_url), a video and a voice note (base64-of-hex keys) each arrive whole', async () => {
  rig.fake.enqueue(textReply('A dot.'));
  const id = wx.userSendsFile(ALICE, {
    kind: 'image',
    bytes: PNG,
    keyFormat: 'base64raw',
    fullUrl: true,
  });
  await replied('A dot.');
  let sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(
    sent,
    new RegExp(`\\(sent image-${id}\\.jpg\\)`),
    'a file without words still starts the turn',
  );
  const img = attachment(sent, `image-${id}.jpg`);
  assert.is(img.mime, 'image/png', 'typed by its bytes');
  assert.ok(img.bytes.equals(PNG));

  const video = Buffer.alloc(3000, 9);
  rig.fake.enqueue(textReply('Nice clip.'));
  const vid = wx.userSendsFile(ALICE, {
    kind: 'video',
    bytes: video,
    caption: 'my clip',
    keyFormat: 'base64hex',
  });
  await replied('Nice clip.');
  sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.ok(attachment(sent, `video-${vid}.mp4`).bytes.equals(video));

  rig.fake.enqueue(textReply('Heard you.'));
  const voice = wx.userSendsFile(ALICE, {
    kind: 'voice',
    bytes: Buffer.from('#!SILK_V3 fake voice'),
    transcript: 'call mum at six',
  });
  await replied('Heard you.');
  sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /\[voice\] call mum at six/, 'the transcript is the text');
  assert.is(attachment(sent, `voice-${voice}.silk`).bytes.toString(), '#!SILK_V3 fake voice');
});

test('a file over the cap gets a reply saying so and starts no turn', async () => {
  const before = rig.fake.requests.length;
  const downloads = wx.downloads.length;
  wx.userSendsFile(ALICE, {
    kind: 'file',
    name: 'big.bin',
    bytes: Buffer.alloc(CAP + 1, 7),
    caption: 'read this',
  });
  await waitFor(() => lastText().startsWith('big.bin is too large'), 30_000, 'the too-large reply');
  assert.is(
    lastText(),
    'big.bin is too large (65537 bytes): files up to 64 KiB reach the agent. Nothing was sent to it.',
  );
  assert.is(wx.downloads.length, downloads, 'a file announced over the cap is not even fetched');

  // A file whose announced size understates it is cut off while it downloads.
  wx.userSendsFile(ALICE, {
    kind: 'file',
    name: 'sneaky.bin',
    bytes: Buffer.alloc(CAP * 2, 1),
    len: 10,
  });
  await waitFor(
    () => lastText().startsWith('sneaky.bin is too large'),
    30_000,
    'the too-large reply while fetching',
  );
  assert.is(
    lastText(),
    'sneaky.bin is too large: files up to 64 KiB reach the agent. Nothing was sent to it.',
  );
  assert.is(rig.fake.requests.length, before, 'nothing reached the model');

  rig.fake.enqueue(textReply('Still here.'));
  wx.userSays(ALICE, 'hello?');
  await replied('Still here.');
});

test('send-file encrypts, uploads through the CDN and sends an item the phone decrypts to the same bytes', async () => {
  const text = Buffer.from('report body 42\n'.repeat(100));
  const doc = await upload('report.txt', text);
  const r = await api(rig.port, 'POST', '/api/channels/messenger/send-file', {
    chat_id: ALICE,
    upload: doc,
  });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const got = await waitFor(
    () => wx.sent.find((m) => m.file?.name === 'report.txt'),
    20_000,
    'the file message',
  );
  assert.is(got.file!.type, 4, 'a file item');
  assert.ok(got.file!.bytes.equals(text), 'decrypts to the original bytes');
  assert.is(wx.uploads.at(-1)!.media_type, 3);
  assert.match(got.context_token, /^ctx-/);

  const pic = await upload('dot.png', PNG);
  assert.is(
    (
      await api(rig.port, 'POST', '/api/channels/messenger/send-file', {
        chat_id: ALICE,
        upload: pic,
      })
    ).status,
    200,
  );
  const image = await waitFor(
    () => wx.sent.find((m) => m.file?.type === 2),
    20_000,
    'the image message',
  );
  assert.ok(image.file!.bytes.equals(PNG));
  assert.is(wx.uploads.at(-1)!.media_type, 1, 'an image by its extension');

  // The CDN refuses: a 502 with its reason, at once (a 4xx is not tried again).
  const uploads = wx.uploads.length;
  wx.refuseNextUpload(413, 'file too large for this account');
  const refused = await api(rig.port, 'POST', '/api/channels/messenger/send-file', {
    chat_id: ALICE,
    upload: doc,
  });
  assert.is(refused.status, 502, JSON.stringify(refused.body));
  assert.match(refused.body.error.message, /HTTP 413 file too large for this account/);
  assert.is(wx.uploads.length, uploads);
  // Nobody wrote from that id: no context token, no send.
  const nobody = await api(rig.port, 'POST', '/api/channels/messenger/send-file', {
    chat_id: 'wxid_nobody',
    upload: doc,
  });
  assert.is(nobody.status, 502);
  assert.match(nobody.body.error.message, /wrote to it first/);
});

test('a file the agent wrote goes back to the chat (send-file {artifact})', async () => {
  // Outside the session's folder, so the write is asked in the chat and allowed there.
  const dir = mkdtempSync(join(tmpdir(), 'svc-wxmedia-'));
  const target = join(dir, 'summary.txt');
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'wf1',
            name: 'write_file',
            arguments: [JSON.stringify({ path: target, content: 'the summary: all good\n' })],
          },
        },
      ],
      stop: 'tool_use',
    },
    textReply('Wrote the summary.'),
  );
  wx.userSays(ALICE, 'write a summary');
  await waitFor(
    () => wx.sent.find((m) => m.to === ALICE && m.text.startsWith('⚠️ Allow write_file')),
    30_000,
    'the question',
  );
  wx.userSays(ALICE, 'yes');
  await replied('Wrote the summary.');
  const session = (await api(rig.port, 'GET', '/api/sessions')).body.items.find(
    (s: { channel: string }) => s.channel === 'messenger',
  );
  const artifacts = (await api(rig.port, 'GET', `/api/sessions/${session.id}/artifacts`)).body
    .items as { id: string; path: string }[];
  const summary = artifacts.find((a) => a.path === target);
  assert.ok(summary, JSON.stringify(artifacts));
  const sent = await api(rig.port, 'POST', '/api/channels/messenger/send-file', {
    chat_id: ALICE,
    artifact: summary!.id,
  });
  assert.is(sent.status, 200, JSON.stringify(sent.body));
  const got = await waitFor(
    () => wx.sent.find((m) => m.file?.name === 'summary.txt'),
    20_000,
    'the artifact message',
  );
  assert.is(got.file!.bytes.toString(), 'the summary: all good\n');
  rmSync(dir, { recursive: true, force: true });
});

test('kill -9 of the channels worker while a captioned file is fetched: after the restart the turn has the file too, once', async () => {
  const pidOf = async () =>
    (
      (await api(rig.port, 'GET', '/api/status')).body.processes as { role: string; pid: number }[]
    ).find((p) => p.role === 'channels' && p.pid > 0)?.pid;
  const pid = await waitFor(pidOf, 10_000, 'the channels worker');
  const before = rig.fake.requests.length;
  const downloads = wx.downloads.length;
  const hold = wx.holdDownloads();
  rig.fake.enqueue(textReply('Read the plan after the restart.'));
  wx.userSendsFile(ALICE, {
    kind: 'file',
    name: 'plan.txt',
    bytes: Buffer.from('step one, step two'),
    caption: 'summarise the plan',
  });
  await hold.started; // recorded, being fetched: no turn yet
  process.kill(pid, 'SIGKILL');
  await waitFor(async () => ((await pidOf()) ?? pid) !== pid, 20_000, 'a new channels worker');
  hold.release();
  await replied('Read the plan after the restart.');
  const sent = JSON.stringify(rig.fake.requests.at(-1)!.body);
  assert.match(sent, /summarise the plan/);
  assert.is(attachment(sent, 'plan.txt').bytes.toString(), 'step one, step two');
  assert.is(rig.fake.requests.length, before + 1, 'one turn');
  assert.is(wx.downloads.length, downloads + 2, 'fetched again by the new worker');
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/messenger')).body.state === 'running',
    20_000,
    'running',
  );
  assert.is(
    wx.sent.filter((m) => m.text === 'Read the plan after the restart.').length,
    1,
    'answered once',
  );
});

test("the bot token never appears in the output or the model's requests", async () => {
  assert.not.ok(rig.server.output().includes(wx.token));
  for (const r of rig.fake.requests) assert.not.ok(JSON.stringify(r.body).includes(wx.token));
});

test.run();
