import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  http,
  removeHome,
  runCli,
  SLACK,
  sleep,
  startServer,
  tmpHome,
  waitFor,
} from '../helpers/server.js';

interface Proc {
  role: string;
  pid: number;
  state: string;
  restarts: number;
}

async function statusJson(home: string): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: home });
  assert.is(r.code, 0, `svc status --json failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function gatewayOf(status: any): Proc | undefined {
  return (status.processes as Proc[]).find((p) => p.role === 'gateway' && p.pid > 0);
}

/** True when no process has this pid any more (a zombie nobody reaped yet counts as gone). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Every live process whose environment carries SVC_HOME=<home>: the processes of this test's server. */
function processesOfHome(home: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (environ.includes(`SVC_HOME=${home}`) && !gone(Number(name))) found.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

const health = (port: number) => http({ port, path: '/api/health' });

function postRestart(port: number, reason = 'test') {
  return http({
    port,
    method: 'POST',
    path: '/api/restart',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ reason }),
  });
}

test('kill -9 of the gateway: it is back at once and status counts one restart', async () => {
  const server = await startServer();
  try {
    const before = gatewayOf(await statusJson(server.home));
    assert.ok(before, 'a gateway runs');
    assert.is(before!.restarts, 0);
    // svc runs from its bundle (one file a process: the fast start), children included.
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    assert.match(cmdline(before!.pid), /dist\/bundle\/gateway\/main\.js/);
    process.kill(before!.pid, 'SIGKILL');
    // Once the killed process is gone, a 200 can only come from a new gateway. Here it takes
    // well under 2 s; the bound is for a loaded CI machine, and still far below the 60 s
    // crash-loop pause a restart must not fall into.
    await waitFor(
      async () => gone(before!.pid) && (await health(server.port)).status === 200,
      20_000,
      'the gateway to answer again',
    );
    const after = gatewayOf(await statusJson(server.home))!;
    assert.ok(after, 'status lists a gateway');
    assert.is.not(after.pid, before!.pid, 'a new gateway process');
    assert.is(after.restarts, 1);
    assert.is(after.state, 'running');
    assert.is((await health(server.port)).json().status, 'ok');
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('kill -9 of the supervisor: no process of this server remains', async () => {
  const server = await startServer();
  const pids: number[] = [];
  try {
    const status = await statusJson(server.home);
    for (const p of status.processes as Proc[])
      if (p.role !== 'supervisor' && p.pid > 0) pids.push(p.pid);
    assert.ok(pids.length >= 1, 'at least the gateway runs');
    const ours = processesOfHome(server.home);
    for (const pid of [server.proc.pid!, ...pids])
      assert.ok(ours.includes(pid), `process ${pid} is found by its SVC_HOME`);
    server.proc.kill('SIGKILL');
    await waitFor(() => pids.every(gone), 5000, 'the children to exit');
    await waitFor(
      () => processesOfHome(server.home).length === 0,
      5000,
      'no process with this SVC_HOME',
    );
  } finally {
    for (const pid of pids) if (!gone(pid)) process.kill(pid, 'SIGKILL');
    await server.stop();
    removeHome(server.home);
  }
});

test('the console goes away (svc serve | head): svc keeps serving, logs to its files, stops on SIGTERM', async () => {
  const server = await startServer();
  try {
    // What `| head` does once it has its lines: the read ends of svc's stdout and stderr close.
    server.proc.stdout!.destroy();
    server.proc.stderr!.destroy();
    const exited = new Promise<number | null>((r) => server.proc.once('exit', (code) => r(code)));
    // A line logged after that must not turn into an error logged to the same closed console.
    const health = await http({ port: server.port, path: '/api/health' });
    assert.is(health.status, 200);
    server.proc.kill('SIGTERM');
    // A bound against a spin, not a measure: a stop takes well under a second here.
    let bound: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => (bound = setTimeout(() => r('still running'), 30_000 * SLACK))),
    ]);
    clearTimeout(bound);
    assert.is(code, 0, 'svc stopped on SIGTERM with its console gone');
    await waitFor(
      () => processesOfHome(server.home).length === 0,
      5000,
      'no process with this SVC_HOME',
    );
    const logged = readFileSync(join(server.home, 'logs', 'supervisor.log'), 'utf8');
    assert.match(logged, /stopping reason=terminated/);
  } finally {
    if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
    removeHome(server.home);
  }
});

/** A tiny HTTP/1.1 client on one kept-alive connection, so a follow-up request reaches the same gateway. */
class KeepAlive {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private closed = false;
  private constructor(private readonly sock: Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiting?.();
    });
    sock.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
    sock.on('error', () => {});
    sock.setTimeout(5000, () => sock.destroy()); // a stuck answer fails the test instead of hanging it
  }

  static open(port: number): Promise<KeepAlive> {
    return new Promise((resolve, reject) => {
      const sock = connect(port, '127.0.0.1', () => resolve(new KeepAlive(sock)));
      sock.once('error', reject);
    });
  }

  async request(
    method: string,
    path: string,
    body?: string,
  ): Promise<{ status: number; headers: string; json: any }> {
    const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: keep-alive'];
    if (body !== undefined)
      head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    this.sock.write(head.join('\r\n') + '\r\n\r\n' + (body ?? ''));
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const headers = this.buf.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0);
        if (this.buf.length >= end + 4 + length) {
          const text = this.buf.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buf = this.buf.subarray(end + 4 + length);
          return {
            status: Number(headers.split(' ')[1]),
            headers,
            json: text ? JSON.parse(text) : undefined,
          };
        }
      }
      if (this.closed) throw new Error('the connection closed before a full response');
      await new Promise<void>((r) => (this.waiting = r));
    }
  }

  close(): void {
    this.sock.destroy();
  }
}

test('restart hands the port over: a client polling /api/health is never refused', async () => {
  const server = await startServer();
  let polling = true;
  const results: string[] = [];
  const poller = (async () => {
    while (polling) {
      try {
        const res = await health(server.port);
        results.push(String(res.status));
      } catch (err) {
        results.push((err as NodeJS.ErrnoException).code ?? (err as Error).message);
      }
      await sleep(20);
    }
  })();
  try {
    const before = gatewayOf(await statusJson(server.home))!;
    await waitFor(() => results.length >= 5, 5000, 'the poller to start');

    // On one kept-alive connection: the 202, then the same (old) gateway reports that it drains.
    // The drain flag reaches the gateway over IPC before the supervisor's answer to the restart
    // request, so it is set by the time the 202 is written; the new gateway takes a process start
    // (hundreds of ms) before the old one lets go of its connections.
    const conn = await KeepAlive.open(server.port);
    try {
      const ack = await conn.request('POST', '/api/restart', '{"reason":"handover test"}');
      assert.is(ack.status, 202);
      assert.equal(ack.json, { status: 'restarting' });
      const during = await conn.request('GET', '/api/health');
      assert.is(during.status, 200);
      assert.is(during.json.status, 'draining', 'the draining gateway says so');
    } finally {
      conn.close();
    }

    const after = await waitFor(
      async () => {
        const s = await statusJson(server.home);
        const g = gatewayOf(s);
        return s.state === 'running' && s.restarts === 1 && g && g.pid !== before.pid
          ? { s, g }
          : undefined;
      },
      10_000,
      'the restart to finish',
    );
    assert.is(after.s.last_restart_error, null);
    await waitFor(() => gone(before.pid), 5000, 'the old gateway to exit');
    const seen = results.length;
    await waitFor(() => results.length >= seen + 10, 5000, 'more polls after the restart');
    polling = false;
    await poller;
    // The promise is no refused connection. A connection the kernel queued on the old socket in
    // the instant it closes can still be reset (SO_REUSEPORT cannot migrate it without the
    // tcp_migrate_req sysctl); that window is documented, counted here, and kept out of the verdict.
    const refused = results.filter((r) => r === 'ECONNREFUSED');
    assert.equal(refused, [], `no poll was refused (${results.length} polls)`);
    const other = results.filter((r) => r !== '200' && r !== 'ECONNRESET');
    assert.equal(other, [], 'every poll that was answered got 200');
    const resets = results.filter((r) => r === 'ECONNRESET').length;
    if (resets > 0)
      console.log(`  note: ${resets} of ${results.length} polls were reset during the handover`);
    assert.ok(results.length >= 20, `enough polls to cover the restart (${results.length})`);
    assert.is((await health(server.port)).json().status, 'ok', 'the new gateway is not draining');
  } finally {
    polling = false;
    await poller;
    await server.stop();
    removeHome(server.home);
  }
});

test('a restart with a now-invalid config.yml is abandoned; the old config keeps serving', async () => {
  const keyA = 'old-key-' + 'a'.repeat(32);
  const keyB = 'new-key-' + 'b'.repeat(32);
  const server = await startServer({
    config: `access_key: ${keyA}\n`,
    env: { SVC_ACCESS_KEY: undefined },
  });
  const remote = async (key: string) =>
    (
      await http({
        port: server.port,
        path: '/api/status',
        headers: { Host: 'evil.example', Authorization: `Bearer ${key}` },
      })
    ).status;
  try {
    const before = gatewayOf(await statusJson(server.home))!;
    const file = join(server.home, 'config.yml');
    const broken = `access_key: ${keyB}\nacess_key: typo\n`;
    writeFileSync(file, broken);
    const res = await postRestart(server.port, 'broken config');
    assert.is(res.status, 202);
    const status = await waitFor(
      async () => {
        const s = await statusJson(server.home);
        return s.last_restart_error && s.state === 'running' ? s : undefined;
      },
      10_000,
      'the restart to be abandoned',
    );
    assert.match(status.last_restart_error, file);
    assert.match(status.last_restart_error, 'acess_key');
    assert.is(status.restarts, 0);
    assert.is(gatewayOf(status)!.pid, before.pid, 'the same gateway keeps serving');
    assert.is(await remote(keyA), 200, 'the old key still works');
    assert.is(await remote(keyB), 401, 'the new, invalid config was not applied');
    await waitFor(
      async () => (await health(server.port)).json().status === 'ok',
      5000,
      'the gateway to stop draining',
    );
    assert.is(readFileSync(file, 'utf8'), broken, 'config.yml is left as the user wrote it');
    const human = await runCli(['status'], { SVC_HOME: server.home });
    assert.match(human.stdout, /last restart failed: .*acess_key/);
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test('svc serve -d runs in the background; status shows it; --stop stops it; a second serve is refused', async () => {
  const home = tmpHome();
  const env = { SVC_HOME: home };
  let pids: number[] = [];
  try {
    const started = await runCli(['serve', '-d', '--addr', '127.0.0.1:0'], env);
    assert.is(started.code, 0, `svc serve -d: ${started.stderr}`);
    assert.match(started.stdout, /background/);

    const human = await runCli(['status'], env);
    assert.is(human.code, 0, human.stderr);
    assert.match(human.stdout, /running/);
    assert.match(human.stdout, /gateway/);

    const status = await statusJson(home);
    assert.is(status.running, true);
    const gateway = gatewayOf(status);
    assert.ok(gateway, 'processes include a gateway');
    pids = (status.processes as Proc[]).map((p) => p.pid).filter((p) => p > 0);
    const supervisor = (status.processes as Proc[]).find((p) => p.role === 'supervisor');
    assert.ok(
      readFileSync(`/proc/${supervisor!.pid}/cmdline`, 'utf8')
        .split('\0')
        .includes('--max-semi-space-size=1'),
      "the daemon's supervisor runs with a 1 MB young generation (issue 37)",
    );
    const port = Number(/:(\d+)$/.exec(status.addr)![1]);
    assert.is((await health(port)).status, 200, 'the background server answers');

    for (const args of [
      ['serve', '--addr', '127.0.0.1:0'],
      ['serve', '-d', '--addr', '127.0.0.1:0'],
    ]) {
      const second = await runCli(args, env, 10_000);
      assert.is.not(second.code, 0, `svc ${args.join(' ')} refused`);
      assert.not.equal(second.code, null, `svc ${args.join(' ')} exits by itself`);
      const lines = second.stderr.split('\n').filter((l) => l.trim() !== '');
      assert.equal(lines.length, 1, `one line: ${second.stderr}`);
      assert.match(lines[0]!, /already running/);
    }

    const stopped = await runCli(['serve', '--stop'], env);
    assert.is(stopped.code, 0, stopped.stderr);
    await waitFor(() => pids.every(gone), 5000, 'every process of the daemon to exit');
    const after = await runCli(['status'], env);
    assert.is.not(after.code, 0);
    assert.match(after.stderr, /not running/);
  } finally {
    await runCli(['serve', '--stop'], env, 20_000);
    for (const pid of pids) if (!gone(pid)) process.kill(pid, 'SIGKILL');
    removeHome(home);
  }
});

test('a port already in use stops the start with one clear line', async () => {
  const home = tmpHome();
  const blocker: Server = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const r = await runCli(['serve', '--addr', `127.0.0.1:${port}`], { SVC_HOME: home }, 10_000);
    assert.is.not(r.code, 0);
    assert.not.equal(r.code, null, 'exits by itself');
    const line = r.stderr.split('\n').find((l) => l.startsWith('svc:'));
    assert.ok(line, `a "svc:" line on stderr: ${r.stderr}`);
    assert.match(line!, `127.0.0.1:${port}`);
    assert.match(line!, /in use/);
  } finally {
    await new Promise((r) => blocker.close(r));
    removeHome(home);
  }
});

test('a relaunched svc (an upgrade, a rollback) waits while another program holds its port, then serves', async () => {
  // In life the holder is another program's outgoing connection, handed the port from the
  // ephemeral range (32768-60999) in the moment between the old svc closing it and the new one
  // binding it. A test cannot hold it that way: once released, the same port may at once be handed
  // to any other test process's connection, whose TIME_WAIT then blocks it for 60 s (CI saw that
  // once). A listener on a port below that range blocks the bind the same way (EADDRINUSE) and,
  // once closed, is free for svc alone.
  const { holder, port } = await listenBelowEphemeralRange();
  const home = tmpHome();
  try {
    const first = await runCli(
      ['serve', '--addr', `127.0.0.1:${port}`],
      { SVC_HOME: home },
      10_000,
    );
    assert.is.not(first.code, 0, 'a first start does not wait');
    assert.match(first.stderr, /in use/);

    const starting = startServer({
      home,
      args: ['--addr', `127.0.0.1:${port}`],
      env: { SVC_RELAUNCH: '1' }, // what a relaunch record starts svc with
    });
    starting.catch(() => {}); // awaited below; a failure is reported there
    await waitFor(
      () => {
        try {
          return readFileSync(join(home, 'logs', 'supervisor.log'), 'utf8').includes(
            'waiting for it',
          );
        } catch {
          return false;
        }
      },
      15_000,
      'svc to say it waits for its port',
    );
    await new Promise((r) => holder.close(r));
    const server = await starting;
    try {
      assert.is(server.port, port, 'the same port as before');
      assert.is((await http({ port, path: '/api/health' })).status, 200);
    } finally {
      await server.stop();
    }
  } finally {
    if (holder.listening) await new Promise((r) => holder.close(r));
    removeHome(home);
  }
});

/** A listener on a free port below Linux's ephemeral range, where no connect() is handed ports. */
async function listenBelowEphemeralRange(): Promise<{ holder: Server; port: number }> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const holder = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false)); // taken by another program: try another
      holder.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) return { holder, port };
  }
  throw new Error('no free port below the ephemeral range in 50 tries');
}

test.run();
