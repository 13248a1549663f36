import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openAndMigrate, openDb } from '../../src/shared/store/db.js';
import { MetaStore } from '../../src/shared/store/meta.js';
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
