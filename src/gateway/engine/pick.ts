import type { EngineName, HttpEngine } from './types.js';
import { loadUws } from './uws.js';

/**
 * Which engine serves: `SVC_HTTP_ENGINE=uws|node` forces one, else native uWS when its binary
 * loads on this runtime and `node:http` otherwise. Throws one sentence when the forced choice
 * cannot run (or is no engine); the Node engine's module (and `ws`) loads only when chosen.
 */
export function chooseEngine(forced = process.env.SVC_HTTP_ENGINE): EngineName {
  const want = forced?.trim() ?? '';
  if (want !== '' && want !== 'uws' && want !== 'node') throw new Error(`SVC_HTTP_ENGINE=${want} is not an engine; use "uws" or "node" (or leave it unset to pick by runtime)`);
  if (want === 'node') return 'node';
  const uws = loadUws();
  if ('mod' in uws) return 'uws';
  if (want === 'uws') throw new Error(`SVC_HTTP_ENGINE=uws cannot run here: ${uws.error}; unset it to use the node:http engine`);
  return 'node';
}

export async function createEngine(name: EngineName): Promise<HttpEngine> {
  if (name === 'uws') return new (await import('./uws.js')).UwsEngine();
  return new (await import('./node.js')).NodeEngine();
}
