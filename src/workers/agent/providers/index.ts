/**
 * The provider layer lives in src/shared/providers (the CLI's doctor probes models with the same
 * code as /api/config/test); the agent imports it through this one door.
 */
export { collect } from '../../../shared/providers/collect.js';
export { ProviderError } from '../../../shared/providers/errors.js';
export { probeModel } from '../../../shared/providers/probe.js';
export {
  createProvider,
  type Provider,
  type ProviderOptions,
} from '../../../shared/providers/provider.js';
export type { RetryNotice } from '../../../shared/providers/retry.js';
export { SseParser, type SseEvent } from '../../../shared/providers/sse.js';
export { emptyUsage } from '../../../shared/providers/types.js';
export type * from '../../../shared/providers/types.js';
