import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
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
const servers = [relay('http'), relay('socks')];
const listen = (s: ReturnType<typeof relay>) =>
  new Promise<number>((resolve) =>
    s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)),
  );

async function start(env: Record<string, string>): Promise<void> {
  const [http, socks] = await Promise.all(servers.map(listen));
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

process.once('message', (m: unknown) => {
  const env =
    typeof m === 'object' && m !== null && (m as { t?: unknown }).t === 'start'
      ? (m as { env?: unknown }).env
      : undefined;
  if (typeof env !== 'object' || env === null) {
    process.stderr.write('svc sandbox bridge: no start message\n');
    process.exit(2);
  }
  void start(env as Record<string, string>);
});
