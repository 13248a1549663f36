import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { upsertArtifact } from '../../src/shared/store/artifacts.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { appendMessage } from '../../src/shared/store/messages.js';
import { api } from '../helpers/api.js';
import { subscribe } from '../helpers/events.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

const CONFIG = 'models:\n  main:\n    provider: openai\n    model: gpt-test\n';
let server: RunningServer;
let db: Db;
let port: number;
const scratch = mkdtempSync(join(tmpdir(), 'svc-sessions-dirs-'));
const aFile = join(scratch, 'notes.txt');
writeFileSync(aFile, 'not a folder');

test.before(async () => {
  server = await startServer({ config: CONFIG });
  port = server.port;
  db = openDb(join(server.home, 'svc.db'));
});
test.after(async () => {
  db.close();
  await server.stop();
  removeHome(server.home);
  rmSync(scratch, { recursive: true, force: true });
});

const create = async (body: unknown = {}) => {
  const r = await api(port, 'POST', '/api/sessions', body);
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
};

/** GET /api/sessions/{id}'s spend for a session that made no model call. */
const noSpend = {
  calls: 0,
  unknown_calls: 0,
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_write_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0,
  unpriced_calls: 0,
};

test('a new session has the defaults, is listed first and can be read back', async () => {
  const s = await create();
  assert.match(s.id, /^s_[a-z0-9]+$/);
  assert.equal(
    {
      title: s.title,
      model_id: s.model_id,
      reasoning_effort: s.reasoning_effort,
      show_reasoning: s.show_reasoning,
      permission_mode: s.permission_mode,
      working_dir: s.working_dir,
      message_count: s.message_count,
    },
    {
      title: 'New session',
      model_id: null,
      reasoning_effort: 'medium',
      show_reasoning: true,
      permission_mode: 'interactive',
      working_dir: null,
      message_count: 0,
    },
  );
  assert.ok(!Number.isNaN(Date.parse(s.created_at)));
  assert.is(s.updated_at, s.created_at);
  const list = await api(port, 'GET', '/api/sessions');
  assert.is(list.status, 200);
  assert.is(list.headers['content-type'], 'application/json');
  assert.is(list.body.items[0].id, s.id);
  const one = await api(port, 'GET', `/api/sessions/${s.id}`);
  assert.equal(
    one.body,
    { ...s, goal: null, spend: noSpend },
    'one session comes with its goal (none yet) and what it spent (nothing yet)',
  );
});

test('POST takes every setting, and refuses bad ones without creating anything', async () => {
  const s = await create({
    title: 'Plan the trip',
    model_id: 'main',
    reasoning_effort: 'high',
    show_reasoning: false,
    permission_mode: 'strict',
    working_dir: scratch,
  });
  assert.equal(
    [s.title, s.model_id, s.reasoning_effort, s.show_reasoning, s.permission_mode, s.working_dir],
    ['Plan the trip', 'main', 'high', false, 'strict', scratch],
  );
  const before = (await api(port, 'GET', '/api/sessions?limit=1')).body.items[0].id;
  for (const bad of [
    { model_id: 'nope' },
    { working_dir: 'rel/dir' },
    { permission_mode: 'yolo' },
    { colour: 'red' },
  ]) {
    const r = await api(port, 'POST', '/api/sessions', bad);
    assert.is(r.status, 400, JSON.stringify(bad));
    assert.is(r.body.error.code, 'invalid_request');
  }
  assert.is((await api(port, 'GET', '/api/sessions?limit=1')).body.items[0].id, before);
});

test('PATCH changes each field; GET shows the change', async () => {
  const s = await create();
  const changes: Array<[string, unknown]> = [
    ['title', 'Renamed'],
    ['model_id', 'main'],
    ['reasoning_effort', 'xhigh'],
    ['reasoning_effort', 'off'],
    ['show_reasoning', false],
    ['permission_mode', 'auto'],
    ['working_dir', scratch],
    ['model_id', null],
    ['working_dir', null],
  ];
  let last = s.updated_at;
  for (const [field, value] of changes) {
    // The person's client: raising the mode and moving the folder out need the key.
    const r = await api(
      port,
      'PATCH',
      `/api/sessions/${s.id}`,
      { [field]: value },
      { key: server.key() },
    );
    assert.is(r.status, 200, `${field}: ${JSON.stringify(r.body)}`);
    assert.is(r.body[field], value, field);
    assert.ok(r.body.updated_at >= last);
    last = r.body.updated_at;
    assert.is(
      (await api(port, 'GET', `/api/sessions/${s.id}`)).body[field],
      value,
      `GET shows ${field}`,
    );
  }
  const several = await api(port, 'PATCH', `/api/sessions/${s.id}`, {
    title: '  Trimmed  ',
    permission_mode: 'strict',
  });
  assert.equal(
    [several.body.title, several.body.permission_mode, several.body.created_at],
    ['Trimmed', 'strict', s.created_at],
  );
});

test('every bad PATCH value is a 400 naming the field, and changes nothing', async () => {
  const s = await create({ title: 'Keep me', model_id: 'main', working_dir: scratch });
  const cases: Array<[string, unknown]> = [
    ['title', ''],
    ['title', '   '],
    ['title', 'x'.repeat(201)],
    ['title', 5],
    ['title', null],
    ['model_id', 'nope'],
    ['model_id', 'bad id!'],
    ['model_id', 7],
    ['reasoning_effort', 'extreme'],
    ['reasoning_effort', ''],
    ['reasoning_effort', null],
    ['show_reasoning', 'yes'],
    ['show_reasoning', 1],
    ['show_reasoning', null],
    ['permission_mode', 'yolo'],
    ['permission_mode', null],
    ['working_dir', 'relative/dir'],
    ['working_dir', './x'],
    ['working_dir', join(scratch, 'missing')],
    ['working_dir', aFile],
    ['working_dir', ''],
    ['working_dir', 5],
  ];
  for (const [field, value] of cases) {
    const r = await api(port, 'PATCH', `/api/sessions/${s.id}`, { [field]: value });
    const label = `${field}=${JSON.stringify(value)}`;
    assert.is(r.status, 400, `${label}: ${JSON.stringify(r.body)}`);
    assert.is(r.body.error.code, 'invalid_request', label);
    assert.ok(
      r.body.error.message.includes(field),
      `${label}: message names the field: ${r.body.error.message}`,
    );
    assert.ok(
      r.body.error.details.some((d: { path: string }) => d.path === field),
      `${label}: details name the field`,
    );
  }
  const unknown = await api(port, 'PATCH', `/api/sessions/${s.id}`, { colour: 'red' });
  assert.is(unknown.status, 400);
  assert.match(unknown.body.error.message, /colour/);
  const usage = await api(port, 'PATCH', `/api/sessions/${s.id}`, { message_count: 3 });
  assert.is(usage.status, 400, 'message_count is the server’s');
  assert.is(
    (await api(port, 'PATCH', `/api/sessions/${s.id}`, {})).status,
    400,
    'an empty PATCH is refused',
  );
  assert.is(
    (await api(port, 'PATCH', `/api/sessions/${s.id}`, '{"title":')).status,
    400,
    'broken JSON',
  );
  assert.equal(
    (await api(port, 'GET', `/api/sessions/${s.id}`)).body,
    { ...s, goal: null, spend: noSpend },
    'nothing changed',
  );
  const nf = await api(port, 'PATCH', '/api/sessions/s_doesnotexist', { title: 'x' });
  assert.is(nf.status, 404);
});

test('an unknown session is a 404 not_found that says what to do', async () => {
  for (const [method, path] of [
    ['GET', '/api/sessions/s_0000000000000000000000'],
    ['DELETE', '/api/sessions/s_0000000000000000000000'],
    ['GET', '/api/sessions/s_0000000000000000000000/messages'],
    ['GET', '/api/sessions/s_0000000000000000000000/artifacts'],
    ['GET', '/api/sessions/nonsense%20id/goal'],
  ] as const) {
    const r = await api(port, method, path);
    assert.is(r.status, 404, `${method} ${path}`);
    assert.is(r.body.error.code, 'not_found');
    assert.match(r.body.error.message, /no session/);
  }
});

test('120 sessions page in order, newest first, with no duplicates or gaps', async () => {
  const made: string[] = [];
  for (let i = 0; i < 120; i++) made.push((await create({ title: `page test ${i}` })).id);
  const all = (await api(port, 'GET', '/api/sessions?limit=200')).body;
  assert.is(all.next_cursor, null);
  const total = all.items.length;
  assert.ok(total >= 120);
  const seen: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: { status: number; body: any } = await api(
      port,
      'GET',
      `/api/sessions?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    assert.is(r.status, 200);
    assert.ok(r.body.items.length <= 7);
    seen.push(...r.body.items);
    cursor = r.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  assert.is(seen.length, total, 'every session exactly once');
  assert.is(new Set(seen.map((s) => s.id)).size, total, 'no duplicates');
  assert.equal(
    seen.map((s) => s.id),
    all.items.map((s: { id: string }) => s.id),
    'same order as one big page',
  );
  assert.is(pages, Math.ceil(total / 7));
  for (let i = 1; i < seen.length; i++) {
    const a = seen[i - 1];
    const b = seen[i];
    assert.ok(
      a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id),
      `order at ${i}`,
    );
  }
  assert.equal(
    seen.slice(0, 120).map((s) => s.id),
    [...made].reverse(),
    'the newest are first, in reverse creation order',
  );
  const first = await api(port, 'GET', '/api/sessions');
  assert.is(first.body.items.length, 50, 'the default page is 50');
  assert.type(first.body.next_cursor, 'string');
});

test('a bad limit or cursor is a 400 naming the parameter', async () => {
  const s = await create();
  for (const base of ['/api/sessions', `/api/sessions/${s.id}/messages`]) {
    for (const limit of ['0', '201', 'abc', '-1', '1.5', '', '99999999']) {
      const r = await api(port, 'GET', `${base}?limit=${encodeURIComponent(limit)}`);
      assert.is(r.status, 400, `${base} limit=${limit}`);
      assert.match(r.body.error.message, /limit/);
    }
    for (const cursor of [
      'garbage!',
      Buffer.from('["x","y"]').toString('base64url'),
      'AAAA',
      Buffer.from('{"after_seq":-1}').toString('base64url'),
    ]) {
      const r = await api(port, 'GET', `${base}?cursor=${encodeURIComponent(cursor)}`);
      assert.is(r.status, 400, `${base} cursor=${cursor}`);
      assert.match(r.body.error.message, /cursor/);
    }
  }
  const edge = await api(port, 'GET', '/api/sessions?limit=200');
  assert.is(edge.status, 200);
});

test('messages come oldest first, a page at a time, and the session counts them', async () => {
  const s = await create();
  const sent = [];
  for (let i = 0; i < 25; i++)
    sent.push(
      appendMessage(db, s.id, {
        role: i % 2 ? 'assistant' : 'user',
        content: i % 3 ? `text ${i}` : [{ type: 'text', text: `block ${i}` }],
      }),
    );
  const got: any[] = [];
  let cursor: string | null = null;
  do {
    const r: { status: number; body: any } = await api(
      port,
      'GET',
      `/api/sessions/${s.id}/messages?limit=10${cursor ? `&cursor=${cursor}` : ''}`,
    );
    assert.is(r.status, 200);
    got.push(...r.body.items);
    cursor = r.body.next_cursor;
  } while (cursor);
  assert.equal(
    got.map((m) => m.seq),
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
  assert.equal(got, sent);
  assert.is(got[3].role, 'assistant');
  assert.equal(got[0].content, [{ type: 'text', text: 'block 0' }]);
  const after = (await api(port, 'GET', `/api/sessions/${s.id}`)).body;
  assert.is(after.message_count, 25);
  assert.ok(after.updated_at >= s.updated_at);
  assert.throws(() => appendMessage(db, 's_nope', { role: 'user', content: 'x' }), /no session/);
  const empty = await api(port, 'GET', `/api/sessions/${(await create()).id}/messages`);
  assert.equal(empty.body, { items: [], next_cursor: null });
});

test('the list shows changes at once, whichever process made them', async () => {
  const s = await create({ title: 'fresh' });
  const first = async () =>
    (await api(port, 'GET', '/api/sessions?limit=5')).body.items.find(
      (x: { id: string }) => x.id === s.id,
    );
  assert.is((await first()).message_count, 0);
  appendMessage(db, s.id, { role: 'user', content: 'from another process' }); // this test process is another connection
  assert.is((await first()).message_count, 1);
  await api(port, 'PATCH', `/api/sessions/${s.id}`, { title: 'renamed' });
  assert.is((await first()).title, 'renamed');
  db.prepare('UPDATE sessions SET title = ? WHERE id = ?').run('changed behind its back', s.id);
  assert.is((await first()).title, 'changed behind its back');
});

test('artifacts are listed', async () => {
  const s = await create();
  assert.equal((await api(port, 'GET', `/api/sessions/${s.id}/artifacts`)).body, { items: [] });
  upsertArtifact(db, s.id, { path: '/tmp/report.html', size: 120, mime: 'text/html' });
  upsertArtifact(db, s.id, { path: '/tmp/chart.png', size: 3000, mime: 'image/png' });
  upsertArtifact(db, s.id, { path: '/tmp/report.html', size: 150, mime: 'text/html' });
  const r = await api(port, 'GET', `/api/sessions/${s.id}/artifacts`);
  assert.equal(
    r.body.items.map((a: any) => [a.path, a.size, a.mime]),
    [
      ['/tmp/report.html', 150, 'text/html'],
      ['/tmp/chart.png', 3000, 'image/png'],
    ],
  );
});

test('two subscribers see every change as events on sessions and session:<id>', async () => {
  const s = await create({ title: 'watched' });
  const a = await subscribe(port, ['sessions', `session:${s.id}`]);
  const b = await subscribe(port, ['sessions', `session:${s.id}`]);
  try {
    await api(port, 'PATCH', `/api/sessions/${s.id}`, { title: 'watched and renamed' });
    const made = await create({ title: 'another' });
    await api(port, 'DELETE', `/api/sessions/${s.id}`);
    for (const c of [a, b]) {
      const upd = await c.next(
        (e) => e.topic === 'sessions' && e.type === 'session.updated',
        'session.updated on sessions',
      );
      assert.is(upd.data.title, 'watched and renamed');
      assert.is(upd.data.id, s.id);
      const own = await c.next(
        (e) => e.topic === `session:${s.id}` && e.type === 'session.updated',
        'session.updated on session:<id>',
      );
      assert.is(own.data.title, 'watched and renamed');
      const created = await c.next((e) => e.type === 'session.created', 'session.created');
      assert.equal(created.data, made);
      const del = await c.next(
        (e) => e.topic === 'sessions' && e.type === 'session.deleted',
        'session.deleted',
      );
      assert.is(del.data.id, s.id);
      assert.match(del.data.trash_id, /^t_/);
      await c.next(
        (e) => e.topic === `session:${s.id}` && e.type === 'session.deleted',
        'session.deleted on session:<id>',
      );
      assert.ok(
        !c.events.some((e) => e.topic === `session:${made.id}`),
        'no events for topics not subscribed',
      );
    }
    assert.ok(upd(a) < del(a), 'events arrive in the order of the changes');
  } finally {
    a.close();
    b.close();
  }
  function upd(c: typeof a) {
    return c.events.findIndex((e) => e.type === 'session.updated');
  }
  function del(c: typeof a) {
    return c.events.findIndex((e) => e.type === 'session.deleted');
  }
});

test.run();
