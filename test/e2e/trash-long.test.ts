import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { trashSession } from '../../src/shared/store/session-trash.js';
import { createSession } from '../../src/shared/store/sessions.js';
import { enforceTrashRetention } from '../../src/shared/store/trash.js';
import { newId } from '../../src/shared/store/util.js';
import { api } from '../helpers/api.js';
import { subscribe, type WsEvent } from '../helpers/events.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

// Issue 22, items 2 and 4: a long session goes to the trash by reference and comes back whole;
// events stay small; the trash is read a page at a time; retention and start-up scans use indexes.

let server: RunningServer;
let db: Db;
let port: number;

test.before(async () => {
  server = await startServer();
  port = server.port;
  db = openDb(join(server.home, 'svc.db'));
});
test.after(async () => {
  db.close();
  await server.stop();
  removeHome(server.home);
});

const frameBytes = (e: WsEvent) => Buffer.byteLength(JSON.stringify(e));

/** A session with `n` messages of ~300 bytes, written straight into svc.db (as a long life would leave it). */
function longSession(title: string, n: number): string {
  const s = createSession(db, { title });
  const ins = db.prepare(
    'INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let seq = 1; seq <= n; seq++)
      ins.run(
        newId('m'),
        s.id,
        seq,
        seq % 2 ? 'user' : 'assistant',
        JSON.stringify([{ type: 'text', text: `message ${seq} `.padEnd(280, 'x') }]),
        new Date().toISOString(),
      );
    db.prepare('UPDATE sessions SET message_count = ? WHERE id = ?').run(n, s.id);
  }).immediate(); // as svc's own writers do: svc may be writing beside this
  return s.id;
}

/** Every stored field of a session's messages, hashed: equal digests mean nothing was lost or changed. */
function digest(sessionId: string): { n: number; sha: string } {
  const h = createHash('sha256');
  let n = 0;
  for (const r of db
    .prepare(
      'SELECT id, seq, role, content, created_at FROM messages WHERE session_id = ? ORDER BY seq',
    )
    .iterate(sessionId) as Iterable<Record<string, unknown>>) {
    h.update(JSON.stringify(r));
    n++;
  }
  return { n, sha: h.digest('hex') };
}

test('deleting a 10,000-message session moves it by reference; every event stays under 4 KB; restore gives back every message', async () => {
  const id = longSession('A long life', 10_000);
  const before = digest(id);
  assert.is(before.n, 10_000);
  const c = await subscribe(port, ['trash', 'sessions', `session:${id}`]);
  try {
    const del = await api(port, 'DELETE', `/api/sessions/${id}`);
    assert.is(del.status, 200);
    const added = await c.next((e) => e.type === 'trash.added', 'trash.added');
    await c.next((e) => e.type === 'session.deleted' && e.topic === 'sessions', 'session.deleted');
    assert.equal(Object.keys(added.data).sort(), [
      'deleted_at',
      'expires_at',
      'id',
      'kind',
      'name',
      'original',
      'size_bytes',
    ]);
    assert.ok(
      added.data.size_bytes >= 10_000 * 280,
      `size_bytes counts the transcript held by reference (${added.data.size_bytes})`,
    );
    for (const e of c.events)
      assert.ok(frameBytes(e) <= 4096, `${e.type} is ${frameBytes(e)} bytes`);

    const payload = db
      .prepare('SELECT length(payload) AS n FROM trash WHERE id = ?')
      .get(del.body.trash_id) as { n: number };
    assert.ok(payload.n < 200, `the trash row holds a reference, not a copy (${payload.n} bytes)`);
    assert.is(
      (await api(port, 'GET', `/api/sessions/${id}`)).status,
      404,
      'a trashed session reads as gone',
    );
    assert.is((await api(port, 'GET', `/api/sessions/${id}/messages`)).status, 404);
    assert.ok(
      !(await api(port, 'GET', '/api/sessions?limit=200')).body.items.some(
        (s: { id: string }) => s.id === id,
      ),
    );

    const res = await api(port, 'POST', `/api/trash/${del.body.trash_id}/restore`, {});
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is(res.body.restored_to, id);
    const restored = await c.next(
      (e) => e.type === 'session.restored' && e.topic === 'sessions',
      'session.restored',
    );
    assert.is(restored.data.message_count, 10_000);
    for (const e of c.events)
      assert.ok(frameBytes(e) <= 4096, `${e.type} is ${frameBytes(e)} bytes`);
    assert.equal(digest(id), before, 'every message came back exactly');
    const last = await api(
      port,
      'GET',
      `/api/sessions/${id}/messages?limit=1&cursor=${Buffer.from(JSON.stringify({ after_seq: 9_999 })).toString('base64url')}`,
    );
    assert.is(last.body.items[0].seq, 10_000);
    assert.ok(
      !(await api(port, 'GET', '/api/trash?limit=200')).body.items.some(
        (i: { id: string }) => i.id === del.body.trash_id,
      ),
    );
  } finally {
    c.close();
  }
});

test('the trash sizes a session from the byte count kept as messages arrive; a session from before v16 is counted from its rows', async () => {
  const paths = resolvePaths({ SVC_HOME: server.home });
  const kept = longSession('counted as it grew', 300);
  const exact = (
    db
      .prepare('SELECT sum(octet_length(content)) AS n FROM messages WHERE session_id = ?')
      .get(kept) as { n: number }
  ).n;
  assert.is(
    (db.prepare('SELECT content_bytes AS n FROM sessions WHERE id = ?').get(kept) as { n: number })
      .n,
    exact,
  );
  const legacy = longSession('from before v16', 300);
  db.prepare('UPDATE sessions SET content_bytes = NULL WHERE id = ?').run(legacy);
  const a = trashSession(db, paths, kept)!.item;
  const b = trashSession(db, paths, legacy)!.item;
  assert.ok(a.size_bytes >= exact && a.size_bytes < exact + 200, `${a.size_bytes} vs ${exact}`);
  assert.is(b.size_bytes, a.size_bytes, 'the same transcript, the same size either way');
});

test('deleting a trash item for good, emptying and expiring remove the session rows with it', async () => {
  const paths = resolvePaths({ SVC_HOME: server.home });
  const a = longSession('gone for good', 50);
  const b = longSession('emptied', 50);
  const c = longSession('expired', 50);
  const ta = (await api(port, 'DELETE', `/api/sessions/${a}`)).body.trash_id;
  await api(port, 'DELETE', `/api/sessions/${b}`);
  assert.is(digest(a).n, 50, 'in the trash, the rows stay');
  assert.is((await api(port, 'DELETE', `/api/trash/${ta}`)).status, 200);
  assert.is(digest(a).n, 0);
  assert.not.ok(db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(a));
  await api(port, 'POST', '/api/trash/empty', {});
  assert.is(digest(b).n, 0);
  trashSession(db, paths, c);
  enforceTrashRetention(
    db,
    paths,
    { retention_days: 14, max_bytes: 10 * 2 ** 30 },
    new Date(Date.now() + 15 * 86_400_000),
  );
  assert.is(digest(c).n, 0);
  assert.not.ok(db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(c));
});

test('GET /api/trash pages like the other lists: limit and cursor, newest first, no payloads, totals', async () => {
  await api(port, 'POST', '/api/trash/empty', {});
  const made: string[] = [];
  for (let i = 0; i < 120; i++) {
    const s = createSession(db, { title: `item ${i}` });
    made.unshift((await api(port, 'DELETE', `/api/sessions/${s.id}`)).body.trash_id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  const sizes: number[] = [];
  do {
    const r = await api(port, 'GET', `/api/trash?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
    assert.is(r.status, 200);
    assert.is(r.body.total_items, 120);
    assert.ok(r.body.total_bytes > 0);
    for (const i of r.body.items)
      assert.equal(
        Object.keys(i).sort(),
        ['deleted_at', 'expires_at', 'id', 'kind', 'name', 'original', 'size_bytes'],
        'no payload',
      );
    sizes.push(r.body.items.length);
    seen.push(...r.body.items.map((i: { id: string }) => i.id));
    cursor = r.body.next_cursor;
  } while (cursor);
  assert.equal(sizes, [50, 50, 20]);
  assert.equal(seen, made, 'every item once, newest first');
  assert.is((await api(port, 'GET', '/api/trash')).body.items.length, 50, 'the default page is 50');

  for (const bad of [
    'limit=0',
    'limit=201',
    'limit=x',
    'cursor=nope',
    `cursor=${Buffer.from('["2026-01-01T00:00:00.000Z","s_x"]').toString('base64url')}`,
  ]) {
    const r = await api(port, 'GET', `/api/trash?${bad}`);
    assert.is(r.status, 400, bad);
    assert.match(r.body.error.message, /limit|cursor/);
  }
  const doc = (await api(port, 'GET', '/api/openapi.json')).body;
  const params = doc.paths['/api/trash'].get.parameters.map(
    (p: { name: string; in: string }) => `${p.in}:${p.name}`,
  );
  assert.equal(params.sort(), ['query:cursor', 'query:limit']);
  assert.match(doc.paths['/api/trash'].get.summary, /next_cursor/);
});

test('retention deletes by bounded batches (1,200 expired items, a recent one stays)', () => {
  const paths = resolvePaths({ SVC_HOME: server.home });
  db.prepare('DELETE FROM trash').run();
  const old = new Date(Date.now() - 30 * 86_400_000).toISOString();
  const ins = db.prepare(
    "INSERT INTO trash (id, kind, name, original, size_bytes, deleted_at, payload, blob) VALUES (?, 'file', 'f', '/x', 10, ?, '{}', 0)",
  );
  db.transaction(() => {
    for (let i = 0; i < 1200; i++) ins.run(newId('t'), old);
  }).immediate();
  const keep = newId('t');
  ins.run(keep, new Date().toISOString());
  const r = enforceTrashRetention(db, paths, { retention_days: 14, max_bytes: 10 * 2 ** 30 });
  assert.is(r.removed.length, 1200);
  assert.is(r.freed_bytes, 12_000);
  assert.equal(
    (db.prepare('SELECT id FROM trash').all() as Array<{ id: string }>).map((x) => x.id),
    [keep],
  );
});

test('start-up scans and the lists read from indexes, not whole tables', () => {
  const plan = (sql: string) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>)
      .map((r) => r.detail)
      .join(' | ');
  assert.match(
    plan("UPDATE turns SET status = 'failed' WHERE status = 'running'"),
    /USING (COVERING )?INDEX turns_running/,
  );
  assert.match(
    plan(
      'SELECT id FROM trash INDEXED BY trash_by_age_size ORDER BY deleted_at ASC, id ASC LIMIT 500',
    ),
    /trash_by_age_size/,
  );
  assert.match(
    plan('SELECT count(*), sum(size_bytes) FROM trash INDEXED BY trash_by_age_size'),
    /COVERING INDEX trash_by_age_size/,
  );
  assert.match(
    plan('SELECT id FROM trash ORDER BY deleted_at DESC, id DESC LIMIT 51'),
    /INDEX trash_by/,
  );
  assert.match(
    plan(
      'SELECT id FROM sessions WHERE trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT 51',
    ),
    /INDEX sessions_live_by_created/,
  );
  assert.not.match(
    plan(
      'SELECT id FROM sessions WHERE trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT 51',
    ),
    /TEMP B-TREE/,
  );
});

test.run();
