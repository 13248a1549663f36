import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openAndMigrate } from '../../src/shared/store/db.js';
import { svcBin, tmpHome, removeHome } from '../helpers/server.js';
import { testUnless } from '../helpers/skip.js';
import { mountTmpfs, tmpfsUnavailable, unmount } from '../helpers/tmpfs.js';

/**
 * Start-up faults of the state folder, as `svc serve` meets them: a damaged svc.db (not a
 * database, malformed), a read-only folder and a full disk (real tmpfs mounts). Each gets a
 * message naming the file and what helps, and its own exit code; a damaged svc.db stays byte for byte.
 */

function serve(home: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [svcBin, 'serve', '--addr', '127.0.0.1:0'], {
      env: { ...process.env, SVC_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // It must not start; if it did, stop it so the test fails on the exit code rather than hanging.
      if (stdout.includes('listening on')) proc.kill('SIGTERM');
    });
    proc.on('exit', (code) => resolve({ code, stderr }));
  });
}

const noTmpfs = tmpfsUnavailable();

test('svc.db that is not a database: exit 65, the file named with the way out, kept byte for byte', async () => {
  const home = tmpHome('svc-faults-start-');
  try {
    const db = join(home, 'svc.db');
    const bytes = Buffer.from('this is not a database\n'.repeat(400));
    writeFileSync(db, bytes, { mode: 0o600 });
    const r = await serve(home);
    assert.is(r.code, 65, r.stderr);
    assert.match(r.stderr, `svc: ${db} is damaged (file is not a database)`);
    assert.match(r.stderr, `mv ${db} ${db}.damaged`);
    assert.ok(readFileSync(db).equals(bytes), 'svc.db untouched');
  } finally {
    removeHome(home);
  }
});

test('a malformed svc.db: exit 65, named, kept byte for byte', async () => {
  const home = tmpHome('svc-faults-start-');
  try {
    const file = join(home, 'svc.db');
    const { db } = openAndMigrate(file);
    db.close();
    // Garbage over the schema page after its 100-byte file header.
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(2000, 0xa5), 0, 2000, 100);
    closeSync(fd);
    const bytes = readFileSync(file);
    const r = await serve(home);
    assert.is(r.code, 65, r.stderr);
    assert.match(r.stderr, `svc: ${file} is damaged (`);
    assert.match(r.stderr, /malformed/);
    assert.ok(readFileSync(file).equals(bytes), 'svc.db untouched');
  } finally {
    removeHome(home);
  }
});

const readOnly = 'a read-only state folder: exit 73, the folder named, how to make it writable';
testUnless(noTmpfs, readOnly, async () => {
  const mnt = mountTmpfs('ro,mode=0700');
  try {
    const r = await serve(mnt);
    assert.is(r.code, 73, r.stderr);
    assert.match(r.stderr, /^svc: svc cannot write /);
    assert.match(r.stderr, `the folder ${mnt} is read-only or not writable by this user`);
    assert.match(r.stderr, /SVC_HOME/);
  } finally {
    unmount(mnt);
  }
});

testUnless(noTmpfs, 'a full disk: exit 74, the folder named, free space', async () => {
  const mnt = mountTmpfs('size=2m,mode=0700');
  try {
    mkdirSync(join(mnt, 'home'), { mode: 0o700 });
    // Fill every block.
    spawnSync('sh', ['-c', `head -c 4194304 /dev/zero > ${join(mnt, 'fill')}`]);
    const r = await serve(join(mnt, 'home'));
    assert.is(r.code, 74, r.stderr);
    assert.match(r.stderr, `svc: the disk holding ${join(mnt, 'home')} is full`);
    assert.match(r.stderr, /Free some space there/);
  } finally {
    unmount(mnt);
  }
});

test.run();
