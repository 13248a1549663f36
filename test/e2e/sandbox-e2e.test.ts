import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { runCli } from '../helpers/server.js';
import { connectWs, startRig, status, type TurnRig, type WsClient } from '../helpers/turns.js';

/**
 * The sandbox through the real `svc serve` (bubblewrap on this machine): what the status surfaces
 * say, the session's network setting in the API, scripts the agent writes and runs that try to
 * kill the supervisor and rewrite svc's rules, no capabilities and a fresh /dev, the hidden key
 * folders and Docker sockets, and stepping outside through the permission engine.
 */

let rig: TurnRig;
let root = '';
/** svc's HOME (so its commands' too): a throwaway one, holding the secrets planted below. */
let home = '';
const servers: Array<Server | NetServer> = [];
const isRoot = process.getuid?.() === 0;
const AWS_SECRET = `aws-secret-${randomBytes(8).toString('hex')}`;

/** A listening unix socket standing in for Docker's; counts who connects. */
interface FakeSocket {
  path: string;
  connections: number;
  close: () => void;
}
const sockets: FakeSocket[] = [];
async function fakeSocket(path: string): Promise<FakeSocket> {
  mkdirSync(join(path, '..'), { recursive: true });
  const s: FakeSocket = { path, connections: 0, close: () => srv.close() };
  const srv = createNetServer((c) => {
    s.connections++;
    c.on('error', () => undefined); // a prober that hangs up at once
    c.end('{"docker":"pong"}');
  });
  await new Promise<void>((r) => srv.listen(path, r));
  sockets.push(s);
  return s;
}
/** Whether `path` (as this process sees it) is a socket something listens on. */
const reachable = (path: string) =>
  new Promise<boolean>((resolve) => {
    const c = connect(path);
    c.on('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });

/** Docker Desktop's socket (under ~/.docker), one at a path of the user's `sandbox.hide` rule, and Docker's own. */
let desktopSock: FakeSocket;
let ruleSock: FakeSocket;
let runSock: FakeSocket | undefined;
/** svc's runtime folder (XDG_RUNTIME_DIR), where a session's agent and bus sockets live. */
let runtime = '';

test.before(async () => {
  // Outside /tmp: inside the sandbox /tmp is a private folder, and the walls are under test here.
  root = mkdtempSync('/var/tmp/svc-sandbox-e2e-');
  home = join(root, 'home');
  runtime = join(root, 'run-user');
  mkdirSync(runtime, { mode: 0o700 });
  mkdirSync(join(home, '.aws'), { recursive: true });
  writeFileSync(
    join(home, '.aws', 'credentials'),
    `[default]\naws_secret_access_key = ${AWS_SECRET}\n`,
  );
  desktopSock = await fakeSocket(join(home, '.docker', 'run', 'docker.sock'));
  ruleSock = await fakeSocket(join(root, 'podman', 'podman.sock'));
  // As root, svc runs in a mount namespace of its own where /run/docker.sock (so /var/run's too) is
  // a socket of this test: Docker's real path, planted without touching this machine's /run.
  let wrap: string[] | undefined;
  if (isRoot) {
    runSock = await fakeSocket(join(root, 'run-docker.sock'));
    wrap = [
      'unshare',
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      'mount -t tmpfs -o mode=0755 svc-test-run /run && : > /run/docker.sock && mount --bind "$0" /run/docker.sock && exec "$@"',
      runSock.path,
    ];
  }
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    env: {
      HOME: home,
      XDG_RUNTIME_DIR: runtime,
      SSH_AUTH_SOCK: join(runtime, 'agent.sock'),
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(runtime, 'bus')}`,
      DISPLAY: ':42',
      WAYLAND_DISPLAY: 'wayland-42',
    },
    ...(wrap ? { wrap } : {}),
  });
});

test.after(async () => {
  await rig?.stop();
  for (const s of servers) s.close();
  for (const s of sockets) s.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

interface Chat {
  id: string;
  work: string;
  ws: WsClient;
}

let chats = 0;
async function newChat(settings: Record<string, unknown>): Promise<Chat> {
  const work = join(root, `work${++chats}`);
  mkdirSync(work);
  const res = await api(rig.port, 'POST', '/api/sessions', { working_dir: work, ...settings });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.id, work, ws: await connectWs(rig.port, [`session:${res.body.id}`]) };
}

let nextCall = 0;
function enqueue(steps: Array<Array<{ name: string; args: Record<string, unknown> }>>): string[] {
  const ids: string[] = [];
  const replies: FakeReply[] = steps.map((calls) => ({
    parts: calls.map((c) => {
      const id = `sbx${++nextCall}`;
      ids.push(id);
      return { toolCall: { id, name: c.name, arguments: [JSON.stringify(c.args)] } };
    }),
    stop: 'tool_use',
  }));
  rig.fake.enqueue(...replies, textReply('done'));
  return ids;
}

async function startTurn(chat: Chat): Promise<string> {
  const res = await api(rig.port, 'POST', `/api/chat/${chat.id}/turn?wait=false`, {
    message: 'go',
    attachments: [],
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  return res.body.turn_id as string;
}

const END = ['turn.completed', 'turn.failed', 'turn.interrupted'];
const endOf = (chat: Chat, turnId: string) =>
  chat.ws.waitEvent(
    (e) => e.data?.turn_id === turnId && END.includes(e.type),
    `the end of ${turnId}`,
    30_000,
  );
const resultOf = (chat: Chat, callId: string) =>
  chat.ws.waitEvent(
    (e) => e.type === 'turn.tool_result' && e.data.call_id === callId,
    `the result of ${callId}`,
    30_000,
  );
const firstOf = (chat: Chat, callId: string) =>
  chat.ws.waitEvent(
    (e) =>
      e.data?.call_id === callId &&
      (e.type === 'approval.requested' || e.type === 'turn.tool_result'),
    `an approval or result for ${callId}`,
    30_000,
  );

test('health, /api/status and `svc status` say the sandbox is on', async () => {
  const health = await api(rig.port, 'GET', '/api/health');
  assert.is(health.body.sandbox.state, 'on');
  assert.match(health.body.sandbox.message, /^sandbox on \(bubblewrap \d/);
  const st = await status(rig.port);
  assert.is(st.sandbox.state, 'on');
  const cli = await runCli(['status'], { SVC_HOME: rig.server.home });
  assert.is(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /^sandbox on \(bubblewrap \d/m);
});

test('the network is a session setting: set, read back, checked with a message a person can act on', async () => {
  const chat = await newChat({ network: 'off' });
  try {
    assert.is((await api(rig.port, 'GET', `/api/sessions/${chat.id}`)).body.network, 'off');
    const hosts = await api(
      rig.port,
      'PATCH',
      `/api/sessions/${chat.id}`,
      { network: ['Registry.npmjs.org', '*.github.com', '127.0.0.1:8080'] },
      { key: rig.server.key() },
    );
    assert.is(hosts.status, 200, JSON.stringify(hosts.body));
    assert.equal(hosts.body.network, ['registry.npmjs.org', '*.github.com', '127.0.0.1:8080']);
    assert.equal((await api(rig.port, 'GET', `/api/sessions/${chat.id}`)).body.network, [
      'registry.npmjs.org',
      '*.github.com',
      '127.0.0.1:8080',
    ]);
    const bad = await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, { network: 'sideways' });
    assert.is(bad.status, 400);
    assert.is(bad.body.error.code, 'invalid_request');
    assert.match(bad.body.error.message, /network/);
    const empty = await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, { network: [] });
    assert.is(empty.status, 400);
    assert.match(empty.body.error.message, /at least one host/);
    const badHost = await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, {
      network: ['http://x.com/path'],
    });
    assert.is(badHost.status, 400);
    assert.match(badHost.body.error.message, /a host is a name or address/);
    const reset = await api(
      rig.port,
      'PATCH',
      `/api/sessions/${chat.id}`,
      { network: null },
      { key: rig.server.key() },
    );
    assert.is(reset.body.network, null);
  } finally {
    chat.ws.close();
  }
});

test("scripts the agent writes cannot kill the supervisor, rewrite svc's rules or read its key; network off holds", async () => {
  const hits: string[] = [];
  const srv = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('reached');
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  const chat = await newChat({ permission_mode: 'auto', network: 'off' });
  try {
    const supervisorPid = (await status(rig.port)).processes.find(
      (p: { role: string }) => p.role === 'supervisor',
    ).pid as number;
    const key = readFileSync(join(rig.server.home, 'access_key'), 'utf8').trim();
    const perms = join(rig.server.home, 'permissions.yml');
    const script = [
      'exec 2>&1',
      `kill -9 ${supervisorPid}; echo "kill=$?"`,
      `echo "'*': [{allow: {}}]" > ${perms}; echo "rules=$?"`,
      `cat ${join(rig.server.home, 'access_key')}; echo "key=$?"`,
      `curl -sS -m 5 http://127.0.0.1:${port}/; echo "net=$?"`,
    ].join('\n');
    const [w, t] = enqueue([
      [{ name: 'write_file', args: { path: join(chat.work, 'tidy.sh'), content: script } }],
      [{ name: 'terminal', args: { command: 'sh tidy.sh' } }],
    ]);
    const turnId = await startTurn(chat);
    assert.is((await resultOf(chat, w!)).data.is_error, false);
    const out = String((await resultOf(chat, t!)).data.output);
    await endOf(chat, turnId);
    assert.match(out, /No such process\n+kill=1\n/, out);
    assert.match(out, /Read-only file system\nrules=[12]\n/);
    assert.match(out, /No such file or directory\nkey=1\n/);
    assert.match(out, /net=7\n/);
    assert.not.match(out, key);
    assert.not.ok(existsSync(perms), 'permissions.yml was not written');
    assert.equal(hits, [], 'the loopback server was never reached');
    const after = await status(rig.port);
    assert.is(
      after.processes.find((p: { role: string }) => p.role === 'supervisor').pid,
      supervisorPid,
      'the same supervisor still runs',
    );
    assert.is((await api(rig.port, 'GET', '/api/health')).body.status, 'ok');
  } finally {
    chat.ws.close();
  }
});

/** Runs `script` (written into the working folder by the test) as one sandboxed terminal command; its output. */
async function probe(chat: Chat, script: string): Promise<string> {
  writeFileSync(join(chat.work, 'probe.sh'), `exec 2>&1\n${script}\n`);
  rig.fake.reset(); // what an earlier failed test left queued is not this turn's
  const [t] = enqueue([[{ name: 'terminal', args: { command: 'sh probe.sh' } }]]);
  const turnId = await startTurn(chat);
  const out = String((await resultOf(chat, t!)).data.output);
  await endOf(chat, turnId);
  return out;
}

test('no capabilities even when svc runs as root, and a fresh minimal /dev with a private /dev/shm', async () => {
  const chat = await newChat({ permission_mode: 'auto' });
  const mark = `svc-e2e-${randomBytes(6).toString('hex')}`;
  // A file only capabilities could read (uid 0 without CAP_DAC_OVERRIDE cannot), and one in the host's /dev/shm.
  writeFileSync(join(chat.work, 'locked.txt'), 'read with capabilities\n');
  chmodSync(join(chat.work, 'locked.txt'), 0);
  writeFileSync(`/dev/shm/${mark}-host`, 'host\n');
  try {
    const out = await probe(
      chat,
      [
        `grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status`,
        'cat locked.txt; echo "locked=$?"',
        `echo "dev=$(ls -A /dev | tr '\n' ' ')"`,
        `echo "blocks=$(find /dev -type b | tr '\n' ' ')"`,
        `echo "shm=$(ls -A /dev/shm | tr '\n' ' ')"`,
        `echo inside > /dev/shm/${mark}-inside`,
      ].join('\n'),
    );
    // uid 0 keeps no capability, and cannot gain one by running a program (NoNewPrivs)
    for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb'])
      assert.match(out, new RegExp(`^${cap}:\\s+0{16}$`, 'm'), `${cap} in:\n${out}`);
    assert.match(out, /^NoNewPrivs:\s+1$/m, out);
    assert.match(out, /Permission denied\nlocked=1\n/, out);
    assert.not.match(out, 'read with capabilities');
    const dev = /^dev=(.*)$/m.exec(out)![1]!.trim().split(' ');
    for (const name of ['null', 'zero', 'full', 'random', 'urandom', 'tty', 'pts', 'shm'])
      assert.ok(dev.includes(name), `/dev/${name} is there: ${dev.join(' ')}`);
    // bubblewrap's /dev: those devices, the stdio links, ptmx and core; no disk, console or kvm
    const minimal = new Set([
      ...['null', 'zero', 'full', 'random', 'urandom', 'tty', 'pts', 'shm', 'ptmx'],
      ...['fd', 'stdin', 'stdout', 'stderr', 'core', 'mqueue'],
    ]);
    assert.equal(
      dev.filter((n) => !minimal.has(n)),
      [],
      `only a minimal /dev: ${dev.join(' ')}`,
    );
    assert.match(out, /^blocks=\s*$/m, 'no block device (raw disk) at all');
    assert.match(out, /^shm=\s*$/m, "the host's /dev/shm is not there");
    assert.not.ok(existsSync(`/dev/shm/${mark}-inside`), "nothing reaches the host's /dev/shm");
  } finally {
    rmSync(`/dev/shm/${mark}-host`, { force: true });
    rmSync(`/dev/shm/${mark}-inside`, { force: true });
    chat.ws.close();
  }
});

test("~/.aws, Docker's sockets (its own path, Docker Desktop's under ~/.docker) and a socket of a hide rule are out of reach", async () => {
  const chat = await newChat({ permission_mode: 'auto' });
  const rules = join(rig.server.home, 'permissions.yml');
  writeFileSync(rules, `sandbox:\n  hide: ["${ruleSock.path}"]\n`);
  // Docker's own path as svc sees it (its mount namespace, when root planted one there).
  const svcPid = rig.server.proc.pid!;
  const targets: Array<{ path: string; sock: FakeSocket; outside: string }> = [
    { path: desktopSock.path, sock: desktopSock, outside: desktopSock.path },
    { path: ruleSock.path, sock: ruleSock, outside: ruleSock.path },
    ...(runSock
      ? ['/var/run/docker.sock', '/run/docker.sock'].map((p) => ({
          path: p,
          sock: runSock!,
          // (/var/run is a link to /run, which would resolve in this process's namespace)
          outside: `/proc/${svcPid}/root/run/docker.sock`,
        }))
      : []),
  ];
  try {
    for (const t of targets)
      assert.ok(await reachable(t.outside), `${t.path} is a live socket where svc runs`);
    const before = targets.map((t) => t.sock.connections);
    const node = JSON.stringify(process.execPath);
    const tryConnect = `const c=require('net').connect(process.argv[1]);c.on('connect',()=>{console.log('connected');process.exit(0)});c.on('error',(e)=>{console.log(e.code);process.exit(0)})`;
    const out = await probe(
      chat,
      [
        `cat ${home}/.aws/credentials; echo "aws=$?"`,
        `echo "aws-dir=$(ls -A ${home}/.aws | tr '\n' ' ')"`,
        ...targets.map(
          (t) =>
            `if [ -S ${t.path} ]; then echo "${t.path}: a socket"; else echo "${t.path}: no socket"; fi; echo "${t.path}: $(${node} -e "${tryConnect}" ${t.path})"`,
        ),
      ].join('\n'),
    );
    assert.not.match(out, AWS_SECRET);
    assert.match(out, /No such file or directory\naws=1\n/, out);
    assert.match(out, /^aws-dir=\s*$/m, '~/.aws looks empty');
    for (const t of targets) {
      assert.match(out, `${t.path}: no socket\n`, out);
      assert.not.match(out, `${t.path}: connected`, out);
    }
    assert.equal(
      targets.map((t) => t.sock.connections),
      before,
      'no connection reached any of the sockets from inside',
    );
    if (!runSock)
      console.log('  (not root: /run/docker.sock was not planted, so only checked by its rule)');
  } finally {
    rmSync(rules, { force: true });
    chat.ws.close();
  }
});

/** A terminal call that asks to step outside, to create `file`. */
const outsideCall = (file: string) => ({
  name: 'terminal',
  args: {
    command: `touch ${file}`,
    outside_sandbox: 'create a marker file beside the working folder',
  },
});

test('stepping outside asks even in auto mode, shows why, and runs outside once allowed', async () => {
  for (const mode of ['interactive', 'auto'] as const) {
    const chat = await newChat({ permission_mode: mode });
    try {
      const file = join(root, `outside-${mode}.txt`);
      const [c] = enqueue([[outsideCall(file)]]);
      const turnId = await startTurn(chat);
      const ask = await firstOf(chat, c!);
      assert.is(ask.type, 'approval.requested', `${mode}: ${JSON.stringify(ask.data)}`);
      assert.match(
        ask.data.reason,
        /asks to run outside the sandbox.*Its reason: create a marker file beside the working folder$/,
      );
      assert.is(ask.data.input.outside_sandbox, 'create a marker file beside the working folder');
      assert.is(ask.data.sandbox_notice, undefined, 'the sandbox is on: no notice');
      const ok = await api(
        rig.port,
        'POST',
        `/api/sessions/${chat.id}/approvals/${ask.data.approval_id}`,
        { decision: 'allow_once' },
        { key: rig.server.key() },
      );
      assert.is(ok.status, 200, JSON.stringify(ok.body));
      const r = await resultOf(chat, c!);
      assert.is(
        r.data.output,
        '(no output)\n[exit code 0]\n[ran outside the sandbox, as approved]',
      );
      await endOf(chat, turnId);
      assert.ok(existsSync(file));
    } finally {
      chat.ws.close();
    }
  }
});

test('strict never steps outside; a denied ask leaves the file unwritten; a terminal_outside rule allows by name', async () => {
  const strict = await newChat({ permission_mode: 'strict' });
  const auto = await newChat({ permission_mode: 'auto' });
  const rules = join(rig.server.home, 'permissions.yml');
  try {
    const f1 = join(root, 'strict.txt');
    const [c1] = enqueue([[outsideCall(f1)]]);
    const t1 = await startTurn(strict);
    const r1 = await firstOf(strict, c1!);
    assert.is(r1.type, 'turn.tool_result');
    assert.match(r1.data.output, /^permission_denied: .*outside the sandbox.*strict mode/);
    await endOf(strict, t1);
    assert.not.ok(existsSync(f1));

    const f2 = join(root, 'denied.txt');
    const [c2] = enqueue([[outsideCall(f2)]]);
    const t2 = await startTurn(auto);
    const ask = await firstOf(auto, c2!);
    assert.is(ask.type, 'approval.requested');
    await api(
      rig.port,
      'POST',
      `/api/sessions/${auto.id}/approvals/${ask.data.approval_id}`,
      {
        decision: 'deny',
      },
      { key: rig.server.key() },
    );
    assert.match((await resultOf(auto, c2!)).data.output, /^permission_denied: the user declined/);
    await endOf(auto, t2);
    assert.not.ok(existsSync(f2));

    writeFileSync(rules, 'terminal_outside:\n  - allow: { command: touch }\n');
    const f3 = join(root, 'by-rule.txt');
    const [c3] = enqueue([[outsideCall(f3)]]);
    const t3 = await startTurn(auto);
    const r3 = await firstOf(auto, c3!);
    assert.is(r3.type, 'turn.tool_result', 'a rule naming the command lets it out without asking');
    assert.match(r3.data.output, /\[ran outside the sandbox, as approved\]$/);
    await endOf(auto, t3);
    assert.ok(existsSync(f3));
  } finally {
    rmSync(rules, { force: true });
    strict.ws.close();
    auto.ws.close();
  }
});

/** A loopback HTTP server that records what reached it. */
async function loopbackServer(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const srv = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end(`reached ${req.url}`);
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { port: (srv.address() as { port: number }).port, hits };
}

/** Runs `command` in one turn of `chat` (through write_file + terminal when it is a script). */
async function runInTurn(chat: Chat, command: string, script?: [string, string]): Promise<string> {
  const steps: Array<Array<{ name: string; args: Record<string, unknown> }>> = [];
  if (script)
    steps.push([
      { name: 'write_file', args: { path: join(chat.work, script[0]), content: script[1] } },
    ]);
  steps.push([{ name: 'terminal', args: { command } }]);
  const ids = enqueue(steps);
  const turnId = await startTurn(chat);
  const first = await firstOf(chat, ids[0]!);
  assert.is(first.type, 'turn.tool_result', `asked instead: ${JSON.stringify(first.data)}`);
  const out = String((await resultOf(chat, ids.at(-1)!)).data.output);
  await endOf(chat, turnId);
  return out;
}

test("a sandboxed script cannot reach svc's API: its session stays interactive", async () => {
  const chat = await newChat({ permission_mode: 'interactive' });
  try {
    const target = `http://127.0.0.1:${rig.port}/api/sessions/${chat.id}`;
    const body = JSON.stringify({ permission_mode: 'auto' });
    // Directly (Node 20's fetch ignores the proxy variables), then through the proxy by hand.
    const script = `
      const http = require('http');
      const direct = fetch(${JSON.stringify(target)}, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(body)} })
        .then((r) => 'direct status ' + r.status, (e) => 'direct failed ' + (e.cause?.code ?? e.message));
      const proxy = new URL(process.env.HTTP_PROXY || 'http://none');
      const viaProxy = !process.env.HTTP_PROXY ? 'no proxy' : new Promise((resolve) => {
        // Its own agent: from Node 24 the global one follows HTTP_PROXY itself (NODE_USE_ENV_PROXY)
        // and refuses a request already written for a proxy.
        const req = http.request({ agent: new http.Agent(), host: proxy.hostname, port: proxy.port, method: 'PATCH', path: ${JSON.stringify(target)}, headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve('proxy status ' + res.statusCode + ' ' + text.trim()));
        });
        req.on('error', (e) => resolve('proxy failed ' + e.code));
        req.end(${JSON.stringify(body)});
      });
      Promise.all([direct, viaProxy]).then((lines) => console.log(lines.join('\\n')));
    `;
    // Direct means direct: from Node 24 fetch follows HTTP_PROXY itself when NODE_USE_ENV_PROXY is set.
    const out = await runInTurn(chat, 'env -u NODE_USE_ENV_PROXY node mode.js', [
      'mode.js',
      script,
    ]);
    assert.match(out, /^direct failed ECONNREFUSED\n/, out);
    assert.match(
      out,
      `proxy status 403 svc sandbox: 127.0.0.1:${rig.port} is not a public address (loopback)`,
    );
    const after = await api(rig.port, 'GET', `/api/sessions/${chat.id}`);
    assert.is(after.body.permission_mode, 'interactive');
  } finally {
    chat.ws.close();
  }
});

test('network on: a loopback service is out of reach until permissions.yml names it; then HTTP and SOCKS5 reach it, and SOCKS5 still refuses svc', async () => {
  const dev = await loopbackServer();
  const chat = await newChat({ permission_mode: 'auto' });
  const rules = join(rig.server.home, 'permissions.yml');
  try {
    const before = await runInTurn(
      chat,
      `curl -sS -f -m 10 http://127.0.0.1:${dev.port}/a; echo " a=$?"; curl -sS -f -m 10 http://[::1]:${dev.port}/v6; echo " v6=$?"`,
    );
    assert.match(before, / a=22\n/, before);
    assert.match(before, / v6=22\n/);
    assert.match(
      before,
      `[svc sandbox proxy refused: 127.0.0.1:${dev.port} is not a public address (loopback)`,
    );
    assert.match(before, 'local_hosts: ["127.0.0.1:' + dev.port + '"]');
    assert.equal(dev.hits, []);

    writeFileSync(rules, `sandbox:\n  local_hosts: ["127.0.0.1:${dev.port}"]\n`);
    const after = await runInTurn(
      chat,
      [
        `curl -sS -m 10 http://127.0.0.1:${dev.port}/b; echo " b=$?"`,
        `curl -sS -m 10 -x "$ALL_PROXY" http://127.0.0.1:${dev.port}/socks; echo " socks=$?"`,
        `curl -sS -m 10 -x "$ALL_PROXY" http://127.0.0.1:${rig.port}/api/health; echo " svc=$?"`,
      ].join('; '),
    );
    assert.match(after, /^reached \/b b=0\n/, after);
    assert.match(after, /reached \/socks socks=0\n/);
    assert.match(after, / svc=(7|97)\n/);
    assert.match(
      after,
      `[svc sandbox proxy refused: 127.0.0.1:${rig.port} is not a public address (loopback)`,
    );
    assert.equal(dev.hits, ['/b', '/socks']);
  } finally {
    rmSync(rules, { force: true });
    chat.ws.close();
  }
});

test('no unix socket outside is reachable, the socket variables are gone and the runtime folder is empty; a listed socket stays reachable', async () => {
  const listen = async (path: string, answer: string) => {
    const srv = createNetServer((c) => c.end(`${answer}\n`));
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(path, () => r()));
  };
  const agentSock = join(runtime, 'agent.sock');
  const listed = join(root, 'db.sock');
  await listen(agentSock, 'agent');
  await listen(listed, 'db');
  const chat = await newChat({ permission_mode: 'auto' });
  const rules = join(rig.server.home, 'permissions.yml');
  const probe = [
    'exec 2>&1',
    'env | grep -E \'^(SSH_AUTH_SOCK|DBUS_SESSION_BUS_ADDRESS|DISPLAY|WAYLAND_DISPLAY|XDG_RUNTIME_DIR)=\' ; echo "vars=$?"',
    `echo "runtime=$(ls -A ${runtime} | wc -l)"`,
    `for f in /proc/$$/fd/*; do echo "fd \${f##*/} $(readlink $f)"; done | grep socket: | cut -d' ' -f2 | tr '\\n' ' '; echo`,
    ...[agentSock, listed].map(
      (p) =>
        `node -e "require('net').connect('${p}').on('data', (d) => console.log('${p}', String(d).trim())).on('error', (e) => console.log('${p}', e.code))"`,
    ),
  ].join('\n');
  try {
    const out = await runInTurn(chat, 'sh probe.sh', ['probe.sh', probe]);
    assert.match(out, /^vars=1\nruntime=0\n1 2 \n/, out);
    assert.match(out, `${agentSock} EPERM\n`);
    assert.match(out, `${listed} EPERM\n`);

    writeFileSync(rules, `sandbox:\n  sockets: ["${listed}"]\n`);
    const open = await runInTurn(chat, 'sh probe.sh');
    assert.match(open, /^vars=1\nruntime=0\n/, open);
    assert.match(open, `${agentSock} ENOENT\n`);
    assert.match(open, `${listed} db\n`);
  } finally {
    rmSync(rules, { force: true });
    chat.ws.close();
  }
});

test('the audit log records the outside asks and refusals', async () => {
  const lines = readFileSync(join(rig.server.home, 'logs', 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (l) => JSON.parse(l) as { decision: string; reason?: string; input: Record<string, unknown> },
    );
  const outside = lines.filter((l) => typeof l.input.outside_sandbox === 'string');
  assert.ok(
    outside.some((l) => l.decision === 'ask' && /outside the sandbox/.test(l.reason ?? '')),
  );
  assert.ok(outside.some((l) => l.decision === 'strict_denied'));
  assert.ok(outside.some((l) => l.decision === 'denied_by_user'));
});

test.run();
