import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { http, removeHome, runCli, startServer, tmpHome, waitFor } from '../helpers/server.js';

const KEY_FLAG = 'flag-key-' + 'a'.repeat(32);
const KEY_ENV = 'env-key-' + 'b'.repeat(32);
const KEY_CONFIG = 'config-key-' + 'c'.repeat(32);
const KEY_FILE = 'd'.repeat(64);

/** The status a non-local client (Host: evil.example) gets for a route that needs the key. */
async function remote(port: number, key: string): Promise<number> {
  const res = await http({
    port,
    path: '/api/status',
    headers: { Host: 'evil.example', Authorization: `Bearer ${key}` },
  });
  return res.status;
}

/** Asserts that exactly `good` opens the server to a non-local client and every other key gets 401. */
async function onlyKeyWorks(
  port: number,
  good: string,
  others: string[],
  label: string,
): Promise<void> {
  assert.is(await remote(port, good), 200, `${label}: the winning key works`);
  for (const k of others)
    assert.is(await remote(port, k), 401, `${label}: ${k.slice(0, 12)}… is refused`);
}

async function statusJson(home: string): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: home });
  assert.is(r.code, 0, `svc status --json failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const mode = (path: string) => statSync(path).mode & 0o777;
const nonEmptyLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

test('resolution order: --access-key, then SVC_ACCESS_KEY, then config.yml, then the key file', async () => {
  const home = tmpHome();
  const keyFile = join(home, 'access_key');
  const configFile = join(home, 'config.yml');
  writeFileSync(keyFile, KEY_FILE + '\n', { mode: 0o600 });
  writeFileSync(configFile, `access_key: ${KEY_CONFIG}\n`, { mode: 0o600 });
  const all = [KEY_FLAG, KEY_ENV, KEY_CONFIG, KEY_FILE];
  const steps: Array<{
    label: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    good: string;
    before?: () => void;
  }> = [
    {
      label: 'flag + env + config + file',
      args: ['--access-key', KEY_FLAG],
      env: { SVC_ACCESS_KEY: KEY_ENV },
      good: KEY_FLAG,
    },
    { label: 'env + config + file', args: [], env: { SVC_ACCESS_KEY: KEY_ENV }, good: KEY_ENV },
    { label: 'config + file', args: [], env: { SVC_ACCESS_KEY: undefined }, good: KEY_CONFIG },
    {
      label: 'file alone',
      args: [],
      env: { SVC_ACCESS_KEY: undefined },
      good: KEY_FILE,
      before: () => writeFileSync(configFile, '# no key here\n'),
    },
  ];
  try {
    for (const step of steps) {
      step.before?.();
      const server = await startServer({ home, args: step.args, env: step.env });
      try {
        await onlyKeyWorks(
          server.port,
          step.good,
          all.filter((k) => k !== step.good),
          step.label,
        );
      } finally {
        await server.stop();
      }
      assert.is(
        readFileSync(keyFile, 'utf8').trim(),
        KEY_FILE,
        `${step.label}: the key file is left alone`,
      );
    }
  } finally {
    removeHome(home);
  }
});

test('a generated key is 64 hex characters, 0600 in a 0700 folder, and reused on the next start', async () => {
  const parent = tmpHome();
  const home = join(parent, 'svc-home'); // does not exist yet: svc creates it
  const keyFile = join(home, 'access_key');
  try {
    let server = await startServer({ home, env: { SVC_ACCESS_KEY: undefined } });
    let key: string;
    try {
      key = readFileSync(keyFile, 'utf8').trim();
      assert.match(key, /^[0-9a-f]{64}$/);
      assert.is(mode(keyFile).toString(8), '600', 'key file mode');
      assert.is(mode(home).toString(8), '700', 'SVC_HOME mode');
      assert.is(await remote(server.port, key), 200, 'the generated key works');
      assert.is(await remote(server.port, 'e'.repeat(64)), 401, 'another key does not');
    } finally {
      await server.stop();
    }
    // Someone loosened the permissions between starts: svc tightens them and keeps the key.
    chmodSync(keyFile, 0o644);
    chmodSync(home, 0o755);
    server = await startServer({ home, env: { SVC_ACCESS_KEY: undefined } });
    try {
      assert.is(readFileSync(keyFile, 'utf8').trim(), key, 'the same key is reused');
      assert.is(mode(keyFile).toString(8), '600', 'a 0644 key file is tightened to 0600');
      assert.is(mode(home).toString(8), '700', 'a 0755 SVC_HOME is tightened to 0700');
      assert.is(await remote(server.port, key), 200, 'the reused key works');
    } finally {
      await server.stop();
    }
  } finally {
    removeHome(parent);
  }
});

test('a too-short key from flag, environment or config is refused with one clear line', async () => {
  const cases: Array<{ where: RegExp; args: string[]; env: NodeJS.ProcessEnv; config?: string }> = [
    { where: /--access-key/, args: ['--access-key', 'short'], env: { SVC_ACCESS_KEY: undefined } },
    { where: /SVC_ACCESS_KEY/, args: [], env: { SVC_ACCESS_KEY: 'short' } },
    {
      where: /config\.yml.*access_key/,
      args: [],
      env: { SVC_ACCESS_KEY: undefined },
      config: 'access_key: short\n',
    },
  ];
  for (const c of cases) {
    const home = tmpHome();
    try {
      if (c.config) writeFileSync(join(home, 'config.yml'), c.config, { mode: 0o600 });
      const r = await runCli(
        ['serve', '--addr', '127.0.0.1:0', ...c.args],
        { SVC_HOME: home, ...c.env },
        10_000,
      );
      assert.is.not(r.code, 0, `${c.where}: refused`);
      assert.not.equal(r.code, null, `${c.where}: exits by itself instead of serving`);
      const out = nonEmptyLines(r.stderr);
      assert.equal(out.length, 1, `${c.where}: one line on stderr, got:\n${r.stderr}`);
      assert.match(out[0]!, c.where);
      assert.match(out[0]!, /at least 16 characters/);
      assert.is(
        existsSync(join(home, 'access_key')),
        false,
        `${c.where}: no key was generated instead`,
      );
    } finally {
      removeHome(home);
    }
  }
});

test('rotation: editing access_key in config.yml and POST /api/restart switches keys', async () => {
  const home = tmpHome();
  const keyA = 'rotate-a-' + '1'.repeat(32);
  const keyB = 'rotate-b-' + '2'.repeat(32);
  const server = await startServer({
    home,
    config: `access_key: ${keyA}\n`,
    env: { SVC_ACCESS_KEY: undefined },
  });
  try {
    await onlyKeyWorks(server.port, keyA, [keyB], 'before the restart');
    writeFileSync(join(home, 'config.yml'), `access_key: ${keyB}\n`);
    const res = await http({
      port: server.port,
      method: 'POST',
      path: '/api/restart',
      headers: { 'Content-Type': 'application/json' },
      body: '{"reason":"rotate the key"}',
    });
    assert.is(res.status, 202);
    assert.equal(res.json(), { status: 'restarting' });
    await waitFor(
      async () =>
        (await remote(server.port, keyB)) === 200 && (await remote(server.port, keyA)) === 401,
      10_000,
      'key B to replace key A',
    );
    const status = await statusJson(home);
    assert.is(status.restarts, 1);
    assert.is(status.last_restart_error, null);
  } finally {
    await server.stop();
    removeHome(home);
  }
});

test('the access key from SVC_ACCESS_KEY is not in the environment of child processes', async () => {
  const key = 'env-secret-' + '9'.repeat(40);
  const server = await startServer({ env: { SVC_ACCESS_KEY: key } });
  try {
    assert.is(await remote(server.port, key), 200, 'the server uses the environment key');
    const status = await statusJson(server.home);
    const children = (status.processes as Array<{ role: string; pid: number }>).filter(
      (p) => p.role !== 'supervisor' && p.pid > 0,
    );
    assert.ok(
      children.some((p) => p.role === 'gateway'),
      'a gateway is running',
    );
    for (const child of children) {
      const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
      assert.ok(
        environ.includes(`SVC_HOME=${server.home}`),
        `${child.role}: read the environment of the right process`,
      );
      assert.not.ok(
        environ.some((e) => e.startsWith('SVC_ACCESS_KEY=')),
        `${child.role}: SVC_ACCESS_KEY is absent`,
      );
      assert.not.ok(
        environ.some((e) => e.includes(key)),
        `${child.role}: the key appears nowhere in the environment`,
      );
    }
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('a non-loopback bind prints the URL with the key; a loopback bind never prints the key', async () => {
  const open = await startServer({
    args: ['--addr', '0.0.0.0:0'],
    env: { SVC_ACCESS_KEY: undefined },
  });
  try {
    const key = open.key();
    const line = await waitFor(
      () => /^Open (http:\/\/\S+)$/m.exec(open.output()),
      5000,
      'the Open line',
    );
    const url = new URL(line[1]!);
    assert.is(url.port, String(open.port));
    assert.is(url.pathname, '/');
    assert.is(url.searchParams.get('access_key'), key);
    assert.is(
      await remote(open.port, key),
      200,
      'the printed key opens the server (sent to 127.0.0.1)',
    );
  } finally {
    await open.stop();
    removeHome(open.home);
  }

  const quiet = await startServer({ env: { SVC_ACCESS_KEY: undefined } });
  try {
    const key = quiet.key();
    assert.match(key, /^[0-9a-f]{64}$/);
    // Exercise the paths that log: a good key, a wrong key, and the status route.
    assert.is(await remote(quiet.port, key), 200);
    assert.is(await remote(quiet.port, key.slice(0, 63) + 'x'), 401);
    const status = await http({ port: quiet.port, path: '/api/status' });
    assert.is(status.status, 200);
    assert.not.ok(status.text.includes(key), 'the key is not in the status response');
    const cli = await runCli(['status', '--json'], { SVC_HOME: quiet.home });
    assert.not.ok(cli.stdout.includes(key), 'the key is not in svc status');
    assert.match(quiet.output(), /listening on http:\/\/127\.0\.0\.1:/);
    assert.not.match(quiet.output(), /^Open /m);
    await quiet.stop();
    assert.not.ok(
      quiet.output().includes(key),
      'the key appears nowhere in the output of a loopback server',
    );
  } finally {
    await quiet.stop();
    removeHome(quiet.home);
  }
});

test.run();
