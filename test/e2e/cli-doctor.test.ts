import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  openSync,
  closeSync,
  statSync,
  writeFileSync,
  writeSync,
  fstatSync,
} from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeProvider, type FakeProvider } from '../fixtures/fake-provider.js';
import { removeHome, runCli, startServer, tmpHome } from '../helpers/server.js';

/*
 * `svc doctor` through the real CLI: a healthy home with a running server and a reachable model,
 * then homes broken in the ways a user's gets broken (a bad config.yml, loosened modes and a
 * stale pid file, a damaged svc.db, a model that refuses its key or cannot be reached).
 */

const KEY = 'sk-doctor-test-key-0123456789';
let fake: FakeProvider;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY, models: ['fake-model'] });
});

test.after(async () => {
  await fake?.close();
});

interface Check {
  id: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  fix?: string;
}

async function doctor(home: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const r = await runCli(['doctor', '--json', ...args], { SVC_HOME: home, ...env }, 60_000);
  let report: { ok: boolean; fixed: string[]; checks: Check[] };
  try {
    report = JSON.parse(r.stdout);
  } catch {
    throw new Error(
      `svc doctor --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`,
    );
  }
  const byId = (id: string) => {
    const c = report.checks.find((x) => x.id === id);
    if (!c)
      throw new Error(`no check "${id}" in ${JSON.stringify(report.checks.map((x) => x.id))}`);
    return c;
  };
  return { ...r, report, byId };
}

const modelConfig = (key: string, baseUrl = fake.baseUrl('openai')) =>
  `models:\n  main:\n    provider: custom\n    protocol: openai\n    base_url: ${baseUrl}\n    model: fake-model\n    api_key: ${key}\nslots:\n  default: main\n`;

test('a healthy home with a running server: every line ok or an explained warn, exit 0', async () => {
  const server = await startServer({ config: modelConfig(KEY) });
  try {
    const r = await doctor(server.home);
    assert.is(r.code, 0, r.stdout + r.stderr);
    assert.ok(r.report.ok);
    assert.equal(
      r.report.checks.filter((c) => c.status === 'fail'),
      [],
    );
    for (const c of r.report.checks.filter((x) => x.status === 'warn'))
      assert.ok(c.message.length > 20, `a warn says why: ${JSON.stringify(c)}`);
    assert.match(r.byId('node').message, `Node ${process.versions.node}`);
    const engine = JSON.parse(
      (await runCli(['status', '--json'], { SVC_HOME: server.home })).stdout,
    ).engine;
    assert.match(
      r.byId('node').message,
      `HTTP engine: ${engine === 'uws' ? 'uWebSockets.js native' : 'node:http'} (the running server's)`,
    );
    assert.match(r.byId('running').message, /svc runs \(supervisor pid \d+\)/);
    assert.is(r.byId('home').status, 'ok');
    assert.match(r.byId('database').message, /passes quick_check; schema version \d+ \(current\)/);
    assert.is(r.byId('config').status, 'ok');
    assert.is(r.byId('model main').status, 'ok');
    assert.match(r.byId('model main').message, /custom\/fake-model answered in \d+ ms/);
    assert.ok(
      fake.requests.some((q) => q.answer === 'when_empty'),
      'the probe reached the provider',
    );
    assert.match(r.byId('address').message, `listens on 127.0.0.1:${server.port}`);
    assert.match(r.byId('sandbox').status, /^(ok|warn)$/);
    assert.match(
      r.byId('release').message,
      /^svc \d+\.\d+\.\d+; svc serve looks for newer releases at https:\/\/\S+ every 12 hours \(svc upgrade --check looks now\)$/,
    );
    assert.not.match(r.stdout, KEY, 'no provider key in the report');
    assert.not.match(r.stdout, server.key(), 'no access key in the report');

    // the text form: one line per check, then the tally
    const text = await runCli(['doctor'], { SVC_HOME: server.home }, 60_000);
    assert.is(text.code, 0);
    const lines = text.stdout.trimEnd().split('\n');
    assert.is(lines.length, r.report.checks.length + 1);
    for (const line of lines.slice(0, -1)) assert.match(line, /^(ok  |warn|fail)  \S/);
    assert.match(lines.at(-1)!, /^\d+ ok, \d+ warn, 0 fail$/);
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('a broken config.yml fails with the file, the key and the fix; exit 1', async () => {
  const home = tmpHome();
  try {
    writeFileSync(join(home, 'config.yml'), 'agent:\n  max_wokers: 3\n', { mode: 0o600 });
    const r = await doctor(home);
    assert.is(r.code, 1);
    assert.is(r.report.ok, false);
    const config = r.byId('config');
    assert.is(config.status, 'fail');
    assert.match(config.message, /config\.yml: unknown key "max_wokers" under agent/);
    assert.match(config.fix ?? '', /edit .*config\.yml/);
    assert.is(
      r.byId('models').status,
      'warn',
      'models cannot be judged, which is a warn, not a second failure',
    );
    assert.match(
      r.byId('node').message,
      /HTTP engine: (uWebSockets\.js native|node:http) would serve \(/,
    );
    assert.is(
      r.byId('release').status,
      'warn',
      'where releases come from cannot be read from a broken config',
    );
    const text = await runCli(['doctor'], { SVC_HOME: home }, 60_000);
    assert.is(text.code, 1);
    assert.match(text.stdout, /^fail  config\s+.*max_wokers.*\(fix: edit /m);
  } finally {
    removeHome(home);
  }
});

test('loose modes and a stale pid file: fail, then --fix tightens and removes them and says so', async () => {
  const home = tmpHome();
  try {
    chmodSync(home, 0o755);
    writeFileSync(join(home, 'config.yml'), 'log:\n  level: info\n', { mode: 0o644 });
    writeFileSync(join(home, 'access_key'), 'a'.repeat(64) + '\n', { mode: 0o644 });
    chmodSync(join(home, 'config.yml'), 0o644);
    chmodSync(join(home, 'access_key'), 0o644);
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    // the pid of a process that has certainly exited
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    // Too open as well: removing it must not then fail the tightening of the modes.
    writeFileSync(join(home, 'run', 'svc.pid'), `${dead}\n`, { mode: 0o644 });
    chmodSync(join(home, 'run', 'svc.pid'), 0o644);

    const before = await doctor(home);
    assert.is(before.code, 1);
    const modes = before.byId('home');
    assert.is(modes.status, 'fail');
    for (const name of ['config.yml is 644', 'access_key is 644', `${home} is 755`])
      assert.match(modes.message, name);
    assert.match(modes.fix ?? '', 'svc doctor --fix');
    assert.is(before.byId('running').status, 'warn');
    assert.match(before.byId('running').message, `stale pid file names process ${dead}`);

    const fixed = await doctor(home, ['--fix']);
    assert.is(fixed.code, 0, JSON.stringify(fixed.report, null, 2));
    assert.ok(
      fixed.report.fixed.some((f) => f.includes('config.yml to 600')),
      JSON.stringify(fixed.report.fixed),
    );
    assert.ok(
      fixed.report.fixed.some((f) => f.includes('removed the stale')),
      JSON.stringify(fixed.report.fixed),
    );
    assert.not.ok(
      fixed.report.fixed.some((f) => f.includes('could not repair')),
      JSON.stringify(fixed.report.fixed),
    );
    assert.is(fixed.byId('home').status, 'ok');
    assert.is(fixed.byId('running').status, 'ok');
    assert.is(statSync(home).mode & 0o777, 0o700);
    assert.is(statSync(join(home, 'config.yml')).mode & 0o777, 0o600);
    assert.is(statSync(join(home, 'access_key')).mode & 0o777, 0o600);
    assert.is(existsSync(join(home, 'run', 'svc.pid')), false);

    const text = await runCli(['doctor', '--fix'], { SVC_HOME: home }, 60_000);
    assert.is(text.code, 0);
    assert.not.match(text.stdout, /^fixed /m, 'nothing left to fix the second time');
  } finally {
    removeHome(home);
  }
});

test('a damaged svc.db fails the database check; a file that is no database too', async () => {
  const server = await startServer();
  const home = server.home;
  try {
    await server.stop();
    const db = join(home, 'svc.db');
    const good = await doctor(home);
    assert.is(good.byId('database').status, 'ok', good.byId('database').message);

    // scribble over every page after the first: the header still opens, the b-trees do not hold
    const fd = openSync(db, 'r+');
    const size = fstatSync(fd).size;
    const junk = Buffer.alloc(256, 0xa5);
    for (let at = 4096 + 16; at + junk.length < size; at += 4096)
      writeSync(fd, junk, 0, junk.length, at);
    closeSync(fd);
    const bad = await doctor(home);
    assert.is(bad.code, 1);
    assert.is(bad.byId('database').status, 'fail');
    assert.match(bad.byId('database').message, /^svc\.db is damaged: /);
    assert.match(bad.byId('database').fix ?? '', /backup/);

    writeFileSync(db, 'this is not a database, just text that happens to be here\n'.repeat(100));
    const text = await doctor(home);
    assert.is(text.code, 1);
    assert.is(text.byId('database').status, 'fail');
    assert.match(text.byId('database').message, /svc\.db is damaged: .*not a database/);
  } finally {
    await server.stop();
    removeHome(home);
  }
});

test('a model whose key is refused fails; one that cannot be reached fails; one that stalls is a warn', async () => {
  const home = tmpHome();
  const closed = await startFakeProvider();
  const closedUrl = closed.baseUrl('openai');
  await closed.close();
  try {
    writeFileSync(join(home, 'config.yml'), modelConfig('sk-wrong-key-0000000000'), {
      mode: 0o600,
    });
    const badKey = await doctor(home);
    assert.is(badKey.code, 1);
    assert.is(badKey.byId('model main').status, 'fail');
    assert.match(badKey.byId('model main').message, /refused the key/);
    assert.not.match(badKey.stdout, 'sk-wrong-key-0000000000');

    writeFileSync(join(home, 'config.yml'), modelConfig(KEY, closedUrl), { mode: 0o600 });
    const gone = await doctor(home);
    assert.is(gone.byId('model main').status, 'fail');
    assert.match(gone.byId('model main').message, /cannot be reached/);

    writeFileSync(join(home, 'config.yml'), modelConfig(KEY), { mode: 0o600 });
    fake.enqueue({ parts: [{ stall: true }] });
    const slow = await doctor(home, ['--timeout', '1']);
    assert.is(
      slow.byId('model main').status,
      'warn',
      'a slow answer cannot tell unreachable from slow: warn',
    );
    assert.match(slow.byId('model main').message, /did not answer within 1 s/);
  } finally {
    removeHome(home);
  }
});

test.run();
