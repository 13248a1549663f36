import { networkInterfaces } from 'node:os';
import { log } from '../shared/log.js';
import { formatHostPort, isLoopbackBind, type ListenAddr } from '../shared/net/addr.js';
import type { Paths } from '../shared/paths.js';
import { version } from '../shared/version.js';
import { describeEngine, untestedNodeWarning } from '../shared/runtime.js';
import { askControl } from '../supervisor/control-socket.js';
import type { Forked } from '../supervisor/spawn-child.js';
import { Supervisor, type ServeFlags } from '../supervisor/supervisor.js';
import { describeStartFault } from './start-faults.js';

/** `svc serve` in the foreground: this process becomes the supervisor. */
export async function serveForeground(
  paths: Paths,
  flags: ServeFlags,
  badEnvLines: number[],
  gateway?: Forked,
): Promise<void> {
  if (badEnvLines.length > 0)
    log.warn('serve.env has lines that are not KEY=VALUE; they were skipped', {
      file: paths.serveEnv,
      lines: badEnvLines.join(','),
    });
  try {
    await refuseSecondInstance(paths);
  } catch (err) {
    gateway?.proc.kill('SIGKILL');
    throw err;
  }
  const untested = untestedNodeWarning();
  if (untested) process.stderr.write(`${untested}\n`);
  const supervisor = new Supervisor(paths, flags, gateway);
  let stopping = false;
  const stop = (reason: string, code: number) => {
    if (stopping) return;
    stopping = true;
    void supervisor.stop(reason).finally(() => process.exit(code));
  };
  process.on('SIGINT', () => stop('interrupted', 0));
  process.on('SIGTERM', () => stop('terminated', 0));
  process.on('SIGHUP', () => stop('hang-up', 0));
  process.on('uncaughtException', (err) => {
    log.error('the supervisor hit an unexpected error; stopping', { error: err.message });
    stop('supervisor error', 1);
  });
  // A promise that failed in an event or exit handler (a busy database, say) is logged; stopping
  // the whole server for it would lose more than it saves.
  process.on('unhandledRejection', (err) =>
    log.error('a supervisor task failed', {
      error: err instanceof Error ? err.message : String(err),
    }),
  );

  try {
    const { port, engine } = await supervisor.start();
    const listen = supervisor.listen;
    const shown = listen.host === '' ? '0.0.0.0' : listen.host;
    process.stdout.write(
      `svc ${version} listening on http://${formatHostPort(shown, port)}/ (engine: ${describeEngine(engine)})\n`,
    );
    if (!isLoopbackBind(listen) && process.env.SVC_DAEMONIZED !== '1') {
      process.stdout.write(
        `Open ${openUrl(listen, port, supervisor.accessKey)}\n(remote clients need the access key; anyone with this address controls svc)\n`,
      );
    }
  } catch (err) {
    const fault = describeStartFault(err, paths);
    process.stderr.write(`svc: ${fault?.message ?? (err as Error).message}\n`);
    stopping = true;
    await supervisor.stop('start failed').catch(() => undefined);
    process.exit(fault?.exitCode ?? 1);
  }
}

/** The ready-to-open address for a non-loopback bind, key included. */
export function openUrl(listen: ListenAddr, port: number, key: string): string {
  const host = listen.host === '' ? firstLanAddress() : listen.host;
  return `http://${formatHostPort(host, port)}/?access_key=${encodeURIComponent(key)}`;
}

function firstLanAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

async function refuseSecondInstance(paths: Paths): Promise<void> {
  const running = await askControl(paths.controlSocket, { cmd: 'status' }, 2000).catch(
    () => undefined,
  );
  if (running)
    throw Object.assign(
      new Error(`svc is already running for ${paths.home}; stop it with "svc serve --stop" first`),
      { exitCode: 1 },
    );
}
