import { z } from 'zod';
import { firstIssue } from '../../shared/errors.js';
import { topicKinds } from '../../shared/protocol/events.js';
import { approvalDecision, turnMessageSchema } from '../../shared/protocol/ipc.js';

/** What a /ws client may send, and the frames that answer a bad one or tell it to resync. */

/** Topic kinds other than `session`, which names one session (`session:<id>`). */
const plainKinds = topicKinds.filter((k) => k !== 'session');
const topicPattern = new RegExp(`^(${plainKinds.join('|')}|session:[A-Za-z0-9_-]{1,64})$`);

export const topicSchema = z
  .string()
  .regex(topicPattern, `a topic is ${plainKinds.join(', ')} or session:<id>`);

/** Client frames that ask the server to do something; answered by the command handler. */
export const commandFrame = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('turn'),
    session_id: z.string().min(1).max(64),
    message: turnMessageSchema,
    request_id: z.string().max(64).optional(),
  }),
  z.object({
    type: z.literal('interrupt'),
    session_id: z.string().min(1).max(64),
    request_id: z.string().max(64).optional(),
  }),
  z.object({
    type: z.literal('approve'),
    session_id: z.string().min(1).max(64),
    approval_id: z.string().min(1).max(64),
    decision: approvalDecision,
    request_id: z.string().max(64).optional(),
  }),
]);
export type CommandFrame = z.infer<typeof commandFrame>;

const clientFrame = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('subscribe'),
    topics: z.array(topicSchema).min(1).max(100),
    since: z.record(z.string(), z.number().int().min(0)).optional(),
  }),
  z.object({ type: z.literal('unsubscribe'), topics: z.array(topicSchema).min(1).max(100) }),
  z.object({ type: z.literal('ping') }),
  ...commandFrame.options,
]);
export type ClientFrame = z.infer<typeof clientFrame>;

/** A client's frame, or the error frame that tells it why the frame was ignored. */
export function parseClientFrame(
  message: Buffer,
  isBinary: boolean,
): { frame: ClientFrame } | { error: string } {
  try {
    if (isBinary) throw new Error('frames are JSON text');
    return { frame: clientFrame.parse(JSON.parse(message.toString('utf8'))) };
  } catch (err) {
    const problem = err instanceof z.ZodError ? describeIssue(err) : (err as Error).message;
    return {
      error: JSON.stringify({
        type: 'error',
        error: {
          code: 'invalid_request',
          message: `Ignored a frame: ${problem}. Frames are JSON such as {"type":"subscribe","topics":["server"]}.`,
        },
      }),
    };
  }
}

/** Tells a client it no longer follows a topic from where it was; it reloads and subscribes again. */
export const resyncFrame = (topic: string, seq: number, reason: string): string =>
  JSON.stringify({ type: 'resync', topic, seq, reason });

const describeIssue = (err: z.ZodError): string => firstIssue(err, 'frame', 'invalid frame');
