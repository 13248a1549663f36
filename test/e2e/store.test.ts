import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openAndMigrate, openDb } from '../../src/shared/store/db.js';
import { appendMessage, messageRowsAfter } from '../../src/shared/store/messages.js';
import { MetaStore } from '../../src/shared/store/meta.js';
import { createSession } from '../../src/shared/store/sessions.js';
import { insertUpload } from '../../src/shared/store/uploads.js';
import { migrate, migrations } from '../../src/shared/store/migrations.js';
import { removeHome, runCli, startServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-store-'));
const file = join(dir, 'svc.db');

test('migrations run once, in WAL mode, and are recorded', () => {
  const first = openAndMigrate(file);
  assert.equal(
    first.applied,
    migrations.map((m) => m.version),
  );
  assert.is(first.db.pragma('journal_mode', { simple: true }), 'wal');
  first.db.close();
  const second = openAndMigrate(file);
  assert.equal(second.applied, []);
  const rows = second.db
    .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
    .all();
  assert.equal(
    rows,
    migrations.map((m) => ({ version: m.version, name: m.name })),
  );
  second.db.close();
});

test('a failing migration leaves nothing half-applied', () => {
  const db = openDb(join(dir, 'fail.db'));
  const broken = [
    ...migrations,
    {
      version: 99,
      name: 'broken',
      up: (d: typeof db) => {
        d.exec('CREATE TABLE half (x)');
        d.exec('THIS IS NOT SQL');
      },
    },
  ];
  assert.throws(() => migrate(db, broken));
  assert.equal(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").get(), {
    n: 0,
  });
  assert.equal(db.prepare('SELECT max(version) AS v FROM schema_migrations').get(), {
    v: Math.max(...migrations.map((m) => m.version)),
  });
  db.close();
});

test('a database from a newer svc is refused with a clear reason', () => {
  const db = openDb(join(dir, 'newer.db'));
  migrate(db);
  db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
    1000,
    'future',
    new Date().toISOString(),
  );
  assert.throws(() => migrate(db), /newer than this svc knows/);
  db.close();
});

test('attachments recorded before their original names were kept get them on upgrade', () => {
  const db = openDb(join(dir, 'names.db'));
  migrate(
    db,
    migrations.filter((m) => m.version < 24),
  );
  const s = createSession(db, { title: 'Old chat' });
  const known = '20261127-150805-w2l8fi_notes.txt';
  insertUpload(db, {
    name: known,
    original_name: 'my notes.txt',
    mime: 'text/plain',
    size: 5,
    sha256: '0'.repeat(64),
    created_at: new Date().toISOString(),
  });
  const att = (name: string) => ({ name, mime: 'text/plain', size: 5, path: `/u/${name}` });
  appendMessage(db, s.id, {
    role: 'user',
    content: {
      text: 'files',
      attachments: [att(known), att('20261126-010203-abc123_gone.pdf'), att('odd-name.txt')],
    },
  });
  appendMessage(db, s.id, { role: 'assistant', content: { text: 'Seen "attachments".' } });
  migrate(db);
  const [user, reply] = messageRowsAfter(db, s.id, 0).map((r) => JSON.parse(r.content));
  assert.equal(
    user.attachments.map((a: { original_name: string }) => a.original_name),
    ['my notes.txt', 'gone.pdf', 'odd-name.txt'],
    'from the uploads table, else the stored name without its prefix',
  );
  assert.is(user.attachments[0].name, known, 'every field kept');
  assert.is(user.attachments[0].path, `/u/${known}`);
  assert.is(user.text, 'files');
  assert.equal(reply, { text: 'Seen "attachments".' }, 'other messages untouched');
  db.close();
});

test('meta values round-trip and survive reopening', () => {
  const a = openAndMigrate(file).db;
  new MetaStore(a).set('k', 'v1');
  new MetaStore(a).set('k', 'v2');
  a.close();
  const b = openAndMigrate(file).db;
  assert.is(new MetaStore(b).get('k'), 'v2');
  assert.is(new MetaStore(b).get('missing'), undefined);
  b.close();
});

test('svc serve migrates $SVC_HOME/svc.db at start and records the start', async () => {
  const server = await startServer();
  try {
    const db = openDb(join(server.home, 'svc.db'), { readonly: true });
    const versions = db.prepare('SELECT version FROM schema_migrations').all();
    assert.is(versions.length, migrations.length);
    assert.ok(new MetaStore(db).get('last_start'));
    db.close();
    const status = await runCli(['status', '--json'], { SVC_HOME: server.home });
    assert.is(status.code, 0);
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
