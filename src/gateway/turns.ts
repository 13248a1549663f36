import { ApiError } from '../shared/errors.js';
import { isTurnEnd } from '../shared/protocol/event-names.js';
import type { TurnMessage, TurnOrigin } from '../shared/protocol/ipc.js';
import { resolveAttachments } from '../shared/store/uploads.js';
import { flushTraces, type Span, startSpan } from '../shared/telemetry/trace.js';
import type { Deps } from './deps.js';
import type { HubEvent, WsHub } from './ws/hub.js';

/** A started turn and the events it produced; events that came before its id was known are kept. */
export interface TurnWatch {
  turnId: string;
  /** The turn's events so far, in order. */
  events: HubEvent[];
  /** Calls `fn` with each of the turn's events, starting with those already seen. */
  follow(fn: (e: HubEvent) => void): void;
  /** Resolves with the turn's final event. */
  ended: Promise<HubEvent>;
  /** Resolves once the turn stored its user message (turn.started), or ended without doing so. */
  started: Promise<void>;
  stop(): void;
}

/**
 * Starts a turn through the supervisor, listening to the session's topic first: the worker can
 * publish its first events before the start is acknowledged, and none may be lost. The caller
 * found the session; here the attachments are resolved and the resources' servers checked, once:
 * the supervisor and the agent take the turn as it is sent.
 */
export async function startTurn(
  deps: Deps,
  hub: WsHub,
  sessionId: string,
  message: TurnMessage,
  origin: TurnOrigin,
): Promise<TurnWatch> {
  const resolved = resolveAttachments(deps.db, deps.paths, message.attachments);
  if ('missing' in resolved)
    throw new ApiError(
      'invalid_request',
      `The attachment "${resolved.missing}" is not an uploaded file; upload it first with POST /api/upload.`,
      [{ path: 'attachments', message: 'unknown upload' }],
    );
  const servers = deps.config().mcp.servers;
  for (const [i, r] of (message.resources ?? []).entries()) {
    const s = Object.hasOwn(servers, r.server) ? servers[r.server] : undefined;
    if (!s?.enabled)
      throw new ApiError(
        'invalid_request',
        `The resource ${r.uri} names the MCP server "${r.server}", which ${s ? 'is disabled' : 'is not configured'}; GET /api/mcp/servers lists them.`,
        [{ path: `resources.${i}.server`, message: s ? 'disabled server' : 'unknown server' }],
      );
  }
  const early: HubEvent[] = [];
  const mine: HubEvent[] = [];
  let turnId: string | undefined;
  let follower: ((e: HubEvent) => void) | undefined;
  let finish: (e: HubEvent) => void = () => {};
  const ended = new Promise<HubEvent>((resolve) => (finish = resolve));
  let begin: () => void = () => {};
  const started = Promise.race([
    new Promise<void>((resolve) => (begin = resolve)),
    ended.then(() => undefined),
  ]);
  // The root of the turn's trace (telemetry.otlp configured): the supervisor's and the worker's
  // spans go under it. It lasts until the turn's end event, whether or not a client still watches.
  const span = startSpan('svc.turn', { 'svc.session_id': sessionId, 'svc.origin': origin });
  let spanOpen = span.traceparent !== undefined;
  let watching = true;
  const take = (e: HubEvent) => {
    if (!isTurnEvent(e, turnId)) return;
    if (isTurnEnd(e.type) && spanOpen) {
      spanOpen = false;
      endTurnSpan(span, e);
      if (!watching) unlisten();
    }
    if (!watching) return;
    mine.push(e);
    follower?.(e);
    if (e.type === 'turn.started') begin();
    if (isTurnEnd(e.type)) finish(e);
  };
  let listening = true;
  const off = hub.listen(`session:${sessionId}`, (e) =>
    turnId === undefined ? early.push(e) : take(e),
  );
  const unlisten = () => {
    if (listening) off();
    listening = false;
  };
  // Whoever stops watching (a client that went away) lets a pending wait end too, so nothing leaks.
  const stop = () => {
    watching = false;
    if (!spanOpen) unlisten();
    finish({ topic: `session:${sessionId}`, type: 'watch.stopped', seq: 0, data: {} });
  };
  try {
    turnId = (
      await deps.endpoint.request('turn.start', {
        session_id: sessionId,
        message: { ...message, attachments: resolved.attachments },
        origin,
        ...(span.traceparent ? { traceparent: span.traceparent } : {}),
      })
    ).turn_id;
  } catch (err) {
    if (spanOpen) {
      spanOpen = false;
      span.fail((err as Error).message);
      span.end();
      void flushTraces();
    }
    stop();
    throw err;
  }
  span.set({ 'svc.turn_id': turnId });
  for (const e of early.splice(0)) take(e);
  return {
    turnId,
    events: mine,
    follow(fn) {
      for (const e of mine) fn(e);
      follower = fn;
    },
    ended,
    started,
    stop,
  };
}

function isTurnEvent(e: HubEvent, turnId: string | undefined): boolean {
  return (
    typeof e.data === 'object' &&
    e.data !== null &&
    (e.data as { turn_id?: unknown }).turn_id === turnId
  );
}

/** The gateway's span of a turn ends with the turn's end event; the trace is sent at once. */
function endTurnSpan(span: Span, e: HubEvent): void {
  span.set({ 'svc.turn.status': e.type.slice('turn.'.length) });
  if (e.type === 'turn.failed') {
    const d = e.data as { reason?: unknown };
    span.fail(typeof d.reason === 'string' ? d.reason : 'failed');
  }
  span.end();
  void flushTraces();
}
