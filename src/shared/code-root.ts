import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from './version.js';

/**
 * Where the running code lives: dist/bundle (one file a process, written by `npm run build`, so a
 * start reads a few files instead of hundreds of modules) when this module was loaded from there,
 * else dist/src (tsc's output, which the unit tests import). Files started by path come from the
 * same tree, so a bundled supervisor starts bundled children and an unbundled one unbundled ones.
 */
export const codeRoot = join(
  packageRoot,
  'dist',
  relative(packageRoot, fileURLToPath(import.meta.url)).startsWith(join('dist', 'bundle') + sep)
    ? 'bundle'
    : 'src',
);

/** Files started by path other than the worker roles (roles.ts); the build bundles each one. */
export const startedByPath = {
  /** `svc` itself: bin/svc.js imports it. */
  cli: 'cli/main.js',
  /** What bin/svc.js runs first for `svc serve`: the gateway's fork (cli/early-gateway.ts). */
  earlyGateway: 'cli/early-gateway.js',
  /** Runs inside bubblewrap, between the sandbox's network namespace and the proxy. */
  sandboxBridge: 'workers/agent/sandbox/bridge.js',
  /** The agent's glob/grep thread (piscina loads it by file name). */
  searchWorker: 'workers/agent/tools/search/search-worker.js',
} as const;

/** The absolute path of a file of the running code tree, `rel` as in `startedByPath`. */
export function codePath(rel: string): string {
  return join(codeRoot, rel);
}
