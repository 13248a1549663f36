import type { EngineName, HttpEngine } from './types.js';

/** The choice itself is shared: `svc doctor` says which engine would serve by the same rule. */
export { chooseEngine } from '../../shared/engine-choice.js';

export async function createEngine(name: EngineName): Promise<HttpEngine> {
  if (name === 'uws') return new (await import('./uws.js')).UwsEngine();
  return new (await import('./node.js')).NodeEngine();
}
