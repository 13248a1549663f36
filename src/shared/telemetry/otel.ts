import {
  type Context,
  ROOT_CONTEXT,
  type Span as OtelSpan,
  SpanStatusCode,
  trace,
  type Tracer as OtelTracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type TelemetryConfig, tracesUrl } from '../config/telemetry.js';
import { log, scrub } from '../log.js';
import { version } from '../version.js';
import type { Span, SpanAttributes, Tracer } from './trace.js';

/**
 * The OpenTelemetry side of trace.ts, imported only when `telemetry.otlp` is configured. The
 * light parts only (API, trace SDK, OTLP/HTTP JSON exporter): not sdk-node, which brings the
 * auto-instrumentations and the metric and log SDKs, none of which svc uses.
 */
type Otlp = NonNullable<TelemetryConfig['otlp']>;

export function otlpTracer(otlp: Otlp, role: string): Tracer {
  const exporter = new OTLPTraceExporter({
    url: tracesUrl(otlp.endpoint),
    headers: otlp.headers ?? {},
    timeoutMillis: 10_000,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': otlp.service_name,
      'service.version': version,
      'svc.role': role,
      'process.pid': process.pid,
    }),
    // Spans also leave at each turn's end (flush); the batch catches what ends between turns.
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 2000 })],
  });
  const tracer = provider.getTracer('svc', version);
  let warned = false;
  return {
    start: (name, attributes, parent) =>
      wrap(
        tracer,
        tracer.startSpan(name, { attributes: clean(attributes) }, parentContext(parent)),
      ),
    flush: () =>
      provider.forceFlush({ timeoutMillis: 10_000 }).catch((err: Error) => {
        // A collector that is down costs one line, not one per turn.
        if (!warned) log.warn('could not send traces to the OTLP endpoint', { error: err.message });
        warned = true;
      }),
    shutdown: () => provider.shutdown(),
  };
}

function parentContext(traceparent: string | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  const [, traceId, spanId, flags] = traceparent.split('-');
  if (!traceId || !spanId || !flags) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
  });
}

function wrap(tracer: OtelTracer, span: OtelSpan): Span {
  const sc = span.spanContext();
  return {
    traceparent: `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, '0')}`,
    child: (name, attributes = {}) =>
      wrap(
        tracer,
        tracer.startSpan(
          name,
          { attributes: clean(attributes) },
          trace.setSpan(ROOT_CONTEXT, span),
        ),
      ),
    set: (attributes) => span.setAttributes(clean(attributes)),
    fail: (message) =>
      span.setStatus({ code: SpanStatusCode.ERROR, message: scrub(message).slice(0, 500) }),
    end: () => span.end(),
  };
}

/** Attributes as OpenTelemetry takes them: no empty values, and strings scrubbed of known secrets. */
function clean(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(attributes))
    if (v !== null && v !== undefined) out[k] = typeof v === 'string' ? scrub(v) : v;
  return out;
}
