import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import {
  http,
  removeHome,
  repoRoot,
  runCli,
  SLACK,
  startServer,
  tmpHome,
} from '../helpers/server.js';
import { startReleaseServer, type ReleaseServer } from '../fixtures/release-server.js';

/*
 * The whole upgrade loop against a local HTTPS release host (a throwaway CA trusted through
 * NODE_EXTRA_CA_CERTS): a real archive made by the release build with a bumped version, the
 * automatic check behind GET /api/version, `svc upgrade` (--check, a full upgrade of a running
 * svc, --rollback, refusals that change nothing), the automatic rollback of a release that cannot
 * start, and POST /api/version/upgrade.
 */

const current = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;
const [maj, min, pat] = current.split('.').map(Number) as [number, number, number];
const next = `${maj}.${min}.${pat + 1}`;
const broken = `${maj}.${min}.${pat + 2}`;
const target = `${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}`;
const nextName = `svc-${next}-${target}.tar.gz`;
const brokenName = `svc-${broken}-${target}.tar.gz`;

let host: ReleaseServer;
let out: string;
let nextSum: string;
let brokenSum: string;

function sh(cmd: string, args: string[], cwd?: string): string {
  return execFileSync(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  }).toString();
}

test.before(async () => {
  host = await startReleaseServer();
  out = mkdtempSync(join(tmpdir(), 'svc-upgrade-release-'));
  // the release build (`npm run release` without its `npm run build`: the tree under test is built)
  const built = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const p = spawn(
      process.execPath,
      [join(repoRoot, 'dist', 'src', 'release', 'build.js'), '--version', next, '--out', out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let text = '';
    p.stdout.on('data', (d: Buffer) => (text += d));
    p.stderr.on('data', (d: Buffer) => (text += d));
    p.on('close', (code) => resolve({ code, text }));
  });
  assert.is(built.code, 0, built.text);
  const sums = readFileSync(join(out, 'checksums.txt'), 'utf8');
  nextSum = /^([0-9a-f]{64}) {2}(\S+)$/m.exec(sums)![1]!;
  assert.match(sums, `${nextSum}  ${nextName}\n`);
  // a release that cannot start: a small archive of the right shape whose `svc serve` throws at once
  const work = mkdtempSync(join(tmpdir(), 'svc-upgrade-broken-'));
  const stem = `svc-${broken}-${target}`;
  mkdirSync(join(work, stem, 'dist', 'src', 'cli'), { recursive: true });
  writeFileSync(
    join(work, stem, 'package.json'),
    JSON.stringify({ name: 'svc', version: broken, type: 'module' }),
  );
  writeFileSync(
    join(work, stem, 'dist', 'src', 'cli', 'main.js'),
    "throw new Error('this release cannot start');\n",
  );
  sh('tar', ['-czf', join(out, brokenName), '-C', work, stem]);
  rmSync(work, { recursive: true, force: true });
  brokenSum = sh('sha256sum', [join(out, brokenName)]).split(' ')[0]!;
});

test.after(async () => {
  await host.close();
  rmSync(out, { recursive: true, force: true });
});

const notes = 'Faster turns.\n\n- the badge shows updates\n- rollbacks';
const checksums = (lines: [string, string][]) =>
  lines.map(([sum, name]) => `${sum}  ${name}\n`).join('');

function goodRelease(): void {
  host.latest = {
    tag: `v${next}`,
    body: notes,
    assets: [
      { name: nextName, file: join(out, nextName) },
      { name: 'checksums.txt', text: checksums([[nextSum, nextName]]) },
    ],
  };
}

function env(home: string): NodeJS.ProcessEnv {
  return {
    SVC_HOME: home,
    SVC_RELEASES_URL: host.base,
    NODE_EXTRA_CA_CERTS: host.caFile,
    SVC_UPGRADE_CHECK: '1',
    SVC_ACCESS_KEY: '',
  };
}

const at = (home: string) => ({ home, env: env(home) });

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms * SLACK;
  while (Date.now() < end) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const versionAt = (port: number) =>
  until(
    'GET /api/version',
    async () =>
      (await api(port, 'GET', '/api/version')).body as {
        version: string;
        latest: string | null;
        update_available: boolean;
        checked_at: string | null;
        notes: string[];
        release_url: string | null;
      },
  );

/** versions/ as it is: nothing there, or the names and links in it. */
function versionsState(home: string): string {
  const dir = join(home, 'versions');
  if (!existsSync(dir)) return 'none';
  return readdirSync(dir)
    .sort()
    .map(
      (n) => `${n}${n === 'current' || n === 'previous' ? `->${realpathSync(join(dir, n))}` : ''}`,
    )
    .join(',');
}

let t0 = Date.now();
test.before.each(() => {
  t0 = Date.now();
});
test.after.each(() => {
  console.log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
});

test('the release archive holds the built code, the Web UI and production dependencies only', () => {
  const stem = `svc-${next}-${target}`;
  const members = sh('tar', ['-tzf', join(out, nextName)])
    .split('\n')
    .filter((m) => m !== '');
  assert.ok(
    members.every((m) => m === `${stem}/` || m.startsWith(`${stem}/`)),
    'one top folder',
  );
  for (const needed of [
    'package.json',
    'bin/svc.js',
    'dist/src/cli/main.js',
    'dist/bundle/cli/main.js',
    'dist/bundle/gateway/main.js',
    'web/dist/index.html',
    'node_modules/better-sqlite3/package.json',
    'node_modules/zod/package.json',
  ]) {
    assert.ok(members.includes(`${stem}/${needed}`), needed);
  }
  const pkg = JSON.parse(sh('tar', ['-xzOf', join(out, nextName), `${stem}/package.json`]));
  assert.is(pkg.version, next);
  assert.is(pkg.devDependencies, undefined);
  assert.equal(
    members.filter(
      (m) =>
        /^[^/]+\/(src|test|bench|dist\/test|dist\/bench)\//.test(m) ||
        (m.startsWith(`${stem}/dist/`) && m.endsWith('.map')) ||
        /\/node_modules\/(typescript|esbuild|uvu|axe-core|@biomejs)\//.test(m),
    ),
    [],
    'no sources, tests, our source maps or dev dependencies',
  );
  // The browser worker drives Chromium through playwright-core: a release must carry it.
  assert.ok(
    members.some((m) => m.startsWith(`${stem}/node_modules/playwright-core/`)),
    'playwright-core, which the browser worker needs, is in the archive',
  );
  const natives = members.filter((m) => m.endsWith('.node'));
  assert.ok(
    natives.some((m) => m.includes('better_sqlite3.node')),
    'the SQLite binding is in',
  );
  assert.ok(
    natives.every(
      (m) => !/_(darwin|win32)_|prebuilds\/(darwin|win32)/.test(m) || process.platform !== 'linux',
    ),
    `no other platform's binaries: ${natives.join(', ')}`,
  );
});

test('the automatic check fills GET /api/version; svc upgrade --check changes nothing; a remote POST without the key is 401', async () => {
  goodRelease();
  const server = await startServer(at(tmpHome('svc-upgrade-')));
  try {
    const v = await until('the first check', async () => {
      const got = await versionAt(server.port);
      return got.checked_at ? got : undefined;
    });
    assert.is(v.version, current);
    assert.is(v.latest, next);
    assert.is(v.update_available, true);
    assert.equal(v.notes, ['Faster turns.', '', '- the badge shows updates', '- rollbacks']);
    assert.is(v.release_url, `${host.base}/view/v${next}`);
    const check = await runCli(['upgrade', '--check'], env(server.home));
    assert.is(check.code, 0, check.stderr);
    assert.match(check.stdout, `current: ${current}`);
    assert.match(check.stdout, `latest:  ${next}`);
    assert.match(check.stdout, 'update available');
    assert.is(versionsState(server.home), 'none');
    const remote = await http({
      port: server.port,
      method: 'POST',
      path: '/api/version/upgrade',
      headers: { 'X-Forwarded-For': '203.0.113.9', 'Content-Type': 'application/json' },
      body: '{}',
    });
    assert.is(remote.status, 401);
    assert.is(versionsState(server.home), 'none');
    const offHome = tmpHome('svc-upgrade-');
    const off = await startServer({
      home: offHome,
      env: { ...env(offHome), SVC_UPGRADE_CHECK: undefined },
      config: 'upgrade:\n  check: false\n',
    });
    try {
      const none = await versionAt(off.port);
      assert.is(none.checked_at, null, 'upgrade.check: false makes no check');
      assert.is(none.latest, null);
    } finally {
      await off.stop();
      removeHome(off.home);
    }
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('a mismatch, a missing entry, an http:// URL, an oversized and a truncated archive are each refused with nothing changed', async () => {
  const home = tmpHome('svc-upgrade-');
  const cases: {
    name: string;
    assets: import('../fixtures/release-server.js').Asset[];
    says: string[];
  }[] = [
    {
      name: 'mismatch',
      assets: [
        { name: nextName, file: join(out, nextName) },
        { name: 'checksums.txt', text: checksums([['0'.repeat(64), nextName]]) },
      ],
      says: [`expected: ${'0'.repeat(64)}`, `downloaded: ${nextSum}`],
    },
    {
      name: 'missing entry',
      assets: [
        { name: nextName, file: join(out, nextName) },
        { name: 'checksums.txt', text: checksums([[nextSum, 'svc-other.tar.gz']]) },
      ],
      says: ['has no entry for', `downloaded: ${nextSum}`],
    },
    {
      name: 'http URL',
      assets: [
        { name: nextName, file: join(out, nextName), url: `http://127.0.0.1:1/${nextName}` },
        { name: 'checksums.txt', text: checksums([[nextSum, nextName]]) },
      ],
      says: ['must be an https:// URL'],
    },
    {
      name: 'oversized',
      assets: [
        { name: nextName, file: join(out, nextName), size: 600 * 1024 * 1024 },
        { name: 'checksums.txt', text: checksums([[nextSum, nextName]]) },
      ],
      says: ['600.0 MiB, over the 512.0 MiB limit'],
    },
    {
      name: 'truncated',
      assets: [
        { name: nextName, file: join(out, nextName), truncateAt: 100_000 },
        { name: 'checksums.txt', text: checksums([[nextSum, nextName]]) },
      ],
      says: ['cut short'],
    },
  ];
  try {
    for (const c of cases) {
      host.latest = { tag: `v${next}`, body: notes, assets: c.assets };
      const r = await runCli(['upgrade', '--yes'], env(home), 60_000);
      assert.is(r.code, 1, `${c.name}: ${r.stdout}${r.stderr}`);
      for (const s of c.says) assert.ok(r.stderr.includes(s), `${c.name}: "${s}" in ${r.stderr}`);
      assert.is(versionsState(home), '', `${c.name}: nothing installed, nothing left behind`);
    }
    const plain = await runCli(['upgrade', '--check'], {
      ...env(home),
      SVC_RELEASES_URL: host.base.replace('https:', 'http:'),
    });
    assert.is(plain.code, 1);
    assert.match(plain.stderr, 'must be an https:// URL');
    assert.is(
      (await runCli(['upgrade', '--check', '--rollback'], env(home))).code,
      2,
      'bad usage is exit code 2',
    );
  } finally {
    removeHome(home);
  }
});

test('a running svc is upgraded (sessions intact), rolled back, and upgraded again through POST /api/version/upgrade', async () => {
  goodRelease();
  const server = await startServer(at(tmpHome('svc-upgrade-')));
  const home = server.home;
  try {
    const session = await api(server.port, 'POST', '/api/sessions', {
      title: 'kept across versions',
    });
    assert.is(session.status, 201);
    // svc's own lines (the relaunched processes print to the same pipe) say why, if it fails
    const said = () => `\nsvc printed:\n${server.output().slice(-3000)}`;
    const r = await runCli(['upgrade', '--yes'], env(home), 120_000);
    assert.is(r.code, 0, r.stdout + r.stderr + said());
    assert.match(r.stdout, `svc ${next} is running`);
    assert.is(
      (await versionAt(server.port)).version,
      next,
      'the same address answers as the new version',
    );
    assert.is(
      (await api(server.port, 'GET', `/api/sessions/${session.body.id}`)).status,
      200,
      'the session is intact',
    );
    assert.is(
      realpathSync(join(home, 'versions', 'current')),
      join(realpathSync(home), 'versions', next),
    );
    assert.is(realpathSync(join(home, 'versions', 'previous')), realpathSync(repoRoot));

    const back = await runCli(['upgrade', '--rollback'], env(home), 120_000);
    assert.is(back.code, 0, back.stdout + back.stderr + said());
    assert.is(
      (await versionAt(server.port)).version,
      current,
      '--rollback runs the previous version',
    );
    assert.is(realpathSync(join(home, 'versions', 'current')), realpathSync(repoRoot));

    const started = await api(server.port, 'POST', '/api/version/upgrade', {});
    assert.is(started.status, 202, JSON.stringify(started.body));
    const again = await api(server.port, 'POST', '/api/version/upgrade', {});
    assert.is(again.status, 409, 'one upgrade at a time');
    assert.match(again.body.error.message, 'already running');
    await until(
      "the new version through the Web UI's route",
      async () => ((await versionAt(server.port)).version === next ? true : undefined),
      90_000,
    );
    assert.is((await api(server.port, 'GET', `/api/sessions/${session.body.id}`)).status, 200);
  } finally {
    await runCli(['serve', '--stop'], { SVC_HOME: home });
    await server.stop();
    removeHome(home);
  }
});

test('a release that cannot start is rolled back by itself, and the old version serves again', async () => {
  host.latest = {
    tag: `v${broken}`,
    body: 'broken',
    assets: [
      { name: brokenName, file: join(out, brokenName) },
      { name: 'checksums.txt', text: checksums([[brokenSum, brokenName]]) },
    ],
  };
  const server = await startServer(at(tmpHome('svc-upgrade-')));
  const home = server.home;
  try {
    const r = await runCli(['upgrade', '--yes'], env(home), 120_000);
    assert.is(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, `svc ${broken} did not answer /api/health`);
    assert.ok(r.stderr.includes(`rolled back by itself: svc ${current} runs again`), r.stderr);
    assert.is((await versionAt(server.port)).version, current);
    assert.is(realpathSync(join(home, 'versions', 'current')), realpathSync(repoRoot));
  } finally {
    await runCli(['serve', '--stop'], { SVC_HOME: home });
    await server.stop();
    removeHome(home);
  }
});

test.run();
