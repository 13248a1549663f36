import { createServer } from 'node:net';
import { formatHostPort, type ListenAddr } from '../shared/net/addr.js';

/**
 * The gateway listens with SO_REUSEPORT so a restart can hand the port over. That would also let
 * it share a port with another server by accident, so the first start proves the port is free
 * with an exclusive bind.
 *
 * `waitMs` is for a relaunch (an upgrade or a rollback): the port was ours a moment ago, and in
 * the gap any program's outgoing connection may have been given it as its local port (the kernel
 * hands free ports of the ephemeral range, 32768-60999 on Linux, to every connect). That blocks
 * the bind while the connection lasts, and for the 60 s of TIME_WAIT after it when that program
 * closed first. A relaunch waits that out instead of failing (then its rollback would fail the
 * same way); a first start says at once that the port is taken.
 */
export async function assertPortFree(
  listen: ListenAddr,
  waitMs = 0,
  onWait?: () => void,
): Promise<void> {
  if (listen.port === 0) return;
  const where = formatHostPort(listen.host || '0.0.0.0', listen.port);
  const until = Date.now() + waitMs;
  let waited = false;
  for (;;) {
    const err = await probe(listen);
    if (err === undefined) return;
    if (err.code === 'EADDRINUSE' && Date.now() < until) {
      if (!waited) onWait?.();
      waited = true;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    throw new Error(
      err.code === 'EADDRINUSE'
        ? `${where} is already in use by another program; choose another with --addr`
        : `cannot listen on ${where}: ${err.message}`,
    );
  }
}

function probe(listen: ListenAddr): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    server.listen({ host: listen.host || undefined, port: listen.port, exclusive: true }, () =>
      server.close(() => resolve(undefined)),
    );
  });
}
