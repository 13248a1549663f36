import { createServer } from 'node:net';
import { formatHostPort, type ListenAddr } from '../shared/net/addr.js';

/**
 * The gateway listens with SO_REUSEPORT so a restart can hand the port over. That would also let
 * it share a port with another server by accident, so the first start proves the port is free
 * with an exclusive bind.
 */
export function assertPortFree(listen: ListenAddr): Promise<void> {
  if (listen.port === 0) return Promise.resolve();
  const where = formatHostPort(listen.host || '0.0.0.0', listen.port);
  return new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `${where} is already in use by another program; choose another with --addr`
            : `cannot listen on ${where}: ${err.message}`,
        ),
      ),
    );
    probe.listen({ host: listen.host || undefined, port: listen.port, exclusive: true }, () =>
      probe.close(() => resolve()),
    );
  });
}
