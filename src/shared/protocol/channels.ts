import { lazyEntries } from './lazy.js';
import { z } from 'zod';
import { platformNameSchema } from '../config/channels.js';

/** One platform as the channels worker sees it. */
export const channelStatusSchema = z.object({
  platform: platformNameSchema,
  /** `needs_login`: the messenger has no credentials yet (scan the QR code). */
  state: z.enum(['starting', 'running', 'stopped', 'error', 'needs_login']),
  /** What went wrong, in words (kept while the adapter retries). */
  error: z.string().nullable(),
  connected_since: z.string().nullable(),
  last_message_at: z.string().nullable(),
  /** Adapter restarts after crashes since the worker started. */
  restarts: z.number().int(),
  /** Who svc is on the platform: the bot's @name, the logged-in WeChat user. */
  account: z.string().nullable(),
});
export type ChannelStatus = z.infer<typeof channelStatusSchema>;

/** A QR-login platform's flow (messenger, whatsapp), as GET /api/channels/{platform}/login answers it. */
export const loginStateSchema = z.object({
  platform: platformNameSchema,
  status: z.enum([
    'idle',
    'pending',
    'scanned',
    'confirmed',
    'expired',
    'failed',
    'cancelled',
    'logged_in',
  ]),
  /** The address the QR code encodes (what the phone opens), and the code as a PNG data URL. */
  qr_url: z.string().nullable(),
  qr_png: z.string().nullable(),
  /** The logged-in account (WeChat user, WhatsApp number) once confirmed (or already logged in). */
  user_id: z.string().nullable(),
  error: z.string().nullable(),
  /** Fresh codes used so far; the platform allows a few before the flow gives up as `expired`. */
  codes: z.number().int(),
  started_at: z.string().nullable(),
});
export type LoginState = z.infer<typeof loginStateSchema>;

const ack = z.object({});
const platform = platformNameSchema;
const chatId = z.string().min(1).max(128);

/** The request types of the channels feature; ipc.ts spreads them into its table. */
export const channelsRequestMakers = {
  /** gateway → supervisor: write a platform's entry (already merged and validated by the gateway). */
  'config.channels.save': () => ({
    payload: z.object({ platform, entry: z.record(z.string(), z.unknown()) }),
    result: ack,
  }),
  /** gateway → supervisor: the entry goes to the trash. */
  'config.channels.delete': () => ({
    payload: z.object({ platform }),
    result: z.object({ trash_id: z.string() }),
  }),
  /** gateway → channels worker. */
  'channels.status': () => ({
    payload: z.object({}),
    result: z.object({ platforms: z.array(channelStatusSchema) }),
  }),
  'channels.send': () => ({
    payload: z.object({ platform, chat_id: chatId, text: z.string().min(1).max(100_000) }),
    result: z.object({ message_id: z.string().nullable() }),
  }),
  'channels.send_file': () => ({
    payload: z.object({
      platform,
      chat_id: chatId,
      path: z.string().min(1).max(4096),
      name: z.string().min(1).max(255),
    }),
    result: z.object({ message_id: z.string().nullable() }),
  }),
  /** A real test message: to `chat_id`, else the most recent bound chat. */
  'channels.test': () => ({
    payload: z.object({ platform, chat_id: chatId.optional() }),
    result: z.object({ chat_id: z.string(), message_id: z.string().nullable() }),
  }),
  /** A pairing was approved or rejected (the store already says so): tell the user. */
  'channels.paired': () => ({
    payload: z.object({ platform, chat_id: chatId, approved: z.boolean() }),
    result: ack,
  }),
  'channels.login.start': () => ({
    payload: z.object({ platform, force: z.boolean() }),
    result: loginStateSchema,
  }),
  'channels.login.get': () => ({ payload: z.object({ platform }), result: loginStateSchema }),
  /** Cancels a running flow, or logs out when logged in. */
  'channels.login.cancel': () => ({ payload: z.object({ platform }), result: loginStateSchema }),
} as const;
export const channelsRequestDefs = lazyEntries(channelsRequestMakers);
