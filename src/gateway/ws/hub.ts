import { log } from '../../shared/log.js';
import {
  isDelta,
  WS_EVENT_MAX_BYTES,
  wsEventProblem,
  type Publish,
} from '../../shared/protocol/events.js';
import type { EventPayload, WsState } from '../../shared/protocol/ipc.js';
import { version } from '../../shared/version.js';
import { capped } from '../../shared/ws-publish.js';
import type { AuthDecision } from '../auth.js';
import type { ConnectionCap } from '../conn-cap.js';
import type { EngineSocket, HttpEngine, RequestInfo } from '../engine/types.js';
import { apiErrorOf } from '../error-map.js';
import { type CommandFrame, parseClientFrame, resyncFrame } from './frames.js';
import { TopicHistory } from './history.js';

interface Conn {
  local: boolean;
  /** The upgrade presented the access key: this socket may answer approvals. */
  keyed: boolean;
  topics: Set<string>;
}

/** Who sent a command: a local socket, and whether it presented the access key. */
export interface Caller {
  local: boolean;
  keyed: boolean;
}

/** A client with this much unsent data is behind: it is told to resync instead of being fed more. */
const LAG_BYTES = 4 * 1024 * 1024;

export interface HubEvent {
  topic: string;
  type: string;
  seq: number;
  data: unknown;
}

/**
 * /ws: authenticates the upgrade like any request, then carries `{topic, type, seq, data}` events.
 * Each topic numbers its events and keeps the last ones (TopicHistory), so a client that
 * reconnects with `since` gets what it missed, or is told to resync when that is gone. Streaming
 * deltas are batched; a client too far behind is told to resync rather than silently skipped. In-process
 * listeners (SSE streams, waiting HTTP calls) see exactly the frames WebSocket clients see.
 */
export class WsHub {
  /** The numbering's name (TopicHistory.epoch), sent in `hello` and `subscribed`. */
  readonly epoch: string;
  /** Set once the numbering went to a successor: events go there instead (see handOff). */
  private forward: ((topic: string, type: string, data: unknown) => void) | undefined;
  private readonly history: TopicHistory;
  private readonly sockets = new Set<EngineSocket<Conn>>();
  private readonly subscribers = new Map<string, Set<EngineSocket<Conn>>>();
  private readonly listeners = new Map<string, Set<(e: HubEvent) => void>>();
  private readonly taps = new Set<(e: HubEvent) => void>();
  /** Runs client commands (turn, interrupt, approve); answers the frame to send back. */
  onCommand: ((frame: CommandFrame, who: Caller) => Promise<Record<string, unknown>>) | undefined;

  constructor(
    engine: HttpEngine,
    opts: {
      frameLimit: number;
      authorize: (req: RequestInfo) => AuthDecision;
      resume?: WsState;
      cap?: ConnectionCap;
      /** How long a topic nobody follows keeps its history after its last event. */
      idleTopicMs?: () => number;
    },
  ) {
    this.history = new TopicHistory({
      resume: opts.resume,
      idleTopicMs: opts.idleTopicMs,
      followed: (topic) =>
        (this.subscribers.get(topic)?.size ?? 0) > 0 || this.listeners.has(topic),
    });
    this.epoch = this.history.epoch;
    engine.ws<Conn>({
      maxPayload: opts.frameLimit,
      upgrade: (req) => {
        const decision = opts.authorize(req);
        const full = decision.ok ? opts.cap?.upgrade(this.sockets.size) : undefined;
        if (full) return { ok: false, error: full };
        return decision.ok
          ? {
              ok: true,
              data: { local: decision.local, keyed: decision.via === 'key', topics: new Set() },
            }
          : decision;
      },
      open: (ws) => {
        this.sockets.add(ws);
        ws.send(
          JSON.stringify({
            topic: 'server',
            type: 'hello',
            seq: 0,
            data: { version, epoch: this.epoch, local: ws.data.local },
          }),
        );
      },
      message: (ws, message, isBinary) => this.onFrame(ws, message, isBinary),
      close: (ws) => {
        this.sockets.delete(ws);
        for (const t of ws.data.topics) this.unsubscribe(ws, t);
      },
    });
  }

  /** Publishes an event of the catalogue. */
  readonly publish: Publish = (topic, type, data) => this.emit(topic, type, data);

  /**
   * A piece of streamed text from an agent worker (IPC `ws.delta`): merged there already and
   * checked by the IPC parse against the catalogue's delta schema, so it goes out as it is.
   */
  publishDelta(e: EventPayload<'ws.delta'>): void {
    this.emit(e.topic, e.type, { turn_id: e.turn_id, delta: e.delta });
  }

  /**
   * Publishes an event another process sent (IPC `ws.publish`): checked against the catalogue
   * first, since its type was only checked where it was compiled; one that does not fit is
   * logged and dropped, never sent to clients.
   */
  publishChecked(topic: string, type: string, data: unknown): void {
    const problem = wsEventProblem(topic, type, data);
    if (problem)
      return void log.warn('dropped a /ws event that does not fit the catalogue', {
        topic,
        type,
        problem,
      });
    this.emit(topic, type, data);
  }

  /** Hears every event on every topic as clients get it (metrics); returns the way to stop. */
  tap(fn: (e: HubEvent) => void): () => void {
    this.taps.add(fn);
    return () => this.taps.delete(fn);
  }

  /** Hears every event on a topic as clients get it; returns the way to stop listening. */
  listen(topic: string, fn: (e: HubEvent) => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(topic);
    };
  }

  /** The last seq given on a topic (the floor before its first event, 0 at first). */
  seqOf(topic: string): number {
    return this.history.seqOf(topic);
  }

  /** Topic subscriptions over all WebSockets. */
  get subscriptions(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  /** Open WebSockets. */
  get count(): number {
    return this.sockets.size;
  }

  /** Closes every WebSocket (restart handover); returns how many there were. */
  closeAll(code: number, reason: string): number {
    const n = this.sockets.size;
    for (const ws of [...this.sockets]) ws.end(code, reason);
    return n;
  }

  /**
   * Gives this hub's numbering to a successor gateway (on a restart): every later event is passed
   * to `forward` unnumbered, so the successor numbers it after the last seq here and no number is
   * used twice.
   */
  handOff(forward: (topic: string, type: string, data: unknown) => void): WsState {
    this.forward = forward;
    return this.history.handOff();
  }

  /** The restart was abandoned: this hub numbers its events again. */
  takeBack(): void {
    this.forward = undefined;
  }

  private emit(topic: string, type: string, data: unknown): void {
    if (this.forward) return this.forward(topic, type, data);
    const seq = this.history.next(topic);
    let event: HubEvent = { topic, type, seq, data };
    let frame = JSON.stringify(event);
    // The cap, for every event whoever published it: a frame over 4 KB (a delta aside) goes out cut.
    if (
      frame.length * 3 > WS_EVENT_MAX_BYTES &&
      !isDelta(type) &&
      Buffer.byteLength(frame) > WS_EVENT_MAX_BYTES
    ) {
      event = { topic, type, seq, data: capped(topic, type, data) };
      frame = JSON.stringify(event);
    }
    this.history.record(topic, seq, frame);
    for (const ws of this.subscribers.get(topic) ?? []) {
      if (ws.bufferedAmount() > LAG_BYTES) {
        this.drop(ws, topic, 'you fell too far behind; reload this topic and subscribe again');
        continue;
      }
      ws.cork(() => ws.send(frame));
    }
    for (const fn of this.listeners.get(topic) ?? []) fn(event);
    for (const fn of this.taps) fn(event);
    // A deleted session's topic has nothing more to replay; it goes once its last event is out.
    if (type === 'session.deleted' && topic.startsWith('session:')) this.history.forget(topic);
  }

  /** Takes a socket off a topic; a topic left with no subscriber keeps no empty set. */
  private unsubscribe(ws: EngineSocket<Conn>, topic: string): void {
    const set = this.subscribers.get(topic);
    if (!set) return;
    set.delete(ws);
    if (set.size === 0) this.subscribers.delete(topic);
  }

  /** Forgets topics idle for the idle time (5 min by default) that nobody follows. */
  evictIdle(now = Date.now()): number {
    return this.history.evictIdle(now);
  }

  /**
   * What the hub keeps (`svc status --json`, tests, the benchmark): topics, kept events and their
   * bytes, and how many topics it forgot.
   */
  stats(): { topics: number; events: number; bytes: number; forgotten: number } {
    return this.history.stats();
  }

  /** Stops feeding a socket a topic and tells it why; it resubscribes (with `since`) or reloads. */
  private drop(ws: EngineSocket<Conn>, topic: string, reason: string): void {
    this.unsubscribe(ws, topic);
    ws.data.topics.delete(topic);
    ws.cork(() => ws.send(resyncFrame(topic, this.seqOf(topic), reason)));
  }

  private onFrame(ws: EngineSocket<Conn>, message: Buffer, isBinary: boolean): void {
    const read = parseClientFrame(message, isBinary);
    if ('error' in read) return void ws.send(read.error);
    const parsed = read.frame;
    const conn = ws.data;
    if (parsed.type === 'ping') return void ws.send(JSON.stringify({ type: 'pong' }));
    if (parsed.type === 'turn' || parsed.type === 'interrupt' || parsed.type === 'approve')
      return this.command(ws, parsed, conn);
    if (parsed.type === 'unsubscribe') {
      for (const t of parsed.topics) {
        this.unsubscribe(ws, t);
        conn.topics.delete(t);
      }
      return void ws.send(JSON.stringify({ type: 'unsubscribed', topics: parsed.topics }));
    }
    const seq: Record<string, number> = {};
    ws.cork(() => {
      for (const t of parsed.topics) {
        const since = parsed.since?.[t];
        if (since !== undefined) for (const f of this.history.replay(t, since)) ws.send(f);
        let set = this.subscribers.get(t);
        if (!set) this.subscribers.set(t, (set = new Set()));
        set.add(ws);
        conn.topics.add(t);
        seq[t] = this.seqOf(t);
      }
      ws.send(
        JSON.stringify({ type: 'subscribed', topics: parsed.topics, seq, epoch: this.epoch }),
      );
    });
  }

  private command(ws: EngineSocket<Conn>, frame: CommandFrame, who: Caller): void {
    const send = (reply: Record<string, unknown>) => {
      if (this.sockets.has(ws))
        ws.cork(() =>
          ws.send(
            JSON.stringify({
              ...reply,
              ...(frame.request_id ? { request_id: frame.request_id } : {}),
            }),
          ),
        );
    };
    if (!this.onCommand)
      return send({
        type: 'error',
        error: { code: 'unavailable', message: 'The server is not ready for commands yet.' },
      });
    this.onCommand(frame, { local: who.local, keyed: who.keyed }).then(send, (err: unknown) => {
      const e = apiErrorOf(err);
      send({ type: 'error', error: { code: e.code, message: e.message } });
    });
  }
}
