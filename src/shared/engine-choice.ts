import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

let loaded: { mod: typeof UWS } | { error: string } | undefined;

/**
 * The native uWebSockets.js addon for this runtime, or why it cannot load. The package's own
 * entry falls back to a JavaScript imitation that leaves most of the API unimplemented, so the
 * binary is loaded directly and that fallback is never reached. (Shared: `svc doctor` says
 * which engine would serve with the same rule the gateway serves by.)
 */
export function loadUws(): { mod: typeof UWS } | { error: string } {
  if (loaded) return loaded;
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    const dir = dirname(require.resolve('uWebSockets.js/package.json'));
    loaded = { mod: require(join(dir, 'binaries', file)) as typeof UWS };
  } catch (err) {
    const first = ((err as Error).message ?? String(err)).split('\n')[0];
    loaded = {
      error: `the uWebSockets.js package has no native binary for Node ${process.versions.node} (${file}): ${first}`,
    };
  }
  return loaded;
}

/**
 * Which engine serves: `SVC_HTTP_ENGINE=uws|node` forces one, else native uWS when its binary
 * loads on this runtime and `node:http` otherwise. Throws one sentence when the forced choice
 * cannot run (or is no engine).
 */
export function chooseEngine(forced = process.env.SVC_HTTP_ENGINE): 'uws' | 'node' {
  const want = forced?.trim() ?? '';
  if (want !== '' && want !== 'uws' && want !== 'node')
    throw new Error(
      `SVC_HTTP_ENGINE=${want} is not an engine; use "uws" or "node" (or leave it unset to pick by runtime)`,
    );
  if (want === 'node') return 'node';
  const uws = loadUws();
  if ('mod' in uws) return 'uws';
  if (want === 'uws')
    throw new Error(
      `SVC_HTTP_ENGINE=uws cannot run here: ${uws.error}; unset it to use the node:http engine`,
    );
  return 'node';
}
