/** The provider layer: two wire protocols behind one interface, and the probe behind /api/config/test. */
export { collect } from './collect.js';
export { ProviderError, type ProviderErrorKind } from './errors.js';
export { probeModel, type ProbeOptions, type ProbeReason, type ProbeResult } from './probe.js';
export { createProvider, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_STALL_MS, type Provider, type ProviderEndpoint, type ProviderOptions } from './provider.js';
export { defaultRetryPolicy, type RetryNotice, type RetryPolicy } from './retry.js';
export { SseParser, readSse, type SseEvent } from './sse.js';
export type * from './types.js';
