import { createServer } from 'node:net';
import { log } from '../shared/log.js';
import { formatHostPort, type ListenAddr } from '../shared/net/addr.js';
import { RELAUNCH_ENV } from '../shared/upgrade/relaunch.js';

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

/** How long a relaunched svc waits for its port: a connection that held it, then TIME_WAIT's 60 s. */
const RELAUNCH_PORT_WAIT_MS = 75_000;

/**
 * Whether this process was started from a relaunch record; read once and dropped, so the
 * children forked from here on do not carry it (the gateway forked early has it and never reads it).
 */
export function takeRelaunchMark(): boolean {
  const relaunched = process.env[RELAUNCH_ENV] === '1';
  delete process.env[RELAUNCH_ENV];
  return relaunched;
}

/** A relaunch's check, just before the gateway binds: waits for the port, saying so once. */
export function awaitRelaunchPort(listen: ListenAddr): Promise<void> {
  return assertPortFree(listen, RELAUNCH_PORT_WAIT_MS, () =>
    log.info('the port is held by another connection for now; waiting for it', {
      port: listen.port,
    }),
  );
}
