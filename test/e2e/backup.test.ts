import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import {
  http,
  removeHome,
  runCli,
  startServer,
  svcBin,
  tmpHome,
  waitFor,
} from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';
import { BACKUP_NAME } from '../../src/shared/backup/manifest.js';
import { Database } from '../../src/shared/store/sqlite.js';
import { migrate, migrations } from '../../src/shared/store/migrations.js';

/*
 * `svc backup` against a real running svc: a snapshot taken mid-turn restores to exactly what
 * was committed at that moment, a killed backup never looks finished, verify finds a flipped byte
 * in every kind of file, encryption is the standard age format, and restore refuses what it must.
 */

let rig: TurnRig;
const made: string[] = [];
const scratch = () => {
  const d = tmpHome('svc-backup-test-');
  made.push(d);
  return d;
};

test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  const home = rig.server.home;
  mkdirSync(join(home, 'memory'), { recursive: true });
  writeFileSync(join(home, 'memory', 'notes.md'), 'The user likes tea.\n');
  writeFileSync(join(home, 'soul.md'), 'Be brief.\n');
  mkdirSync(join(home, 'skills', 'tea'), { recursive: true });
  writeFileSync(
    join(home, 'skills', 'tea', 'SKILL.md'),
    '---\nname: tea\ndescription: Brews tea.\n---\nBoil water.\n',
  );
  mkdirSync(join(home, 'uploads'), { recursive: true });
  writeFileSync(join(home, 'uploads', 'photo.bin'), Buffer.alloc(300_000, 7));
  // An agent worker up before the timed part: a cold start on a loaded machine is not what this file tests.
  await waitFor(
    async () => {
      const r = await api(rig.port, 'POST', '/api/chat', { message: 'warm up' });
      return r.status < 300 && r.body?.status === 'completed';
    },
    60_000,
    'a first turn to be answered',
  );
});
test.after(async () => {
  await rig?.stop();
  for (const d of made) removeHome(d);
});

const backupCli = (args: string[], home = rig.server.home, env: NodeJS.ProcessEnv = {}) =>
  runCli(['backup', ...args], { SVC_HOME: home, SVC_BACKUP_PASSPHRASE: '', ...env }, 60_000);

async function create(to: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const r = await backupCli(['create', '--to', to, '--json', ...extra], rig.server.home, env);
  assert.is(r.code, 0, `backup create: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as { file: string; files: number; encrypted: boolean };
}

const messagesOf = async (port: number, id: string) =>
  ((await api(port, 'GET', `/api/sessions/${id}/messages?limit=200`)).body.items as any[]).map(
    (m) => ({ id: m.id, role: m.role, content: JSON.stringify(m.content ?? m.text ?? null) }),
  );
const sessionIds = async (port: number) =>
  ((await api(port, 'GET', '/api/sessions?limit=200')).body.items as any[])
    .map((s) => s.id as string)
    .sort();

test('a backup taken while four turns stream and a cron task runs restores to the committed state', async () => {
  const port = rig.port;
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const sessions: string[] = [];
  for (let i = 0; i < 4; i++) {
    const s = await api(port, 'POST', '/api/sessions', { title: `Busy ${i}` });
    assert.is(s.status, 201);
    sessions.push(s.body.id);
    rig.fake.enqueue({ parts: [{ text: `half ${i} ` }, { gate }, { text: `done ${i}` }] });
  }
  rig.fake.enqueue({ parts: [{ text: 'cron half ' }, { gate }, { text: 'cron done' }] });
  const base = rig.fake.requests.length;
  // One after another, each until its model call is under way: workers start one at a time.
  for (const [i, id] of sessions.entries()) {
    const t = await api(port, 'POST', `/api/chat/${id}/turn?wait=false`, { message: `go ${i}` });
    assert.is(t.status, 202, JSON.stringify(t.body));
    await rig.fake.waitForRequests(base + i + 1, 30_000);
  }
  const task = await api(port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Nightly',
    schedule: '0 0 1 1 *',
    prompt: 'tick',
    enabled: false,
  });
  assert.is(task.status, 201, JSON.stringify(task.body));
  assert.is((await api(port, 'POST', `/api/tasks/${task.body.id}/run`)).status, 202);
  await rig.fake.waitForRequests(base + 5, 30_000);

  const before = new Map<string, unknown>();
  for (const id of sessions) before.set(id, await messagesOf(port, id));
  const to = scratch();
  const mid = await create(to);
  open();
  for (const id of sessions)
    await waitFor(
      async () => (await messagesOf(port, id)).some((m) => m.content.includes('done')),
      30_000,
      `the turn of ${id} to finish`,
    );

  // Restored on the other HTTP engine where this runtime has two.
  const home = join(scratch(), 'restored');
  const r = await backupCli(['restore', mid.file, '--home', home]);
  assert.is(r.code, 0, r.stderr);
  const restored = await startServer({ home, env: { SVC_HTTP_ENGINE: 'node' } });
  try {
    assert.equal(await sessionIds(restored.port), await sessionIds(port));
    for (const id of sessions) {
      const got = await messagesOf(restored.port, id);
      assert.equal(got, before.get(id), `session ${id}: what was committed at the backup`);
      assert.ok(
        got.some((m) => m.content.includes(`go`)),
        'the user message was committed',
      );
      assert.not.ok(
        got.some((m) => m.content.includes('done')),
        'nothing committed after the snapshot',
      );
    }
    const tasks = (await api(restored.port, 'GET', '/api/tasks?kind=cron')).body.items as any[];
    assert.ok(
      tasks.some((t) => t.name === 'Nightly'),
      'the schedule came along',
    );
    const soul = await api(restored.port, 'GET', '/api/profile/soul');
    assert.is(soul.body.content, 'Be brief.\n');
    const memories = (await api(restored.port, 'GET', '/api/memories')).body;
    assert.ok(
      memories.files.some((f: any) => f.name === 'notes' || f.file === 'notes.md'),
      JSON.stringify(memories),
    );
  } finally {
    await restored.stop();
  }

  // Once the turns are done, a backup restores to exactly the live state.
  await waitFor(
    async () =>
      ((await api(port, 'GET', `/api/tasks/${task.body.id}/runs`)).body.items as any[]).every(
        (x) => x.status !== 'running',
      ),
    30_000,
    'the cron run to end',
  );
  const after = await create(to);
  const home2 = join(scratch(), 'restored2');
  assert.is((await backupCli(['restore', after.file, '--home', home2])).code, 0);
  const again = await startServer({ home: home2 });
  try {
    for (const id of await sessionIds(port))
      assert.equal(await messagesOf(again.port, id), await messagesOf(port, id), id);
    const models = (await api(again.port, 'GET', '/api/config/models')).body;
    assert.match(JSON.stringify(models), '"oa"');
  } finally {
    await again.stop();
  }
});

test('a backup killed at any point never leaves a file that looks finished', async () => {
  const to = scratch();
  for (const after of [50, 150, 300, 600, 1200]) {
    const child = spawn(process.execPath, [svcBin, 'backup', 'create', '--to', to], {
      env: { ...process.env, SVC_HOME: rig.server.home },
      stdio: 'ignore',
    });
    // Listened for from the start: on a quiet machine a backup can finish before the kill, and
    // an 'exit' already emitted would be waited for forever.
    const exited = new Promise((r) => child.once('exit', r));
    await new Promise((r) => setTimeout(r, after)); // a point in its run, not a wait for a condition
    child.kill('SIGKILL');
    await exited;
    for (const name of readdirSync(to))
      if (BACKUP_NAME.test(name)) {
        // it finished before the kill: then it must be whole
        const v = await backupCli(['verify', join(to, name)]);
        assert.is(v.code, 0, `${name} looks finished, so it must verify: ${v.stdout}`);
      }
  }
  const done = await create(to);
  const left = readdirSync(to).filter((n) => n.startsWith('.'));
  assert.equal(left, [], 'the next backup sweeps what killed ones left');
  assert.is(statSync(done.file).mode & 0o777, 0o600, 'the archive holds secrets: 0600');
});

/** The offset of an entry's data in a zip (after its local header). */
function dataOffset(zip: Buffer, name: string): number {
  for (let at = 0; at < zip.length - 30; at++) {
    if (zip.readUInt32LE(at) !== 0x04034b50) continue;
    const nameLen = zip.readUInt16LE(at + 26);
    const extraLen = zip.readUInt16LE(at + 28);
    if (zip.toString('utf8', at + 30, at + 30 + nameLen) === name)
      return at + 30 + nameLen + extraLen;
  }
  throw new Error(`${name} is not in the archive`);
}

test('verify finds a flipped byte in each kind of file and in the database', async () => {
  const to = scratch();
  const b = await create(to);
  const ok = await backupCli(['verify', b.file, '--json']);
  assert.is(ok.code, 0, ok.stdout);
  assert.is(JSON.parse(ok.stdout).ok, true);
  const zip = readFileSync(b.file);
  for (const name of [
    'svc.db',
    'config.yml',
    'memory/notes.md',
    'skills/tea/SKILL.md',
    'uploads/photo.bin',
    'soul.md',
  ]) {
    const bad = Buffer.from(zip);
    const at = dataOffset(bad, name) + 2;
    bad[at] = (bad[at] ?? 0) ^ 0x55;
    const file = join(to, `flipped-${name.replace(/\//g, '_')}.zip`);
    writeFileSync(file, bad);
    const v = await backupCli(['verify', file, '--json']);
    assert.is(v.code, 1, `${name}: a flipped byte fails verify`);
    const report = JSON.parse(v.stdout);
    assert.ok(
      report.problems.some((p: any) => p.path === name),
      `${name}: named in ${JSON.stringify(report.problems)}`,
    );
  }
});

test('an encrypted backup is the age format: the age tool opens it, a wrong passphrase does not', async () => {
  const to = scratch();
  const pass = join(to, 'pass');
  writeFileSync(pass, 'correct horse battery staple\n', { mode: 0o600 });
  const b = await create(to, ['--encrypt', '--passphrase-file', pass]);
  assert.ok(b.file.endsWith('.zip.age'));
  assert.is(readFileSync(b.file).subarray(0, 22).toString(), 'age-encryption.org/v1\n');
  const wrong = join(to, 'wrong');
  writeFileSync(wrong, 'nope\n');
  const bad = await backupCli(['verify', b.file, '--passphrase-file', wrong]);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, 'the passphrase does not open this backup');
  assert.not.match(bad.stderr + bad.stdout, 'correct horse', 'the passphrase is never printed');
  const good = await backupCli(['verify', b.file], rig.server.home, {
    SVC_BACKUP_PASSPHRASE: 'correct horse battery staple',
  });
  assert.is(good.code, 0, good.stdout + good.stderr);
  const none = await backupCli(['verify', b.file]);
  assert.is(none.code, 1);
  assert.match(none.stderr, 'encrypted');

  // To a recipient key, opened by the standard age tool (installed by .ci/run).
  const keygen = spawnSync('age-keygen', [], { encoding: 'utf8' });
  assert.is(
    keygen.status,
    0,
    `age-keygen runs (apt-get install age): ${keygen.error ?? keygen.stderr}`,
  );
  const identity = join(to, 'key.txt');
  writeFileSync(identity, keygen.stdout, { mode: 0o600 });
  const recipient = /public key: (age1\w+)/.exec(keygen.stdout)?.[1] ?? '';
  const sealed = await create(to, ['--recipient', recipient]);
  const opened = spawnSync('age', ['-d', '-i', identity, '-o', join(to, 'plain.zip'), sealed.file]);
  assert.is(opened.status, 0, String(opened.stderr));
  assert.is(readFileSync(join(to, 'plain.zip')).readUInt32LE(0), 0x04034b50, 'a zip inside');
  const v = await backupCli(['verify', join(to, 'plain.zip')]);
  assert.is(v.code, 0, v.stdout);
  const viaSvc = await backupCli(['verify', sealed.file, '--identity', identity]);
  assert.is(viaSvc.code, 0, viaSvc.stdout + viaSvc.stderr);
});

test('restore refuses a non-empty home, a running one, and a backup of a newer svc; --force keeps the old home aside', async () => {
  const to = scratch();
  const b = await create(to, ['--no-uploads']);
  const r1 = await backupCli(['restore', b.file, '--home', rig.server.home]);
  assert.is(r1.code, 1);
  assert.match(r1.stderr, /running|not empty/);
  const target = join(scratch(), 'home');
  mkdirSync(target);
  writeFileSync(join(target, 'keep.txt'), 'mine');
  const r2 = await backupCli(['restore', b.file, '--home', target]);
  assert.is(r2.code, 1);
  assert.match(r2.stderr, 'not empty');
  assert.ok(existsSync(join(target, 'keep.txt')), 'nothing was touched');
  const r3 = await backupCli(['restore', b.file, '--home', target, '--force', '--json']);
  assert.is(r3.code, 0, r3.stderr);
  const out = JSON.parse(r3.stdout);
  assert.is(readFileSync(join(out.movedAside, 'keep.txt'), 'utf8'), 'mine');
  assert.not.ok(existsSync(join(target, 'uploads', 'photo.bin')), '--no-uploads left them out');
  assert.ok(existsSync(join(target, 'memory', 'notes.md')));

  // An older home's backup is migrated forward; a newer one's is refused naming both.
  for (const [label, schema] of [
    ['older', 10],
    ['newer', 9999],
  ] as const) {
    const home = scratch();
    const db = new Database(join(home, 'svc.db'));
    migrate(
      db,
      migrations.filter((m) => m.version <= 10),
    );
    if (schema > 10)
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(schema, 'future', 'x');
    db.close();
    const made = await backupCli(['create', '--to', join(home, 'out'), '--json'], home);
    assert.is(made.code, 0, made.stderr);
    const file = JSON.parse(made.stdout).file;
    const into = join(scratch(), 'x');
    const r = await backupCli(['restore', file, '--home', into, '--json']);
    if (label === 'older') {
      assert.is(r.code, 0, r.stderr);
      assert.ok(JSON.parse(r.stdout).migrated.length > 0, 'brought forward');
    } else {
      assert.is(r.code, 1);
      assert.match(
        r.stderr,
        /made by svc \S+ \(schema 9999\), newer than this svc \S+ \(schema \d+\)/,
      );
      assert.not.ok(existsSync(into), 'nothing restored');
    }
  }
});

test('scheduled backups keep the newest N, report the last result everywhere, and download', async () => {
  const port = rig.port;
  const dir = join(scratch(), 'scheduled');
  const bad = await api(port, 'PUT', '/api/backups/settings', { schedule: 'every night' });
  assert.is(bad.status, 400, JSON.stringify(bad.body));
  assert.match(JSON.stringify(bad.body), 'schedule');
  const set = await api(port, 'PUT', '/api/backups/settings', {
    schedule: '* * * * * *',
    keep: 2,
    dir,
    uploads: false,
  });
  assert.is(set.status, 200, JSON.stringify(set.body));
  assert.is(set.body.dir, dir);
  const seen = new Set<string>();
  await waitFor(
    async () => {
      const last = (await api(port, 'GET', '/api/backups')).body.last;
      if (last?.trigger === 'schedule' && last.ok) seen.add(last.file);
      return seen.size >= 3;
    },
    60_000,
    'three scheduled backups',
  );
  // The section is replaced whole: what is not sent goes back to its default.
  const stop = await api(port, 'PUT', '/api/backups/settings', { schedule: null, dir, keep: 2 });
  assert.is(stop.status, 200, JSON.stringify(stop.body));
  const list = await waitFor(
    async () => {
      const b = (await api(port, 'GET', '/api/backups')).body;
      // a backup that fired as the schedule went may still finish; its pruning follows it
      return b.items.length <= 2 && b.schedule === null ? b : undefined;
    },
    30_000,
    'the schedule to stop and keep two',
  );
  assert.ok(list.items.length >= 1);
  for (const item of list.items) assert.match(item.name, BACKUP_NAME);

  const status = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  const s = JSON.parse(status.stdout);
  assert.is(s.backup.last.ok, true, status.stdout);
  const doctor = await runCli(
    ['doctor', '--json', '--timeout', '5'],
    { SVC_HOME: rig.server.home },
    60_000,
  );
  const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.id === 'backup');
  assert.is(check?.status, 'ok', JSON.stringify(check));

  const name = list.items[0].name as string;
  const got = await fetch(`http://127.0.0.1:${port}/api/backups/${name}`);
  assert.is(got.status, 200);
  assert.is(got.headers.get('content-type'), 'application/zip');
  const bytes = Buffer.from(await got.arrayBuffer());
  assert.ok(bytes.equals(readFileSync(join(dir, name))), 'the archive, byte for byte');
  for (const path of [
    '/api/backups/nope.zip',
    '/api/backups/..%2Fconfig.yml',
    '/api/backups/svc-backup-20000101-000000.zip',
  ])
    assert.is((await http({ port, path })).status, 404, path);

  // Asked for through the API; then one that cannot be made is reported as failed.
  const made = await api(port, 'POST', '/api/backups');
  assert.is(made.status, 201, JSON.stringify(made.body));
  assert.ok(existsSync(join(dir, made.body.name)));
  const broken = await api(port, 'PUT', '/api/backups/settings', {
    dir,
    encrypt: true,
    passphrase_file: join(dir, 'no-such-file'),
  });
  assert.is(broken.status, 200, JSON.stringify(broken.body));
  const failed = await api(port, 'POST', '/api/backups');
  assert.is(failed.status, 503, JSON.stringify(failed.body));
  assert.match(failed.body.error.message, 'no-such-file');
  const warned = await runCli(
    ['doctor', '--json', '--timeout', '5'],
    { SVC_HOME: rig.server.home },
    60_000,
  );
  const w = JSON.parse(warned.stdout).checks.find((c: any) => c.id === 'backup');
  assert.is(w?.status, 'warn', JSON.stringify(w));
  assert.match(w.message, 'failed');
  assert.is((await api(port, 'PUT', '/api/backups/settings', {})).status, 200);
});

test('usage mistakes are one line and exit 2', async () => {
  for (const args of [['restore'], ['verify'], ['frob'], ['create', '--encrypt']]) {
    const r = await backupCli(args);
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});

test.run();
