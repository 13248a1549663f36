import { z } from 'zod';

/**
 * A W3C trace context (`traceparent`: version 00, trace id, parent span id, flags), carried in
 * IPC payloads so a span in one process is the parent of spans in the next. All-zero ids are
 * invalid by the standard and refused here, like any other malformed value.
 */
export const traceparentSchema = z
  .string()
  .regex(
    /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/,
    'not a W3C traceparent (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)',
  );
