import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  http,
  removeHome,
  runCli,
  startServer,
  stopProcess,
  svcBin,
  tmpHome,
  waitFor,
  type RunningServer,
} from '../helpers/server.js';

/*
 * `svc logs` through the real CLI against a real server: every process's lines land in files
 * under $SVC_HOME/logs (the supervisor's own and each child's stderr), which rotate by size;
 * the command filters them by process and time, prints JSON, and follows new lines.
 */

let server: RunningServer;

test.before(async () => {
  // small files, so a few restarts rotate them
  server = await startServer({ config: 'log:\n  file_bytes: 1024\n  files: 2\n' });
});

test.after(async () => {
  if (!server) return;
  await server.stop();
  removeHome(server.home);
});

const logs = (args: string[]) => runCli(['logs', ...args], { SVC_HOME: server.home }, 30_000);

const restarts = async () =>
  (await http({ port: server.port, path: '/api/status' })).json().restarts as number;

async function restart(): Promise<void> {
  const before = await restarts();
  const res = await http({
    port: server.port,
    method: 'POST',
    path: '/api/restart',
    headers: { 'Content-Type': 'application/json' },
    body: '{"reason":"logs test"}',
  });
  assert.is(res.status, 202);
  await waitFor(async () => (await restarts()) > before, 30_000, 'the restart to finish');
}

test('every process logs to its own file; svc logs merges them by time', async () => {
  await waitFor(() => existsSync(join(server.home, 'logs', 'gateway.log')), 10_000, 'gateway.log');
  const r = await logs([]);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.ok(
    lines.some((l) => / info {2}supervisor: store migrated/.test(l)),
    r.stdout,
  );
  assert.ok(
    lines.some((l) => / info {2}gateway: listening with/.test(l)),
    r.stdout,
  );
  const times = lines
    .map((l) => /^(\S+Z) /.exec(l)?.[1])
    .filter((t): t is string => t !== undefined);
  assert.equal(times, [...times].sort(), 'oldest first');
  assert.not.match(r.stdout, server.key(), 'the access key is in no log');
});

test('--process, --json and --since filter what is printed', async () => {
  const json = await logs(['--process', 'gateway', '--json']);
  assert.is(json.code, 0, json.stderr);
  const rows = json.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.ok(rows.length > 0);
  for (const row of rows) {
    assert.is(row.process, 'gateway');
    assert.match(row.time, /^\d{4}-\d\d-\d\dT/);
    assert.match(row.level, /^(debug|info|warn|error)$/);
    assert.type(row.message, 'string');
  }

  const mark = new Date();
  await restart();
  const since = await logs(['--since', mark.toISOString(), '--json']);
  const recent = since.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.ok(
    recent.some((l) => l.process === 'supervisor' && l.message.startsWith('restart requested')),
    since.stdout,
  );
  assert.ok(
    recent.every((l) => l.time >= mark.toISOString()),
    'nothing older than --since',
  );
  assert.not.ok(
    recent.some((l) => l.message.startsWith('store migrated')),
    'the start was before the mark',
  );
  const tenMinutes = await logs(['--since', '10m', '--process', 'supervisor']);
  assert.match(tenMinutes.stdout, 'store migrated');

  const unknown = await logs(['--process', 'nosuch']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /no log for process "nosuch".*there are: .*gateway.*supervisor/);
  const badSince = await logs(['--since', 'yesterday-ish']);
  assert.is(badSince.code, 2);
  assert.match(badSince.stderr, /--since "yesterday-ish" is neither a duration/);
});

test('-f prints a line written after it started', async () => {
  const proc = spawn(process.execPath, [svcBin, 'logs', '-f', '--process', 'supervisor'], {
    env: { ...process.env, SVC_HOME: server.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    await waitFor(() => out.includes('supervisor:'), 15_000, 'the recent lines');
    const seen = out.split('\n').filter((l) => l.includes('restart requested')).length;
    await restart();
    await waitFor(
      () => out.split('\n').filter((l) => l.includes('restart requested')).length > seen,
      15_000,
      'the new line to be followed',
    );
    assert.not.match(out, 'gateway:', 'only the chosen process');
  } finally {
    await stopProcess(proc);
  }
});

test('the files rotate by size and keep the configured number', async () => {
  const dir = join(server.home, 'logs');
  for (let i = 0; i < 12 && !existsSync(join(dir, 'supervisor.log.1')); i++) await restart();
  assert.ok(existsSync(join(dir, 'supervisor.log.1')), 'supervisor.log was rotated');
  for (let i = 0; i < 12 && !existsSync(join(dir, 'supervisor.log.2')); i++) await restart();
  await restart(); // once more past two rotations: a third old file must not appear
  const names = readdirSync(dir);
  assert.not.ok(names.includes('supervisor.log.3'), `at most 2 old files: ${names.join(' ')}`);
  for (const name of names.filter((n) => n.startsWith('supervisor.log')))
    assert.ok(statSync(join(dir, name)).size <= 1024, `${name} is within the limit`);
  // svc logs reads across the rotated files, still oldest first
  const r = await logs(['--process', 'supervisor', '-n', '1000', '--json']);
  const rows = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  const onDisk = ['supervisor.log.2', 'supervisor.log.1', 'supervisor.log']
    .map((n) => readFileSync(join(dir, n), 'utf8'))
    .join('')
    .trimEnd()
    .split('\n');
  assert.is(rows.length, onDisk.length, 'every kept line is printed');
  assert.equal(
    rows.map((l) => l.time),
    [...rows.map((l) => l.time)].sort(),
  );
});

test("svc serve -d that fails prints only its own lines of logs/serve.log, not an earlier run's", async () => {
  const home = tmpHome();
  try {
    mkdirSync(join(home, 'logs'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(home, 'logs', 'serve.log'),
      Array.from({ length: 30 }, (_, i) => `an earlier run, line ${i}: port already in use`).join(
        '\n',
      ) + '\n',
      { mode: 0o600 },
    );
    writeFileSync(join(home, 'config.yml'), 'agnet:\n  max_workers: 2\n', { mode: 0o600 });
    const r = await runCli(['serve', '-d', '--addr', '127.0.0.1:0'], { SVC_HOME: home }, 30_000);
    assert.is.not(r.code, 0);
    const said = r.stdout + r.stderr;
    assert.match(said, /agnet/, `the config problem is shown: ${said}`);
    assert.not.match(said, /an earlier run/, said);
  } finally {
    removeHome(home);
  }
});

test.run();
