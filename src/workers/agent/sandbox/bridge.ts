import { spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { proxyEnv } from './proxy-env.js';

/**
 * Runs inside the sandbox's own network namespace (`node bridge.js <program> <args…>`), started
 * by bubblewrap with an IPC channel to the agent worker (Node's NODE_CHANNEL_FD, a socket pair
 * made outside, so nothing here creates a unix socket: the seccomp filter forbids that). It
 * listens on a loopback port of the namespace and hands each connection to the agent worker over
 * the channel (the socket itself, as SCM_RIGHTS), where the egress proxy takes it. The command's
 * environment arrives over the channel too: the bridge starts with an empty one, so the user's
 * NODE_OPTIONS never runs in it. Then the command runs, with the proxy variables pointing at the
 * port, and its exit status is passed on. It imports nothing else of svc, so the bundle
 * it starts from stays small.
 *
 * A session's commands reach each other's servers through their bridges (peers.ts): asked, the
 * bridge lists the ports listening in its namespace and dials one of them, handing the connected
 * socket out; and it listens on the ports of servers the session's other commands run (`forward`
 * in the start message), so a client that ignores the proxy variables reaches them too.
 */

const [program, ...args] = process.argv.slice(2);
if (!program || !process.send) {
  process.stderr.write('usage: bridge.js <program> [args…], started with an IPC channel\n');
  process.exit(2);
}
const send = process.send.bind(process);

/** One listener per side of the proxy; each connection is sent out tagged with its side. */
function relay(side: 'http' | 'socks') {
  return createServer({ pauseOnConnect: true }, (socket) => {
    // Node closes the socket here once it is sent; the proxy outside owns it from then on.
    send({ t: 'conn', side }, socket, {}, (err) => {
      if (err) socket.destroy();
    });
  });
}
const servers: Server[] = [relay('http'), relay('socks')];
const listen = (s: Server, port = 0, host = '127.0.0.1') =>
  new Promise<number>((resolve) => {
    s.once('error', () => resolve(0)); // taken: the command keeps its own way to the port
    s.listen(port, host, () => resolve((s.address() as { port: number }).port));
  });
/** The bridge's own listeners, never offered to the other commands as servers. */
const own = new Set<number>();

/** A session's other command serves on `port`: connections to it here go out to that command. */
function forwarder(port: number): Server {
  return createServer({ pauseOnConnect: true }, (socket) => {
    send({ t: 'conn', side: 'peer', port }, socket, {}, (err) => {
      if (err) socket.destroy();
    });
  });
}

/** TCP ports listening in this namespace (/proc/self/net is the namespace's view), ours left out. */
function listening(): number[] {
  const ports = new Set<number>();
  for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue; // no IPv6 here
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== '0A') continue; // LISTEN
      const port = Number.parseInt(f[1]?.split(':')[1] ?? '', 16);
      if (port > 0 && !own.has(port)) ports.add(port);
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** Connects to a server of this namespace; IPv4 loopback first, then IPv6. */
function dial(port: number, hosts = ['127.0.0.1', '::1']): Promise<Socket | undefined> {
  const [host, ...rest] = hosts;
  if (host === undefined) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const s = connect({ port, host });
    s.once('connect', () => {
      s.pause();
      resolve(s);
    });
    s.once('error', () => {
      s.destroy();
      resolve(dial(port, rest));
    });
  });
}

function answer(m: { t?: unknown; id?: unknown; port?: unknown }): void {
  if (typeof m.id !== 'number') return;
  const id = m.id;
  if (m.t === 'ports') send({ t: 'answer', id, ports: listening() });
  else if (m.t === 'dial' && typeof m.port === 'number')
    void dial(m.port).then((s) => {
      if (!s) return send({ t: 'answer', id, error: 'ECONNREFUSED' });
      send({ t: 'answer', id }, s, {}, (err) => {
        if (err) s.destroy();
      });
    });
}

async function start(env: Record<string, string>, forward: number[]): Promise<void> {
  const [http, socks] = await Promise.all(servers.map((s) => listen(s)));
  own.add(http!).add(socks!);
  for (const port of forward)
    for (const host of ['127.0.0.1', '::1']) {
      const s = forwarder(port);
      servers.push(s);
      if ((await listen(s, port, host)) === port) own.add(port);
    }
  const all = {
    ...env,
    ...proxyEnv(`http://127.0.0.1:${http}`, `socks5h://127.0.0.1:${socks}`),
  };
  // The channel must not reach the command: /dev/null over its descriptor (and the seccomp
  // program's, should bubblewrap have left it open) in the child.
  const devNull = openSync('/dev/null', 'r');
  const child = spawn(program!, args, {
    stdio: ['inherit', 'inherit', 'inherit', devNull, devNull],
    env: all,
  });
  child.on('error', (err) => {
    process.stderr.write(`${program}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    for (const s of servers) s.close();
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

let started = false;
process.on('message', (m: unknown) => {
  if (typeof m !== 'object' || m === null) return;
  const msg = m as { t?: unknown; env?: unknown; forward?: unknown };
  if (started) return answer(msg);
  const env = msg.t === 'start' ? msg.env : undefined;
  if (typeof env !== 'object' || env === null) {
    process.stderr.write('svc sandbox bridge: no start message\n');
    process.exit(2);
  }
  started = true;
  const forward = Array.isArray(msg.forward)
    ? msg.forward.filter((p): p is number => Number.isInteger(p) && p > 0 && p < 65536)
    : [];
  void start(env as Record<string, string>, forward);
});
