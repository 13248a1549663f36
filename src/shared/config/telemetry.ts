import { z } from 'zod';
import { secret } from './secret-marker.js';

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'not a valid HTTP header name');

/**
 * `telemetry:` in config.yml. With `otlp.endpoint` set, each turn is traced (OpenTelemetry, sent
 * as OTLP/HTTP JSON to `<endpoint>/v1/traces`); without it nothing of OpenTelemetry is loaded.
 * `headers` (a collector's API key, say) are secrets: the API shows only their names.
 */
export const telemetryConfigSchema = z
  .object({
    otlp: z
      .object({
        endpoint: z.url({
          protocol: /^https?$/,
          error:
            'telemetry.otlp.endpoint must be an http:// or https:// address (an OTLP/HTTP receiver, e.g. http://127.0.0.1:4318)',
        }),
        headers: z.record(headerName, z.string().max(16_384)).apply(secret).optional(),
        /** The `service.name` the spans carry. */
        service_name: z.string().min(1).max(100).default('svc'),
      })
      .strict()
      .optional(),
  })
  .strict()
  .prefault({});
export type TelemetryConfig = z.infer<typeof telemetryConfigSchema>;

/** Where spans are posted: the endpoint as the OTLP base URL, unless it already names the traces path. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}
