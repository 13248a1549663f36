import { startChild } from '../../shared/child.js';
import { redactConfigSecrets } from '../../shared/config/secrets.js';
import { redact } from '../../shared/log.js';
import { probeModel } from './providers/index.js';

/**
 * An agent worker: runs turns (a later issue) and provider probes. It holds provider keys, so
 * each one is registered for log scrubbing the moment it arrives.
 */
const inflightTurns = 0;
const endpoint = startChild('agent', () => inflightTurns);
endpoint.handle('child.start', ({ config }) => {
  redactConfigSecrets(config);
  return {};
});
endpoint.onEvent((event) => {
  if (event.type === 'config.changed') redactConfigSecrets(event.payload.config);
});
endpoint.handle('agent.probe_model', async (p) => {
  redact(p.api_key);
  const result = await probeModel({ protocol: p.protocol, baseUrl: p.base_url, apiKey: p.api_key, providerId: p.provider }, p.model, { timeoutMs: 30_000 });
  return result.ok ? { ok: true, latency_ms: result.latency_ms } : { ok: false, reason: result.reason, message: result.message };
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {});
