import { z } from 'zod';
import { turnUsage } from '../../../shared/store/usage.js';
import {
  approvalDecision,
  MAX_ATTACHED_RESOURCES,
  type ApprovalDecision,
  type TurnMessage,
} from '../../../shared/protocol/ipc.js';
import { mcpResourceRef } from '../../../shared/protocol/mcp.js';
import { ApiError } from '../../../shared/errors.js';
import { listMessages, type Message } from '../../../shared/store/messages.js';
import { getTurnRow, nextTurnFirstSeq, type TurnRow } from '../../../shared/store/turns.js';
import { createSession, requireSession } from '../../../shared/store/sessions.js';
import type { Deps } from '../../deps.js';
import { requireKey } from '../../person.js';
import type { RequestInfo, Responder } from '../../http.js';
import {
  approvalAnswered,
  chatCreated,
  chatOutcome,
  interruptResult,
  pendingApprovals,
  turnAccepted,
  turnOutcomeSchema,
  type TurnAccepted,
  type TurnOutcome,
} from '../../../shared/protocol/answers.js';

type ChatOutcome = z.infer<typeof chatOutcome>;
const sseAnswer = {
  description: 'The turn as server-sent events (with Accept: text/event-stream)',
  contentType: 'text/event-stream',
};
import { route, type Route, type TypedReply } from '../../route.js';
import { startTurn, type TurnWatch } from '../../turns.js';
import { isTurnEnd } from '../../../shared/protocol/event-names.js';
import type { HubEvent, WsHub } from '../../ws/hub.js';
import { checkSettings, settingsShape } from './sessions.js';
import { turnEnd } from './turns.js';

const turnFields = {
  message: z.string().min(1, 'the message must not be empty').max(200_000),
  attachments: z.array(z.string().min(1).max(255)).max(20, 'at most 20 attachments').default([]),
  /** MCP resources to read and give the model with the message (GET /api/mcp/servers/{name}/resources). */
  resources: z
    .array(z.strictObject(mcpResourceRef.shape))
    .max(MAX_ATTACHED_RESOURCES, `at most ${MAX_ATTACHED_RESOURCES} resources`)
    .optional(),
};
const turnBody = z.strictObject(turnFields);
const chatBody = z
  .strictObject({
    ...settingsShape,
    message: turnFields.message,
    attachments: turnFields.attachments,
    resources: turnFields.resources,
  })
  .partial();
const waitQuery = z.object({
  wait: z.enum(['true', 'false'], 'wait is true or false').default('true'),
});

const SSE_HEARTBEAT_MS = 15_000;

/**
 * Chats and turns. One turn, three ways to answer: wait and answer JSON (default), stream the
 * turn's events as SSE (`Accept: text/event-stream`), or 202 at once (`?wait=false`).
 */
export function chatRoutes(deps: Deps, hub: WsHub): Route[] {
  const run = async (
    req: RequestInfo,
    responder: Responder,
    sessionId: string,
    message: TurnMessage,
    wait: boolean,
    created = false,
  ): Promise<TypedReply<ChatOutcome | TurnOutcome | TurnAccepted> | undefined> => {
    const watch = await startTurn(deps, hub, sessionId, message, 'http');
    if (!wait) {
      // A new chat is shown with its first message in it: answer once the turn stored it.
      if (created) await watch.started;
      watch.stop();
      return {
        status: 202,
        body: {
          session_id: sessionId,
          turn_id: watch.turnId,
          status: 'running',
          ...(created ? { session: requireSession(deps.db, sessionId) } : {}),
        },
      };
    }
    if ((req.headers['accept'] ?? '').includes('text/event-stream'))
      return streamSse(responder, watch, hub, sessionId);
    responder.onAbort(() => watch.stop());
    const last = await watch.ended;
    watch.stop();
    // The session as it is now (its messages counted), not as it was created.
    return {
      status: created ? 201 : 200,
      body: {
        ...turnResult(deps, sessionId, watch, last),
        ...(created ? { session: requireSession(deps.db, sessionId) } : {}),
      },
    };
  };

  return [
    route({
      method: 'POST',
      path: '/api/chat',
      summary:
        'Creates a chat (a session; settings optional) and, given a message, runs its first turn. Modes as for /api/chat/{id}/turn.',
      body: chatBody,
      query: waitQuery,
      status: 201,
      response: z.union([chatOutcome, chatCreated]),
      others: {
        200: sseAnswer,
        202: { description: 'Accepted (?wait=false): the turn runs', schema: turnAccepted },
      },
      errors: [409],
      handler: async ({ body, query, req, responder }) => {
        const { message, attachments, resources, ...settings } = body;
        const session = createSession(deps.db, checkSettings(deps, settings));
        deps.publish('sessions', 'session.created', session);
        if (message === undefined)
          return { status: 201, body: { session_id: session.id, session } };
        // A new chat's run answers with the session (created = true).
        return run(
          req,
          responder,
          session.id,
          { text: message, attachments: attachments ?? [], ...(resources ? { resources } : {}) },
          query.wait === 'true',
          true,
        ) as Promise<TypedReply<ChatOutcome | TurnAccepted> | undefined>;
      },
    }),
    route({
      method: 'POST',
      path: '/api/chat/:id/turn',
      summary:
        'Sends a turn. Waits and answers the reply and new messages as JSON; with Accept: text/event-stream streams the turn as SSE; with ?wait=false answers 202 with the turn id. 409 turn_in_progress while one runs; 503 draining during a restart.',
      body: turnBody,
      query: waitQuery,
      response: turnOutcomeSchema,
      others: {
        202: { description: 'Accepted (?wait=false): the turn runs', schema: turnAccepted },
      },
      produces: 'text/event-stream',
      errors: [409],
      handler: ({ params, body, query, req, responder }) => {
        requireSession(deps.db, params.id ?? '');
        return run(
          req,
          responder,
          params.id ?? '',
          {
            text: body.message,
            attachments: body.attachments,
            ...(body.resources ? { resources: body.resources } : {}),
          },
          query.wait === 'true',
        );
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/turns/:turn_id',
      summary:
        'One turn: status (running, completed, failed with error.reason, interrupted), reply, stop_reason, usage and the messages it added, as a waiting POST /api/chat/{id}/turn answers; for turns started with ?wait=false.',
      response: turnOutcomeSchema,
      handler: ({ params }) => {
        requireSession(deps.db, params.id ?? '');
        const row = getTurnRow(deps.db, params.turn_id ?? '');
        if (!row || row.session_id !== params.id) {
          throw new ApiError(
            'not_found',
            `There is no turn ${JSON.stringify(params.turn_id)} in session ${params.id}; a turn id is what POST /api/chat/{id}/turn answered (turn_id).`,
          );
        }
        return { body: turnOutcome(deps, row) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/approvals',
      summary:
        "The tool calls of the running turn that wait for the user's approval (empty when none).",
      response: pendingApprovals,
      handler: async ({ params }) => {
        requireSession(deps.db, params.id ?? '');
        return {
          body: await deps.endpoint.request('approval.list', { session_id: params.id ?? '' }),
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/sessions/:id/approvals/:approval_id',
      summary:
        'Answers a tool call waiting for approval: allow_once, allow_session (this session, same tool and command or path), or deny. Needs the access key even on loopback (403 key_required without it): a program on this machine must not answer for the person.',
      work: false,
      body: z.strictObject({ decision: approvalDecision }),
      response: approvalAnswered,
      errors: [409],
      handler: async ({ params, body, keyed }) => {
        requireKey(keyed, 'Answering an approval');
        requireSession(deps.db, params.id ?? '');
        await answerApproval(deps, params.id ?? '', params.approval_id ?? '', body.decision);
        return { body: { approval_id: params.approval_id, decision: body.decision } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/chat/:id/interrupt',
      summary: 'Stops the running turn of a session; what it already committed is kept.',
      work: false,
      body: z.strictObject({}),
      response: interruptResult,
      handler: async ({ params }) => {
        requireSession(deps.db, params.id ?? '');
        const r = await deps.endpoint.request('turn.interrupt', { session_id: params.id ?? '' });
        return { body: r };
      },
    }),
  ];
}

/** The /ws commands: a turn (answered when it starts) and an interrupt. */
export function chatCommands(deps: Deps, hub: WsHub): NonNullable<WsHub['onCommand']> {
  return async (frame, who) => {
    requireSession(deps.db, frame.session_id);
    if (frame.type === 'approve') {
      requireKey(who.keyed, 'Answering an approval');
      await answerApproval(deps, frame.session_id, frame.approval_id, frame.decision);
      return {
        type: 'approval.answered',
        session_id: frame.session_id,
        approval_id: frame.approval_id,
        decision: frame.decision,
      };
    }
    if (frame.type === 'interrupt') {
      const r = await deps.endpoint.request('turn.interrupt', { session_id: frame.session_id });
      return { type: 'interrupt.result', session_id: frame.session_id, ...r };
    }
    const watch = await startTurn(deps, hub, frame.session_id, frame.message, 'ws');
    watch.stop();
    return { type: 'turn.accepted', session_id: frame.session_id, turn_id: watch.turnId };
  };
}

async function answerApproval(
  deps: Deps,
  sessionId: string,
  approvalId: string,
  decision: ApprovalDecision,
): Promise<void> {
  await deps.endpoint.request('approval.answer', {
    session_id: sessionId,
    approval_id: approvalId,
    decision,
  });
}

const usageSchema = z.record(z.string(), z.number());

/**
 * A turn as the API tells it, from its row: how it ended, its reply and the messages it added.
 * The waiting call and GET /api/sessions/{id}/turns/{turn_id} answer the same thing.
 */
function turnOutcome(deps: Deps, row: TurnRow) {
  let messages: Message[] = [];
  if (row.first_seq !== null) {
    const next = nextTurnFirstSeq(deps.db, row.session_id, row.first_seq);
    messages = listMessages(deps.db, row.session_id, {
      limit: 200,
      afterSeq: row.first_seq - 1,
    }).items.filter((m) => next === null || m.seq < next);
  }
  let usage: Record<string, number> | null = null;
  try {
    usage = row.usage === null ? null : (usageSchema.safeParse(JSON.parse(row.usage)).data ?? null);
  } catch {
    usage = null;
  }
  return {
    session_id: row.session_id,
    turn_id: row.id,
    status: row.status,
    origin: row.origin,
    started_at: row.started_at,
    ended_at: row.ended_at,
    reply: row.reply,
    stop_reason: row.stop_reason,
    usage,
    spend: turnUsage(deps.db, row.id),
    ...turnEnd(row),
    messages,
  };
}

const endEvent = z.object({
  status: z.enum(['completed', 'failed', 'interrupted']),
  reason: z.string().optional(),
  message: z.string().optional(),
});

/** The turn's outcome from its row; a row its end could not be written to (a full disk) takes the end the clients were told. */
function turnResult(
  deps: Deps,
  sessionId: string,
  watch: TurnWatch,
  last?: { type: string; data: unknown },
) {
  const row = getTurnRow(deps.db, watch.turnId);
  if (!row || row.session_id !== sessionId)
    throw new ApiError('internal', `The turn ${watch.turnId} ended but is not on record.`);
  const told = last && isTurnEnd(last.type) ? endEvent.safeParse(last.data) : undefined;
  if (row.status !== 'running' || !told?.success) return turnOutcome(deps, row);
  return turnOutcome(deps, {
    ...row,
    status: told.data.status,
    reason: told.data.reason ?? null,
    error: told.data.message ?? null,
  });
}

/** SSE: one `event:` per turn event, ending after the turn's final event; comments keep proxies awake. */
function streamSse(
  responder: Responder,
  watch: TurnWatch,
  hub: WsHub,
  sessionId: string,
): undefined {
  const topic = `session:${sessionId}`;
  if (
    !responder.begin(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
    })
  ) {
    watch.stop();
    return undefined;
  }
  const beat = setInterval(() => responder.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
  const close = () => {
    clearInterval(beat);
    watch.stop();
  };
  responder.onAbort(close);
  const sendEvent = (e: HubEvent & { turn_id?: string }) =>
    responder.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  // Shaped like every other event; its seq is where the topic stood when the turn was taken, so
  // the turn's own events follow it in order. The top-level turn_id is the shape release 0.1.0
  // documented (fields are added, never moved: test/fixtures/contract pins each release's).
  const first = watch.events[0];
  sendEvent({
    topic,
    type: 'turn.accepted',
    seq: first ? first.seq - 1 : hub.seqOf(topic),
    data: { session_id: sessionId, turn_id: watch.turnId },
    turn_id: watch.turnId,
  });
  watch.follow(sendEvent);
  void watch.ended.then(() => {
    close();
    responder.end();
  });
  return undefined;
}
