import type { TelemetryConfig } from '../config/telemetry.js';
import { log } from '../log.js';

/**
 * Traces of turns, for operators who run an OpenTelemetry collector. This file loads nothing of
 * OpenTelemetry: without `telemetry.otlp` in config every span is `noSpan` and costs a call; with
 * it, otel.ts (and the SDK behind it) is imported on first configuration, in that process only.
 */

export type SpanAttributes = Record<string, string | number | boolean | null | undefined>;

export interface Span {
  /** This span as a W3C traceparent, for children in another process; undefined when not traced. */
  readonly traceparent: string | undefined;
  /** A span under this one, in this process. */
  child(name: string, attributes?: SpanAttributes): Span;
  set(attributes: SpanAttributes): void;
  /** Marks the span failed, with a short reason (no secrets: values are scrubbed all the same). */
  fail(message: string): void;
  end(): void;
}

/** What otel.ts provides once loaded. */
export interface Tracer {
  start(name: string, attributes: SpanAttributes, parent: string | undefined): Span;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export const noSpan: Span = {
  traceparent: undefined,
  child: () => noSpan,
  set() {},
  fail() {},
  end() {},
};

let tracer: Tracer | undefined;
/** The OTLP settings asked for last, as JSON ('' when none): the same settings again change nothing. */
let inForce = '';
/** Changes apply one after another; this settles when the last one asked for is in place. */
let applied: Promise<void> = Promise.resolve();

/**
 * Applies `telemetry:` from config (at a process's start and on each config change). Resolves
 * once spans will be exported; a failure to load the SDK is logged and leaves tracing off.
 */
export function configureTelemetry(cfg: TelemetryConfig, role: string): Promise<void> {
  const otlp = cfg.otlp;
  const want = otlp ? JSON.stringify(otlp) : '';
  if (want === inForce) return applied;
  inForce = want;
  applied = applied.then(async () => {
    if (inForce !== want) return; // asked to change again meanwhile: that change applies
    const old = tracer;
    tracer = undefined;
    await old?.shutdown().catch(() => undefined);
    if (!otlp) return;
    try {
      const { otlpTracer } = await import('./otel.js');
      tracer = otlpTracer(otlp, role);
    } catch (err) {
      log.warn('could not start OpenTelemetry tracing; turns are not traced', {
        error: (err as Error).message,
      });
    }
  });
  return applied;
}

/** Settles once the telemetry settings asked for last are in place (at once when nothing changed). */
export function telemetryReady(): Promise<void> {
  return applied;
}

/** A new span: under `parent` (a traceparent from another process) or a trace of its own. */
export function startSpan(name: string, attributes: SpanAttributes = {}, parent?: string): Span {
  return tracer ? tracer.start(name, attributes, parent) : noSpan;
}

/** Sends the spans that ended so far (at a turn's end, so a trace arrives whole and soon). */
export async function flushTraces(): Promise<void> {
  await tracer?.flush().catch(() => undefined);
}
