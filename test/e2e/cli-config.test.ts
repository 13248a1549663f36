import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  http,
  removeHome,
  repoRoot,
  runCli,
  startServer,
  tmpHome,
  waitFor,
} from '../helpers/server.js';

/** stderr split into its non-empty lines. */
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

async function statusJson(home: string): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: home });
  assert.is(r.code, 0, `svc status --json failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** A request from the point of view of a non-local client (Host is not a local name). */
function remoteStatus(port: number, key: string) {
  return http({
    port,
    path: '/api/status',
    headers: { Host: 'evil.example', Authorization: `Bearer ${key}` },
  });
}

/** The pids of the gateway processes of `home` that are still running. */
function gatewaysOf(home: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (env.includes('SVC_ROLE=gateway') && env.includes(`SVC_HOME=${home}`)) found.push(+pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Runs `svc serve` that is expected to refuse to start; a short timeout so a wrong start cannot hang the file. */
function serveFails(args: string[], home: string, env: NodeJS.ProcessEnv = {}) {
  return runCli(['serve', ...args], { SVC_HOME: home, ...env }, 10_000);
}

test('an unknown flag exits non-zero with one line naming it', async () => {
  const home = tmpHome();
  try {
    const r = await serveFails(['--addr', '127.0.0.1:0', '--bogus'], home);
    assert.is.not(r.code, 0);
    assert.not.equal(
      r.code,
      null,
      'the process must exit by itself (it must not have started a server)',
    );
    assert.equal(lines(r.stderr).length, 1, `expected one stderr line, got:\n${r.stderr}`);
    assert.match(r.stderr, '--bogus');
    assert.is(existsSync(join(home, 'run', 'supervisor.sock')), false);
    // The launcher forked the gateway before the flag was read (cli/early-gateway.ts): it went too.
    await waitFor(
      () => gatewaysOf(home).length === 0,
      5_000,
      `no gateway of this home left running (${gatewaysOf(home).join(', ')})`,
    );
  } finally {
    removeHome(home);
  }
});

test('an unknown command exits non-zero with one line naming it', async () => {
  const home = tmpHome();
  try {
    const r = await runCli(['frobnicate'], { SVC_HOME: home }, 10_000);
    assert.is.not(r.code, 0);
    assert.not.equal(r.code, null);
    assert.equal(lines(r.stderr).length, 1, `expected one stderr line, got:\n${r.stderr}`);
    assert.match(r.stderr, 'frobnicate');
  } finally {
    removeHome(home);
  }
});

test('usage mistakes are one line, exit 2, and point at what was meant', async () => {
  const home = tmpHome();
  try {
    const cases: Array<[string[], RegExp]> = [
      [['serve', '--port', '9000'], /unknown option --port; did you mean --addr HOST:PORT/],
      [['status', '--jsn'], /did you mean --json\?/],
      [['servce'], /did you mean "serve" or "service"\?/],
      [['key'], /"svc key" needs an action: svc key show, svc key rotate/],
      [['service'], /"svc service" needs an action/],
      [['key', 'shw'], /did you mean "show"\?/],
      [['--bogus'], /unknown option --bogus/],
    ];
    for (const [args, said] of cases) {
      const r = await runCli(args, { SVC_HOME: home }, 10_000);
      assert.is(r.code, 2, `svc ${args.join(' ')}: exit code (stderr: ${r.stderr})`);
      assert.equal(lines(r.stderr).length, 1, `svc ${args.join(' ')}: one line, got:\n${r.stderr}`);
      assert.match(r.stderr, said, `svc ${args.join(' ')}`);
    }
  } finally {
    removeHome(home);
  }
});

test('negated flags are accepted (--no-start was refused as unknown)', async () => {
  const home = tmpHome();
  try {
    const r = await runCli(['service', 'install', '--no-start', '--print'], { SVC_HOME: home });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, 'svc');
  } finally {
    removeHome(home);
  }
});

test('a bare svc prints the short help and exits 0', async () => {
  const r = await runCli([], { SVC_HOME: '/nonexistent/svc-help-test' }, 10_000);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, 'Available Commands');
  assert.match(r.stdout, 'serve');
  assert.is(r.stderr, '');
});

test('bad --addr values exit non-zero with one line naming the value', async () => {
  const home = tmpHome();
  try {
    for (const [value, what] of [
      ['nope', /port/],
      [':99999', /port/],
      ['1.2.3:80', /host/],
    ] as const) {
      const r = await serveFails(['--addr', value], home);
      assert.is.not(r.code, 0, `--addr ${value} must be refused`);
      assert.not.equal(r.code, null, `--addr ${value}: the process must exit by itself`);
      const out = lines(r.stderr);
      assert.equal(out.length, 1, `--addr ${value}: expected one stderr line, got:\n${r.stderr}`);
      assert.ok(out[0]!.includes(value), `--addr ${value}: the line names the value: ${out[0]}`);
      assert.match(out[0]!, what);
    }
  } finally {
    removeHome(home);
  }
});

test('-addr (single dash) and --addr=VALUE both set the listen address', async () => {
  for (const args of [['-addr', '127.0.0.1:0'], ['--addr=127.0.0.1:0']]) {
    const server = await startServer({ args });
    try {
      const health = await http({ port: server.port, path: '/api/health' });
      assert.is(health.status, 200, `${args.join(' ')}: health`);
      const status = await statusJson(server.home);
      assert.is(status.addr, `127.0.0.1:${server.port}`, `${args.join(' ')}: status addr`);
    } finally {
      await server.stop();
      removeHome(server.home);
    }
  }
});

test('--addr :0 listens on every interface', async () => {
  const server = await startServer({ args: ['--addr', ':0'] });
  try {
    const status = await statusJson(server.home);
    assert.is(status.addr, `0.0.0.0:${server.port}`);
    const health = await http({ port: server.port, path: '/api/health' });
    assert.is(health.status, 200);
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('svc version prints the package.json version', async () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  const r = await runCli(['version']);
  assert.is(r.code, 0);
  assert.is(r.stdout.trim(), `svc ${pkg.version}`);
  assert.is(r.stderr, '');
});

test('--help works for svc and for each command', async () => {
  const cases: Array<[string[], string[]]> = [
    [['--help'], ['serve', 'status', 'version']],
    [
      ['serve', '--help'],
      ['--addr', '--access-key', '--cors', '--daemon', '--stop'],
    ],
    [['status', '--help'], ['--json']],
    [['version', '--help'], ['version']],
  ];
  for (const [args, mentions] of cases) {
    const r = await runCli(args, { SVC_HOME: '/nonexistent/svc-help-test' }, 10_000);
    assert.is(r.code, 0, `svc ${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, 'Usage', `svc ${args.join(' ')}`);
    for (const m of mentions)
      assert.ok(r.stdout.includes(m), `svc ${args.join(' ')} mentions ${m}`);
  }
});

const badConfigs: Array<{
  name: string;
  text: string;
  expect: (line: string, file: string) => void;
}> = [
  {
    name: 'invalid YAML',
    text: 'limits:\n  json_body_bytes: 10\ncors: [1, 2\n',
    expect: (out, file) => {
      assert.match(out, new RegExp(`${escapeRe(file)}:\\d+:\\d+`), 'line:col after the file name');
      assert.match(out, /YAML/);
    },
  },
  {
    name: 'an unknown key',
    text: 'acess_key: 0123456789abcdef0123\n',
    expect: (out, file) => {
      assert.ok(out.includes(file), 'names the file');
      assert.match(out, /unknown key/);
      assert.match(out, 'acess_key');
    },
  },
  {
    name: 'a wrong type',
    text: 'limits: {json_body_bytes: "big"}\n',
    expect: (out, file) => {
      assert.ok(out.includes(file), 'names the file');
      assert.match(out, 'limits.json_body_bytes');
      assert.match(out, /number/);
    },
  },
];

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

for (const bad of badConfigs) {
  test(`config.yml with ${bad.name} stops the start with a clear message and stays unchanged`, async () => {
    const home = tmpHome();
    const file = join(home, 'config.yml');
    writeFileSync(file, bad.text, { mode: 0o600 });
    const before = readFileSync(file);
    try {
      const r = await serveFails(['--addr', '127.0.0.1:0'], home);
      assert.is.not(r.code, 0);
      assert.not.equal(r.code, null, 'the process must exit by itself');
      const out = lines(r.stderr);
      assert.equal(out.length, 1, `expected one stderr line, got:\n${r.stderr}`);
      bad.expect(out[0]!, file);
      assert.ok(readFileSync(file).equals(before), 'config.yml is byte-for-byte unchanged');
      const status = await runCli(['status'], { SVC_HOME: home });
      assert.is.not(status.code, 0, 'nothing is running');
    } finally {
      removeHome(home);
    }
  });
}

test('serve.env supplies variables the environment lacks but never overrides it', async () => {
  const home = tmpHome();
  const fromFile = 'f'.repeat(40);
  const fromEnv = 'e'.repeat(40);
  writeFileSync(join(home, 'serve.env'), `# keys for svc\nSVC_ACCESS_KEY=${fromFile}\n`, {
    mode: 0o600,
  });
  try {
    let server = await startServer({ home, env: { SVC_ACCESS_KEY: undefined } });
    try {
      assert.is(
        (await remoteStatus(server.port, fromFile)).status,
        200,
        'the serve.env key is used',
      );
      assert.is((await remoteStatus(server.port, fromEnv)).status, 401);
      assert.is(
        existsSync(join(home, 'access_key')),
        false,
        'no key was generated: serve.env supplied one',
      );
    } finally {
      await server.stop();
    }
    server = await startServer({ home, env: { SVC_ACCESS_KEY: fromEnv } });
    try {
      assert.is(
        (await remoteStatus(server.port, fromEnv)).status,
        200,
        'the real environment wins',
      );
      assert.is(
        (await remoteStatus(server.port, fromFile)).status,
        401,
        'serve.env did not override it',
      );
    } finally {
      await server.stop();
    }
  } finally {
    removeHome(home);
  }
});

test.run();
