import { lazyEntries } from './lazy.js';
import { z } from 'zod';
import { browserStepSchema } from '../browser/steps.js';

const tab = z.object({
  index: z.number().int(),
  url: z.string(),
  title: z.string(),
  active: z.boolean(),
});

/** What the browser worker says about its connection. */
export const browserStatusSchema = z.object({
  configured: z.boolean(),
  connected: z.boolean(),
  /** host:port of the DevTools endpoint, or "launch: auto" before one started. */
  endpoint: z.string().nullable(),
  /** "cdp_url", "port" or "launch". */
  mode: z.enum(['cdp_url', 'port', 'launch']).nullable(),
  browser: z.string().nullable(),
  version: z.string().nullable(),
  tabs: z.array(tab),
  /** Why it is not connected, with the fix. */
  reason: z.string().nullable(),
  /** The Chromium svc started itself (launch: auto). */
  launched_pid: z.number().int().nullable(),
});
export type BrowserStatus = z.infer<typeof browserStatusSchema>;

export const browserVerifyResultSchema = z.object({
  ok: z.boolean(),
  endpoint: z.string(),
  browser: z.string().optional(),
  version: z.string().optional(),
  tabs: z.array(tab).optional(),
  error: z.string().optional(),
});

/** The result of one browser action: what happened, and where the page is now. */
export const browserActResultSchema = z.object({
  ok: z.boolean(),
  output: z.string(),
  url: z.string(),
  title: z.string(),
  /** A screenshot, PNG in base64. */
  png_base64: z.string().optional(),
});
export type BrowserActResult = z.infer<typeof browserActResultSchema>;

const ack = z.object({});
const target = {
  cdp_url: z.string().max(2048).optional(),
  port: z.number().int().min(1).max(65535).optional(),
};

/** The request types of the browser feature; ipc.ts spreads them into its table. */
export const browserRequestMakers = {
  /** gateway → browser worker (started on demand). */
  'browser.status': () => ({ payload: z.object({}), result: browserStatusSchema }),
  /** gateway → browser worker: connect to this endpoint (or the configured one) within the bound. */
  'browser.verify': () => ({
    payload: z.object({ ...target, timeout_ms: z.number().int().min(100).max(60_000) }),
    result: browserVerifyResultSchema,
  }),
  /** gateway → supervisor: save a verified endpoint in config.yml (replacing launch), or launch: auto. */
  'config.browser.set': () => ({
    payload: z.object({ ...target, launch: z.literal('auto').optional() }),
    result: ack,
  }),
  /** agent → browser worker: one action on the page. */
  'browser.act': () => ({
    payload: z.object({
      call_id: z.string().min(1).max(128),
      step: browserStepSchema,
      max_chars: z.number().int().min(200).max(100_000).optional(),
      session_id: z.string().max(64).optional(),
    }),
    result: browserActResultSchema,
  }),
  /** agent → browser worker: start keeping the session's successful steps, or stop and answer them (refs made into role selectors). */
  'browser.record': () => ({
    payload: z.object({ session_id: z.string().min(1).max(64), op: z.enum(['start', 'stop']) }),
    result: z.object({ steps: z.array(browserStepSchema), was_recording: z.boolean() }),
  }),
  /** agent → browser worker: the turn was interrupted; the waiting action stops. */
  'browser.cancel': () => ({
    payload: z.object({ call_id: z.string().min(1).max(128) }),
    result: z.object({ cancelled: z.boolean() }),
  }),
} as const;
export const browserRequestDefs = lazyEntries(browserRequestMakers);
