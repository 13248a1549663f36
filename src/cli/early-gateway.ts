import { mkdirSync } from 'node:fs';
import { loadServeEnv } from '../shared/config/serve-env.js';
import { resolvePaths } from '../shared/paths.js';
import { forkChild, type Forked } from '../supervisor/spawn-child.js';
import { normalizeArgv } from './argv.js';

/*
 * `svc serve` in the foreground forks its gateway before svc's own code loads: the launcher
 * (bin/svc.js) calls `forkGatewayEarly` from this small bundle of its own, and the serve command
 * takes the child (`takeEarlyGateway`). The gateway's start is the longer half of svc's start, so
 * every millisecond it begins sooner is one off the whole.
 */

declare global {
  /** The gateway forked by the launcher, until the serve command takes it. */
  var __svcEarlyGateway: Forked | undefined;
}

/** Options with which `svc serve` does not become the supervisor in this process. */
const notServing = new Set(['-d', '--daemon', '--stop', '-h', '--help', '-v', '--version']);

export function forkGatewayEarly(argv: string[]): void {
  const args = normalizeArgv(argv);
  if (args[2] !== 'serve' || args.slice(3).some((a) => notServing.has(a.split('=')[0]!))) return;
  try {
    const paths = resolvePaths();
    loadServeEnv(paths.serveEnv); // children inherit it
    mkdirSync(paths.home, { recursive: true, mode: 0o700 });
    globalThis.__svcEarlyGateway = forkChild('gateway', paths.home);
  } catch {
    return; // the serve command meets the same fault and says it in its own words
  }
  // Not taken (a usage error, say): it goes with this process.
  process.once('exit', () => globalThis.__svcEarlyGateway?.proc.kill('SIGKILL'));
}

export function takeEarlyGateway(): Forked | undefined {
  const forked = globalThis.__svcEarlyGateway;
  globalThis.__svcEarlyGateway = undefined;
  return forked;
}
