import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDb } from '../../src/shared/store/db.js';
import { startFakeProvider } from '../fixtures/fake-provider.js';
import { startReleaseServer, type ReleaseServer } from '../fixtures/release-server.js';
import { api } from '../helpers/api.js';
import { removeHome, repoRoot, runCli, startServer, tmpHome, waitFor } from '../helpers/server.js';

/*
 * Two upgrade paths upgrade-e2e does not take, kept cheap (no release build): a development
 * build is never offered an update, and under a service manager (a stand-in for systemd) an
 * upgrade drains, exits with code 75, and the manager's next start runs the new version. The new
 * release here is a small archive whose `svc serve` only answers /api/version and /api/health:
 * what matters is that the launcher the manager runs starts the active version.
 */

const current = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;
const [maj, min, pat] = current.split('.').map(Number) as [number, number, number];
const next = `${maj}.${min}.${pat + 1}`;
const target = `${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}`;
const nextName = `svc-${next}-${target}.tar.gz`;

let host: ReleaseServer;
let out: string;

/** The new release's `svc serve`: answers as version `next` on the address it is given. */
const tinyServe = `import { createServer } from 'node:http';
const argv = process.argv;
const addr = argv[argv.indexOf('--addr') + 1];
const i = addr.lastIndexOf(':');
createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(req.url === '/api/health' ? { status: 'ok' } : { version: '${next}' }));
}).listen(Number(addr.slice(i + 1)), addr.slice(0, i));
`;

test.before(async () => {
  host = await startReleaseServer();
  out = mkdtempSync(join(tmpdir(), 'svc-upgrade-manager-'));
  const work = mkdtempSync(join(tmpdir(), 'svc-upgrade-tiny-'));
  const stem = `svc-${next}-${target}`;
  mkdirSync(join(work, stem, 'dist', 'src', 'cli'), { recursive: true });
  writeFileSync(
    join(work, stem, 'package.json'),
    JSON.stringify({ name: 'svc', version: next, type: 'module' }),
  );
  writeFileSync(join(work, stem, 'dist', 'src', 'cli', 'main.js'), tinyServe);
  execFileSync('tar', ['-czf', join(out, nextName), '-C', work, stem]);
  rmSync(work, { recursive: true, force: true });
  const sum = execFileSync('sha256sum', [join(out, nextName)])
    .toString()
    .split(' ')[0]!;
  host.latest = {
    tag: `v${next}`,
    body: 'A newer one.',
    assets: [
      { name: nextName, file: join(out, nextName) },
      { name: 'checksums.txt', text: `${sum}  ${nextName}\n` },
    ],
  };
});

test.after(async () => {
  await host?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

function env(home: string): NodeJS.ProcessEnv {
  return {
    SVC_HOME: home,
    SVC_RELEASES_URL: host.base,
    NODE_EXTRA_CA_CERTS: host.caFile,
    SVC_UPGRADE_CHECK: '1',
    SVC_ACCESS_KEY: '',
  };
}

interface Version {
  version: string;
  dev_build: boolean;
  latest: string | null;
  update_available: boolean;
  checked_at: string | null;
}
const versionAt = async (port: number): Promise<Version> =>
  (await api(port, 'GET', '/api/version')).body as Version;

/** versions/ as it is: the names and links in it. */
function versionsState(home: string): string {
  return readdirSync(join(home, 'versions'))
    .sort()
    .map(
      (n) =>
        `${n}${n === 'current' || n === 'previous' ? `->${realpathSync(join(home, 'versions', n))}` : ''}`,
    )
    .join(',');
}

/**
 * A development build of this install: its code, a version with a suffix. Made active through
 * versions/current of `home`, as an installed version is, so the launcher runs it.
 */
function devBuild(home: string, version: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-upgrade-dev-'));
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as object;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
  // The code is copied (svc reads its version beside its own files), timestamps kept so the
  // launcher picks the bundle or tsc's output as it does in this install.
  for (const part of ['bin', 'dist/bundle', 'dist/src', 'dist/.tsbuildinfo'])
    if (existsSync(join(repoRoot, part)))
      cpSync(join(repoRoot, part), join(dir, part), { recursive: true, preserveTimestamps: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  symlinkSync(join(repoRoot, 'web'), join(dir, 'web'));
  mkdirSync(join(home, 'versions'));
  symlinkSync(dir, join(home, 'versions', 'current'));
  return dir;
}

test('a development build is never offered an update: update_available false, POST /api/version/upgrade 409, svc upgrade refuses', async () => {
  const dev = `${current}-dev.3`;
  const home = tmpHome('svc-upgrade-');
  const dir = devBuild(home, dev);
  const server = await startServer({ home, env: env(home) });
  try {
    const v = await waitFor(
      async () => {
        const got = await versionAt(server.port);
        return got.checked_at ? got : undefined;
      },
      30_000,
      'the first version check',
    );
    assert.equal(
      [v.version, v.dev_build, v.latest, v.update_available],
      [dev, true, next, false],
      `a newer release (${next}) is there, and not offered`,
    );
    const post = await api(server.port, 'POST', '/api/version/upgrade', {});
    assert.is(post.status, 409, JSON.stringify(post.body));
    assert.is(post.body.error.code, 'conflict');
    assert.is(
      post.body.error.message,
      `svc ${dev} is a development build, which is never upgraded; install a release instead.`,
    );
    const cli = await runCli(['upgrade', '--yes'], env(home), 60_000);
    assert.is(cli.code, 1, cli.stdout + cli.stderr);
    assert.match(cli.stderr, `svc ${dev} is a development build, which is never upgraded`);
    assert.is(versionsState(home), `current->${realpathSync(dir)}`, 'nothing installed');
    assert.is((await versionAt(server.port)).version, dev, 'the same build still serves');
  } finally {
    await server.stop();
    removeHome(home);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A port nothing listens on now (the manager starts svc again on the same one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

test('under systemd, POST /api/version/upgrade drains (a turn in flight finishes), exits with code 75, and the manager starts the new version', async () => {
  const key = 'sk-fake-upgrade-0123456789';
  const fake = await startFakeProvider({ apiKey: key });
  const manager = mkdtempSync(join(tmpdir(), 'svc-upgrade-systemd-'));
  // A link named systemd: svc tells a service manager by INVOCATION_ID and its parent's name.
  symlinkSync(process.execPath, join(manager, 'systemd'));
  const home = tmpHome('svc-upgrade-');
  const port = await freePort();
  const server = await startServer({
    home,
    env: env(home),
    args: ['--addr', `127.0.0.1:${port}`],
    wrap: [join(manager, 'systemd'), join(repoRoot, 'dist', 'test', 'fixtures', 'fake-systemd.js')],
  });
  const said = () => `\nprinted:\n${server.output().slice(-3000)}`;
  const EXITED = /fake-systemd: the service exited with code (\S+)/;
  let release: () => void = () => undefined;
  try {
    const model = await api(port, 'POST', '/api/config/models', {
      id: 'oa',
      provider: 'custom',
      protocol: 'openai',
      base_url: fake.baseUrl('openai'),
      model: 'fake',
      api_key: key,
    });
    assert.is(model.status, 201, JSON.stringify(model.body));
    const slot = await api(port, 'PUT', '/api/config/models/default', { model_id: 'oa' });
    assert.is(slot.status, 200, JSON.stringify(slot.body));
    const session = await api(port, 'POST', '/api/sessions', { title: 'in flight' });
    assert.is(session.status, 201);
    const id = session.body.id as string;
    // A turn the model holds open until the test lets it go.
    fake.enqueue({
      parts: [
        { text: 'begun ' },
        { gate: new Promise<void>((r) => (release = r)) },
        { text: 'and finished' },
      ],
    });
    const turn = await api(port, 'POST', `/api/chat/${id}/turn?wait=false`, {
      message: 'take your time',
      attachments: [],
    });
    assert.is(turn.status, 202, JSON.stringify(turn.body));
    await waitFor(() => fake.requests.length > 0, 20_000, 'the turn to reach the model');

    const started = await api(port, 'POST', '/api/version/upgrade', {});
    assert.is(started.status, 202, JSON.stringify(started.body));
    await waitFor(
      async () => (await api(port, 'GET', '/api/status')).body?.state === 'draining',
      30_000,
      `svc to drain for the new version${said()}`,
    );
    assert.not.match(server.output(), EXITED, 'svc waits for the turn in flight');
    release();
    const code = await waitFor(
      () => EXITED.exec(server.output())?.[1],
      30_000,
      `svc to exit${said()}`,
    );
    assert.is(code, '75', `svc exits with 75 for the manager to start it again${said()}`);
    await waitFor(
      async () => (await versionAt(port)).version === next,
      30_000,
      `the manager to start the new version on the same address${said()}`,
    );
    assert.is(
      realpathSync(join(home, 'versions', 'current')),
      join(realpathSync(home), 'versions', next),
    );
    // The turn finished before svc exited: its whole reply is stored, not an interrupted half.
    const db = openDb(join(home, 'svc.db'), { readonly: true });
    const last = db
      .prepare<[string], { role: string; content: string }>(
        'SELECT role, content FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 1',
      )
      .get(id);
    db.close();
    assert.equal(
      [last?.role, (JSON.parse(last?.content ?? '{}') as { text?: string }).text],
      ['assistant', 'begun and finished'],
    );
  } finally {
    release();
    await server.stop();
    await runCli(['serve', '--stop'], { SVC_HOME: home });
    await fake.close();
    removeHome(home);
    rmSync(manager, { recursive: true, force: true });
  }
});

test.run();
