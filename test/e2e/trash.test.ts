import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { upsertArtifact } from '../../src/shared/store/artifacts.js';
import { openAndMigrate, openDb, type Db } from '../../src/shared/store/db.js';
import { addGoalUsage } from '../../src/shared/store/goals.js';
import { appendMessage } from '../../src/shared/store/messages.js';
import { trashSession } from '../../src/shared/store/session-trash.js';
import { createSession } from '../../src/shared/store/sessions.js';
import {
  enforceTrashRetention,
  listTrash,
  putInTrash,
  restoreFromTrash,
  trashBlobDir,
} from '../../src/shared/store/trash.js';
import { api } from '../helpers/api.js';
import { subscribe } from '../helpers/events.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

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

/** A session with settings, a transcript, an artifact and a goal with usage. */
async function fullSession(title: string) {
  const s = (
    await api(port, 'POST', '/api/sessions', {
      title,
      reasoning_effort: 'high',
      show_reasoning: false,
      permission_mode: 'auto',
      working_dir: tmpdir(),
    })
  ).body;
  for (let i = 0; i < 6; i++)
    appendMessage(db, s.id, {
      role: i % 2 ? 'assistant' : 'user',
      content: [{ type: 'text', text: `${title} #${i}` }],
    });
  upsertArtifact(db, s.id, { path: '/tmp/out.md', size: 42, mime: 'text/markdown' });
  await api(port, 'PUT', `/api/sessions/${s.id}/goal`, {
    objective: `finish ${title}`,
    token_budget: 5000,
  });
  addGoalUsage(db, s.id, { input_tokens: 10, output_tokens: 5, turns: 1 });
  return snapshot(s.id);
}

async function snapshot(id: string) {
  const session = await api(port, 'GET', `/api/sessions/${id}`);
  const messages = await api(port, 'GET', `/api/sessions/${id}/messages?limit=200`);
  const artifacts = await api(port, 'GET', `/api/sessions/${id}/artifacts`);
  const goal = await api(port, 'GET', `/api/sessions/${id}/goal`);
  return {
    session: session.body,
    messages: messages.body.items,
    artifacts: artifacts.body.items,
    goal: goal.body,
    status: session.status,
  };
}

test('delete → trash → restore gives back the same session, messages, artifacts and goal', async () => {
  const before = await fullSession('Restore me');
  const id = before.session.id;
  const del = await api(port, 'DELETE', `/api/sessions/${id}`);
  assert.is(del.status, 200);
  assert.is(del.body.deleted, id);
  assert.is((await api(port, 'GET', `/api/sessions/${id}`)).status, 404);
  assert.ok(
    !(await api(port, 'GET', '/api/sessions?limit=200')).body.items.some(
      (s: { id: string }) => s.id === id,
    ),
    'gone from the list',
  );
  assert.is((await api(port, 'GET', `/api/sessions/${id}/messages`)).status, 404);

  const trash = (await api(port, 'GET', '/api/trash')).body;
  const item = trash.items.find((i: { id: string }) => i.id === del.body.trash_id);
  assert.ok(item, 'the trash lists it');
  assert.equal([item.kind, item.name, item.original], ['session', 'Restore me', id]);
  assert.ok(item.size_bytes > 200, 'size counts the transcript');
  assert.is(
    Date.parse(item.expires_at) - Date.parse(item.deleted_at),
    14 * 86_400_000,
    'kept 14 days by default',
  );
  assert.is(trash.items[0].id, item.id, 'newest first');

  const res = await api(port, 'POST', `/api/trash/${item.id}/restore`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.restored_to, id);
  assert.equal(await snapshot(id), before, 'everything came back as it was');
  assert.ok(
    !(await api(port, 'GET', '/api/trash')).body.items.some(
      (i: { id: string }) => i.id === item.id,
    ),
    'no longer in the trash',
  );
  assert.is(
    (await api(port, 'POST', `/api/trash/${item.id}/restore`)).status,
    404,
    'cannot restore twice',
  );
});

test('a trashed session keeps its id (no one can take it); as_new and new_name restore it under a new one', async () => {
  const before = await fullSession('Twice');
  const id = before.session.id;
  const trashId = (await api(port, 'DELETE', `/api/sessions/${id}`)).body.trash_id;
  assert.throws(
    () => createSession(db, { id, title: 'The new owner of this id' }),
    /UNIQUE/,
    'the id stays reserved while the session is in the trash',
  );

  assert.is(
    (await api(port, 'POST', `/api/trash/${trashId}/restore`, { as_new: 'yes' })).status,
    400,
  );
  assert.is(
    (await api(port, 'POST', `/api/trash/${trashId}/restore`, { new_name: '' })).status,
    400,
  );
  assert.is(
    (await api(port, 'POST', `/api/trash/${trashId}/restore`, { rename: true })).status,
    400,
  );

  const copy = await api(port, 'POST', `/api/trash/${trashId}/restore`, { as_new: true });
  assert.is(copy.status, 200);
  assert.ok(copy.body.restored_to !== id);
  const after = await snapshot(copy.body.restored_to);
  assert.equal(after.session.title, 'Twice');
  assert.equal(
    after.messages.map((m: any) => [m.seq, m.role, m.content]),
    before.messages.map((m: any) => [m.seq, m.role, m.content]),
  );
  assert.ok(after.messages.every((m: any) => m.session_id === copy.body.restored_to));
  assert.equal({ ...after.goal, session_id: 0 }, { ...before.goal, session_id: 0 });
  assert.equal(
    after.artifacts.map((a: any) => a.path),
    ['/tmp/out.md'],
  );
  assert.is(
    (await api(port, 'GET', `/api/sessions/${id}`)).status,
    404,
    'the old id is free again',
  );

  // new_name: same, with the title given.
  const again = (await api(port, 'DELETE', `/api/sessions/${copy.body.restored_to}`)).body.trash_id;
  const named = await api(port, 'POST', `/api/trash/${again}/restore`, {
    new_name: 'Twice (restored)',
  });
  assert.is(named.status, 200);
  assert.is(named.body.session.title, 'Twice (restored)');
  assert.is(
    (await api(port, 'GET', `/api/sessions/${named.body.restored_to}/messages`)).body.items.length,
    6,
  );
});

test('items trashed before v16 (the session copied whole) still restore; where the id is taken, 409 with a reason, then as_new', async () => {
  const paths = resolvePaths({ SVC_HOME: server.home });
  const id = 's_legacy0000000000000000'.slice(0, 23);
  const row = {
    id,
    title: 'Old style',
    model_id: null,
    reasoning_effort: 'medium',
    show_reasoning: 1,
    permission_mode: 'interactive',
    working_dir: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    message_count: 2,
  };
  const messages = [1, 2].map((seq) => ({
    id: `m_legacy${seq}`,
    session_id: id,
    seq,
    role: seq === 1 ? 'user' : 'assistant',
    content: JSON.stringify(`line ${seq}`),
    created_at: row.created_at,
  }));
  const item = putInTrash(db, paths, {
    kind: 'session',
    name: 'Old style',
    original: id,
    payload: { session: row, messages, artifacts: [], goal: null },
  });
  createSession(db, { id, title: 'The new owner of this id' });

  const conflict = await api(port, 'POST', `/api/trash/${item.id}/restore`, {});
  assert.is(conflict.status, 409);
  assert.match(conflict.body.error.message, /exists/);
  assert.is(conflict.body.error.details.reason, 'original_taken');
  assert.is(
    (await api(port, 'GET', `/api/sessions/${id}`)).body.title,
    'The new owner of this id',
    'the occupant is untouched',
  );
  const copy = await api(port, 'POST', `/api/trash/${item.id}/restore`, { as_new: true });
  assert.is(copy.status, 200, JSON.stringify(copy.body));
  const back = (await api(port, 'GET', `/api/sessions/${copy.body.restored_to}/messages`)).body
    .items;
  assert.equal(
    back.map((m: any) => m.content),
    ['line 1', 'line 2'],
  );
});

test('unknown trash items are 404; delete for good; empty', async () => {
  assert.is((await api(port, 'POST', '/api/trash/t_0000000000000000000000/restore')).status, 404);
  const unknown = await api(port, 'DELETE', '/api/trash/t_0000000000000000000000');
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error.code, 'not_found');

  const ids: string[] = [];
  for (const t of ['a', 'b', 'c']) {
    const s = (await api(port, 'POST', '/api/sessions', { title: t })).body;
    ids.push((await api(port, 'DELETE', `/api/sessions/${s.id}`)).body.trash_id);
  }
  const gone = await api(port, 'DELETE', `/api/trash/${ids[0]}`);
  assert.is(gone.status, 200);
  assert.is(
    (await api(port, 'POST', `/api/trash/${ids[0]}/restore`)).status,
    404,
    'deleted for good',
  );
  const count = (await api(port, 'GET', '/api/trash')).body.items.length;
  assert.ok(count >= 2);
  const emptied = await api(port, 'POST', '/api/trash/empty');
  assert.equal(emptied.body, { deleted: count });
  assert.equal((await api(port, 'GET', '/api/trash')).body, {
    items: [],
    next_cursor: null,
    total_items: 0,
    total_bytes: 0,
  });
  assert.is((await api(port, 'POST', `/api/trash/${ids[1]}/restore`)).status, 404);
  assert.equal((await api(port, 'POST', '/api/trash/empty', {})).body, { deleted: 0 });
  assert.is((await api(port, 'POST', '/api/trash/empty', { all: true })).status, 400);
});

test('trash and session events reach subscribers', async () => {
  const c = await subscribe(port, ['trash', 'sessions']);
  try {
    const s = (await api(port, 'POST', '/api/sessions', { title: 'evented' })).body;
    const trashId = (await api(port, 'DELETE', `/api/sessions/${s.id}`)).body.trash_id;
    const added = await c.next((e) => e.type === 'trash.added', 'trash.added');
    assert.equal(
      [added.topic, added.data.id, added.data.kind, added.data.name],
      ['trash', trashId, 'session', 'evented'],
    );
    await api(port, 'POST', `/api/trash/${trashId}/restore`);
    const restored = await c.next((e) => e.type === 'trash.restored', 'trash.restored');
    assert.equal(restored.data, { id: trashId, kind: 'session', restored_to: s.id });
    const back = await c.next((e) => e.type === 'session.restored', 'session.restored');
    assert.equal(back.data, s);
    await api(port, 'DELETE', `/api/sessions/${s.id}`);
    await api(port, 'POST', '/api/trash/empty');
    const emptied = await c.next((e) => e.type === 'trash.emptied', 'trash.emptied');
    assert.ok(emptied.data.deleted >= 1);
  } finally {
    c.close();
  }
});

test('retention removes items past their days, then the oldest until the size fits', async () => {
  const paths = resolvePaths({ SVC_HOME: server.home });
  const made: Array<{ id: string; size: number }> = [];
  for (const t of ['old', 'middle', 'new']) {
    const s = createSession(db, { title: t });
    appendMessage(db, s.id, { role: 'user', content: t.repeat(200) });
    const r = trashSession(db, paths, s.id)!;
    made.push({ id: r.item.id, size: r.item.size_bytes });
  }
  const now = new Date();
  const within = enforceTrashRetention(
    db,
    paths,
    { retention_days: 14, max_bytes: 10 * 2 ** 30 },
    new Date(now.getTime() + 13 * 86_400_000),
  );
  assert.is(within.removed.length, 0, 'nothing is older than 14 days yet');
  const fit = made[1]!.size + made[2]!.size;
  const bySize = enforceTrashRetention(db, paths, { retention_days: 14, max_bytes: fit }, now);
  assert.equal(
    bySize.removed.map((i) => i.id),
    [made[0]!.id],
    'the oldest goes first',
  );
  assert.is(bySize.freed_bytes, made[0]!.size);
  const listed = (await api(port, 'GET', '/api/trash')).body.items.map((i: { id: string }) => i.id);
  assert.equal(listed, [made[2]!.id, made[1]!.id], 'the user sees what is left, newest first');
  const aged = enforceTrashRetention(
    db,
    paths,
    { retention_days: 14, max_bytes: 10 * 2 ** 30 },
    new Date(now.getTime() + 15 * 86_400_000),
  );
  assert.equal(aged.removed.map((i) => i.id).sort(), [made[1]!.id, made[2]!.id].sort());
  assert.equal((await api(port, 'GET', '/api/trash')).body.items, []);
});

test('kinds with bytes on disk: the blob folder comes and goes with its item', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-trash-blob-'));
  try {
    const paths = resolvePaths({ SVC_HOME: home });
    const store = openAndMigrate(paths.db).db;
    const file = join(home, 'notes.md');
    writeFileSync(file, 'x'.repeat(5000));
    const item = putInTrash(store, paths, {
      kind: 'file',
      name: 'notes.md',
      original: file,
      payload: { path: file },
      blobFrom: file,
    });
    assert.ok(!existsSync(file), 'moved out of its place');
    assert.ok(existsSync(join(trashBlobDir(paths, item.id), 'notes.md')));
    assert.ok(item.size_bytes >= 5000, 'size counts the bytes on disk');
    assert.throws(
      () => restoreFromTrash(store, paths, {}, item.id, {}),
      /does not know how to restore/,
    );
    const fileKind = {
      restore: ({ blobDir }: { blobDir: string | null }) => {
        writeFileSync(file, readFileSync(join(blobDir!, 'notes.md')));
        return { restored_to: file };
      },
    };
    assert.is(
      restoreFromTrash(store, paths, { file: fileKind }, item.id, {}).result.restored_to,
      file,
    );
    assert.is(readFileSync(file, 'utf8').length, 5000);
    assert.ok(!existsSync(trashBlobDir(paths, item.id)), 'the blob folder goes with the item');

    const second = putInTrash(store, paths, {
      kind: 'file',
      name: 'notes.md',
      original: file,
      payload: {},
      blobFrom: file,
    });
    const orphan = join(paths.trashDir, 't_000000000000000000000');
    mkdirSync(orphan);
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(orphan, old, old);
    enforceTrashRetention(store, paths, { retention_days: 14, max_bytes: 1 }, new Date());
    assert.equal(listTrash(store), []);
    assert.ok(!existsSync(trashBlobDir(paths, second.id)), 'evicted items lose their bytes');
    assert.ok(!existsSync(orphan), 'a folder no item names (a crash leftover) is removed');
    store.close();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();
