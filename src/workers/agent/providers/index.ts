/**
 * The provider layer lives in src/shared/providers (the CLI's doctor probes models with the same
 * code as /api/config/test); the agent imports it through this one door.
 */
export { collect } from '../../../shared/providers/collect.js';
export { ProviderError, type ProviderErrorKind } from '../../../shared/providers/errors.js';
export { probeModel, type ProbeOptions, type ProbeReason, type ProbeResult } from '../../../shared/providers/probe.js';
export { createProvider, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_STALL_MS, type Provider, type ProviderEndpoint, type ProviderOptions } from '../../../shared/providers/provider.js';
export { defaultRetryPolicy, type RetryNotice, type RetryPolicy } from '../../../shared/providers/retry.js';
export { SseParser, readSse, type SseEvent } from '../../../shared/providers/sse.js';
export { emptyUsage } from '../../../shared/providers/types.js';
export type * from '../../../shared/providers/types.js';
