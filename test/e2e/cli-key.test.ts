import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { http, removeHome, runCli, startServer, tmpHome } from '../helpers/server.js';

/*
 * `svc key show | rotate` through the real CLI. Whether a key works is judged the way a remote
 * client meets it: a forwarding header withdraws the loopback exemption (docs/security.md), so the
 * request below is one the key decides.
 */

function asRemote(port: number, key: string) {
  return http({
    port,
    path: '/api/status',
    headers: { 'X-Forwarded-For': '203.0.113.9', Authorization: `Bearer ${key}` },
  });
}

test("show prints the running server's key and the address that signs the Web UI in", async () => {
  const server = await startServer({ env: { SVC_ACCESS_KEY: undefined } });
  try {
    const r = await runCli(['key', 'show'], { SVC_HOME: server.home, SVC_ACCESS_KEY: '' });
    assert.is(r.code, 0, r.stderr);
    const key = server.key();
    assert.match(r.stdout, `Access key (from ${join(server.home, 'access_key')}): ${key}`);
    assert.match(r.stdout, `Sign-in address: http://127.0.0.1:${server.port}/?access_key=${key}`);
    const json = JSON.parse(
      (await runCli(['key', 'show', '--json'], { SVC_HOME: server.home, SVC_ACCESS_KEY: '' }))
        .stdout,
    );
    assert.equal(json, {
      key,
      source: 'file',
      url: `http://127.0.0.1:${server.port}/?access_key=${key}`,
      running: true,
    });
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('rotate: a new key file, a restart through the drain; the old key is refused, the new one accepted', async () => {
  const server = await startServer({ env: { SVC_ACCESS_KEY: undefined } });
  try {
    const old = server.key();
    assert.is((await asRemote(server.port, old)).status, 200, 'the old key works before');
    assert.is(
      (await asRemote(server.port, 'f'.repeat(64))).status,
      401,
      'a wrong key is refused (so the key is what decides)',
    );
    const r = await runCli(
      ['key', 'rotate', '--json'],
      { SVC_HOME: server.home, SVC_ACCESS_KEY: '' },
      120_000,
    );
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const fresh = readFileSync(join(server.home, 'access_key'), 'utf8').trim();
    assert.match(fresh, /^[0-9a-f]{64}$/);
    assert.is.not(fresh, old);
    assert.is(out.key, fresh);
    assert.is(out.running, true);
    assert.is(statSync(join(server.home, 'access_key')).mode & 0o777, 0o600);
    const old401 = await asRemote(server.port, old);
    assert.is(old401.status, 401, 'the old key is refused after the rotation');
    assert.is(old401.json().error.code, 'unauthorized');
    assert.is((await asRemote(server.port, fresh)).status, 200, 'the new key is accepted');
    const status = JSON.parse(
      (await runCli(['status', '--json'], { SVC_HOME: server.home })).stdout,
    );
    assert.is(status.restarts, 1, 'one restart, through the drain');
    assert.is(
      status.processes.find((p: { role: string }) => p.role === 'supervisor').pid,
      server.proc.pid,
      'the supervisor stayed',
    );
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('rotate refuses when the key comes from SVC_ACCESS_KEY, and changes nothing', async () => {
  const envKey = 'e'.repeat(40);
  const server = await startServer({ env: { SVC_ACCESS_KEY: envKey } });
  try {
    const r = await runCli(['key', 'rotate'], { SVC_HOME: server.home, SVC_ACCESS_KEY: '' });
    assert.is(r.code, 1);
    assert.match(r.stderr, /the key comes from the SVC_ACCESS_KEY environment variable/);
    assert.not.match(r.stderr + r.stdout, envKey);
    assert.is((await asRemote(server.port, envKey)).status, 200);
    const status = JSON.parse(
      (await runCli(['status', '--json'], { SVC_HOME: server.home })).stdout,
    );
    assert.is(status.restarts, 0, 'no restart');
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('with no server running: show reads the key file, rotate replaces it for the next start', async () => {
  const home = tmpHome();
  try {
    const env = { SVC_HOME: home, SVC_ACCESS_KEY: '' };
    const first = await runCli(['key', 'show', '--json'], env);
    assert.is(first.code, 0, first.stderr);
    const shown = JSON.parse(first.stdout);
    assert.is(shown.running, false);
    assert.is(
      shown.key,
      readFileSync(join(home, 'access_key'), 'utf8').trim(),
      'the key svc serve will use',
    );
    assert.is(shown.url, `http://127.0.0.1:8088/?access_key=${shown.key}`);
    const rotated = await runCli(['key', 'rotate'], env);
    assert.is(rotated.code, 0, rotated.stderr);
    assert.match(rotated.stdout, 'svc uses it when it starts');
    const now = readFileSync(join(home, 'access_key'), 'utf8').trim();
    assert.is.not(now, shown.key);
    assert.match(rotated.stdout, now);
    const bad = await runCli(['key', 'frob'], env);
    assert.is(bad.code, 2);
    assert.match(bad.stderr, /unknown key action "frob"/);
  } finally {
    removeHome(home);
  }
});

test.run();
