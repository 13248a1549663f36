import { request } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { http, waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/*
 * A chat out as Markdown and JSON and back in as a new session: tool calls with their outputs and
 * an attachment round-trip, ids are new, and a file cannot raise what the agent may do.
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});
test.after(async () => rig?.stop());

function upload(port: number, name: string, body: Buffer): Promise<{ name: string }> {
  const boundary = 'xTransferB0undary';
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n`,
    ),
    body,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/upload',
        headers: {
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': payload.length,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve(JSON.parse(text).files[0]));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const transcript = async (id: string) =>
  ((await api(rig.port, 'GET', `/api/sessions/${id}/messages?limit=200`)).body.items as any[]).map(
    (m) => ({ role: m.role, text: m.content?.text ?? m.content?.output ?? null }),
  );

test('export as JSON and import round-trips a chat with a tool call and an attachment', async () => {
  const port = rig.port;
  const file = await upload(port, 'grocery notes.txt', Buffer.from('remember the milk'));
  const s = await api(port, 'POST', '/api/sessions', { title: 'Groceries', model_id: 'oa' });
  assert.is(s.status, 201);
  rig.fake.enqueue(
    { parts: [{ toolCall: { id: 'c1', name: 'clock', arguments: '{}' } }] },
    { parts: [{ text: 'Milk is on the list.' }] },
  );
  const turn = await api(port, 'POST', `/api/chat/${s.body.id}/turn`, {
    message: 'What is on my list?',
    attachments: [file.name],
  });
  assert.is(turn.status, 200, JSON.stringify(turn.body));
  const before = await transcript(s.body.id);
  assert.ok(
    before.some((m) => m.role === 'tool'),
    JSON.stringify(before),
  );

  const exported = await api(port, 'GET', `/api/sessions/${s.body.id}/export?format=json`);
  assert.is(exported.status, 200);
  assert.match(String(exported.headers['content-disposition']), 'Groceries.json');
  const doc = exported.body;
  assert.is(doc.format, 'svc-session');
  assert.is(doc.attachments.length, 1);
  assert.is(Buffer.from(doc.attachments[0].data, 'base64').toString(), 'remember the milk');

  // The file would raise the agent's rights and point at a folder: neither comes in.
  doc.session.title = 'Groceries (imported)';
  (doc.session as any).permission_mode = 'auto';
  const imported = await api(port, 'POST', '/api/sessions/import', doc);
  assert.is(imported.status, 201, JSON.stringify(imported.body));
  const copy = imported.body.session;
  assert.is.not(copy.id, s.body.id);
  assert.is(copy.permission_mode, 'interactive');
  assert.is(copy.working_dir, null);
  assert.equal(imported.body.missing_attachments, []);
  assert.equal(await transcript(copy.id), before, 'the same transcript');
  const msgs = (await api(port, 'GET', `/api/sessions/${copy.id}/messages`)).body.items as any[];
  const att = msgs.find((m) => m.role === 'user').content.attachments[0];
  const name = att.path.split('/').pop();
  assert.is.not(name, file.name, 'stored as a new upload');
  assert.is(att.name, name, 'the message names the upload here, so its link opens');
  assert.is(att.original_name, 'grocery notes.txt', 'and keeps the name the person sent');
  const sent = (await api(port, 'GET', `/api/sessions/${s.body.id}/messages`)).body.items.find(
    (m: any) => m.role === 'user',
  ).content.attachments[0];
  assert.is(sent.original_name, 'grocery notes.txt', 'a new message records the name sent');
  const got = await http({ port, path: `/api/uploads/${encodeURIComponent(name)}` });
  assert.is(got.text, 'remember the milk');
  const listed = (await api(port, 'GET', '/api/sessions?limit=50')).body.items as any[];
  assert.ok(listed.some((x) => x.id === copy.id && x.message_count === before.length));
});

test('export as Markdown folds tool calls and lists attachments', async () => {
  const sessions = (await api(rig.port, 'GET', '/api/sessions?limit=50')).body.items as any[];
  const id = sessions.find((x) => x.title === 'Groceries').id;
  const md = await http({ port: rig.port, path: `/api/sessions/${id}/export?format=md` });
  assert.is(md.status, 200);
  assert.match(String(md.headers['content-type']), 'text/markdown');
  assert.match(md.text, /^# Groceries\n/);
  assert.match(md.text, '## You');
  assert.match(md.text, 'What is on my list?');
  assert.match(md.text, '- attachment: grocery notes.txt');
  assert.match(md.text, '<details><summary>Tool call: clock</summary>');
  assert.match(md.text, '<details><summary>Output of clock');
  assert.match(md.text, 'Milk is on the list.');
});

test('bad input is a 4xx that names the problem', async () => {
  const port = rig.port;
  const cases: Array<[string, string, unknown, number]> = [
    ['GET', '/api/sessions/s_nope/export', undefined, 404],
    ['GET', '/api/sessions/s_nope/export?format=pdf', undefined, 400],
    ['POST', '/api/sessions/import', { format: 'other' }, 400],
    [
      'POST',
      '/api/sessions/import',
      { format: 'svc-session', version: 2, session: { title: 'x' }, messages: [] },
      400,
    ],
    [
      'POST',
      '/api/sessions/import',
      { format: 'svc-session', version: 1, session: { title: '' }, messages: [] },
      400,
    ],
    ['POST', '/api/sessions/import', '{"format":', 400],
  ];
  for (const [method, path, body, status] of cases) {
    const r = await api(port, method, path, body);
    assert.is(
      r.status,
      status,
      `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`,
    );
    assert.ok(r.body?.error?.message, 'a message a person can act on');
  }
  // Nothing half-imported: every session listed has its messages.
  await waitFor(async () => (await api(port, 'GET', '/api/sessions')).status === 200, 5000);
});

test.run();
