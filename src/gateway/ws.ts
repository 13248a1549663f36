import { firstIssue } from '../shared/errors.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { log } from '../shared/log.js';
import {
  isDelta,
  topicKinds,
  WS_EVENT_MAX_BYTES,
  wsEventProblem,
  type Publish,
} from '../shared/protocol/events.js';
import { capped } from '../shared/ws-publish.js';
import { apiErrorOf } from './error-map.js';
import {
  approvalDecision,
  turnMessageSchema,
  type EventPayload,
  type WsState,
} from '../shared/protocol/ipc.js';
import { version } from '../shared/version.js';
import type { AuthDecision } from './auth.js';
import type { ConnectionCap } from './conn-cap.js';
import type { EngineSocket, HttpEngine, RequestInfo } from './engine/types.js';

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

/** Events kept per topic for clients that reconnect with `since`: at most this many… */
const RING = 1024;
/** …and at most this many bytes of frames (a topic of long tool results would otherwise keep megabytes). */
export const RING_BYTES = 256 * 1024;
/**
 * A topic nobody listens to and nothing was published on for this long is forgotten (its history
 * and seq), unless config says otherwise (limits.ws_idle_topic_seconds).
 */
export const IDLE_TOPIC_MS = 5 * 60_000;
/** Idle topics are looked for at most this often, and at least once a minute. */
const SWEEP_MIN_MS = 1000;
const SWEEP_MAX_MS = 60_000;
/** A client with this much unsent data is behind: it is told to resync instead of being fed more. */
const LAG_BYTES = 4 * 1024 * 1024;
/** At most this much of the kept frames goes to a successor gateway (newest first); older `since` values resync. */
const HANDOFF_BYTES = 16 * 1024 * 1024;

interface Stored {
  seq: number;
  frame: string;
}

export interface HubEvent {
  topic: string;
  type: string;
  seq: number;
  data: unknown;
}

/**
 * /ws: authenticates the upgrade like any request, then carries `{topic, type, seq, data}` events.
 * Each topic numbers its events and keeps the last ones, so a client that reconnects with
 * `since` gets what it missed, or is told to resync when that is gone. Streaming deltas are
 * batched; a client too far behind is told to resync rather than silently skipped. In-process
 * listeners (SSE streams, waiting HTTP calls) see exactly the frames WebSocket clients see.
 */
export class WsHub {
  /**
   * Names this numbering: kept across a restart (the successor takes it over with the seqs and
   * frames), new after a crash, where a `since` from before cannot be trusted.
   */
  readonly epoch: string;
  /** Set once the numbering went to a successor: events go there instead (see handOff). */
  private forward: ((topic: string, type: string, data: unknown) => void) | undefined;
  private readonly seqs = new Map<string, number>();
  private readonly rings = new Map<string, Stored[]>();
  /** Per topic: the bytes of its kept frames and when it last had an event. */
  private readonly ringBytes = new Map<string, number>();
  private readonly lastEventAt = new Map<string, number>();
  /**
   * Above every seq a forgotten topic had: a topic's numbering starts again from here, so a
   * `since` from before it was forgotten is never taken for a point in the new numbering.
   */
  private floor = 0;
  /** Topics forgotten since this hub started (idle, or deleted). */
  private forgotten = 0;
  private readonly idleMs: () => number;
  private readonly sweeper: ReturnType<typeof setInterval>;
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
    this.epoch = opts.resume?.epoch ?? randomUUID();
    this.floor = opts.resume?.floor ?? 0;
    this.idleMs = opts.idleTopicMs ?? (() => IDLE_TOPIC_MS);
    for (const t of opts.resume?.topics ?? []) {
      this.seqs.set(t.topic, t.seq);
      this.lastEventAt.set(t.topic, Date.now());
      for (const f of t.frames.slice(-RING)) this.keep(t.topic, f);
    }
    // Unref'd: the sweep never keeps the process alive.
    const every = Math.min(SWEEP_MAX_MS, Math.max(SWEEP_MIN_MS, this.idleMs() / 4));
    this.sweeper = setInterval(() => this.evictIdle(), every);
    this.sweeper.unref();
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
    return this.seqs.get(topic) ?? this.floor;
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
    let budget = HANDOFF_BYTES;
    const topics: WsState['topics'] = [];
    for (const [topic, seq] of this.seqs) {
      const ring = this.rings.get(topic) ?? [];
      let from = ring.length;
      while (from > 0 && budget >= ring[from - 1]!.frame.length)
        budget -= ring[--from]!.frame.length;
      topics.push({ topic, seq, frames: ring.slice(from) });
    }
    return { epoch: this.epoch, topics, floor: this.floor };
  }

  /** The restart was abandoned: this hub numbers its events again. */
  takeBack(): void {
    this.forward = undefined;
  }

  private emit(topic: string, type: string, data: unknown): void {
    if (this.forward) return this.forward(topic, type, data);
    const seq = this.seqOf(topic) + 1;
    this.seqs.set(topic, seq);
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
    this.keep(topic, { seq, frame });
    this.lastEventAt.set(topic, Date.now());
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
    if (type === 'session.deleted' && topic.startsWith('session:')) this.forget(topic);
  }

  /** Takes a socket off a topic; a topic left with no subscriber keeps no empty set. */
  private unsubscribe(ws: EngineSocket<Conn>, topic: string): void {
    const set = this.subscribers.get(topic);
    if (!set) return;
    set.delete(ws);
    if (set.size === 0) this.subscribers.delete(topic);
  }

  /** Adds a frame to a topic's history, then trims the oldest past RING events or RING_BYTES. */
  private keep(topic: string, stored: Stored): void {
    let ring = this.rings.get(topic);
    if (!ring) this.rings.set(topic, (ring = []));
    ring.push(stored);
    let bytes = (this.ringBytes.get(topic) ?? 0) + stored.frame.length;
    let drop = 0;
    while (ring.length - drop > 1 && (ring.length - drop > RING || bytes > RING_BYTES))
      bytes -= ring[drop++]!.frame.length;
    if (drop > 0) ring.splice(0, drop);
    this.ringBytes.set(topic, bytes);
  }

  /**
   * Drops a topic's history; its numbering too when no one is on it (a later subscribe with an
   * old `since` then gets resync). Subscribers keep the numbering, so their next event is not
   * taken for one they have seen.
   */
  private forget(topic: string): void {
    this.rings.delete(topic);
    this.ringBytes.delete(topic);
    if ((this.subscribers.get(topic)?.size ?? 0) > 0 || this.listeners.has(topic)) return;
    this.subscribers.delete(topic);
    this.floor = Math.max(this.floor, this.seqs.get(topic) ?? 0);
    this.seqs.delete(topic);
    this.lastEventAt.delete(topic);
    this.forgotten++;
  }

  /** Forgets topics idle for the idle time (5 min by default) that nobody follows. */
  evictIdle(now = Date.now()): number {
    const idle = this.idleMs();
    let n = 0;
    for (const [topic, at] of this.lastEventAt) {
      if (
        now - at < idle ||
        (this.subscribers.get(topic)?.size ?? 0) > 0 ||
        this.listeners.has(topic)
      )
        continue;
      this.forget(topic);
      n++;
    }
    return n;
  }

  /**
   * What the hub keeps (`svc status --json`, tests, the benchmark): topics, kept events and their
   * bytes, and how many topics it forgot.
   */
  stats(): { topics: number; events: number; bytes: number; forgotten: number } {
    let events = 0;
    let bytes = 0;
    for (const r of this.rings.values()) events += r.length;
    for (const b of this.ringBytes.values()) bytes += b;
    return { topics: this.seqs.size, events, bytes, forgotten: this.forgotten };
  }

  /** Stops feeding a socket a topic and tells it why; it resubscribes (with `since`) or reloads. */
  private drop(ws: EngineSocket<Conn>, topic: string, reason: string): void {
    this.unsubscribe(ws, topic);
    ws.data.topics.delete(topic);
    ws.cork(() =>
      ws.send(JSON.stringify({ type: 'resync', topic, seq: this.seqOf(topic), reason })),
    );
  }

  private onFrame(ws: EngineSocket<Conn>, message: Buffer, isBinary: boolean): void {
    let parsed: z.infer<typeof clientFrame>;
    try {
      if (isBinary) throw new Error('frames are JSON text');
      parsed = clientFrame.parse(JSON.parse(message.toString('utf8')));
    } catch (err) {
      const problem = err instanceof z.ZodError ? describeIssue(err) : (err as Error).message;
      ws.send(
        JSON.stringify({
          type: 'error',
          error: {
            code: 'invalid_request',
            message: `Ignored a frame: ${problem}. Frames are JSON such as {"type":"subscribe","topics":["server"]}.`,
          },
        }),
      );
      return;
    }
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
        if (since !== undefined) this.replay(ws, t, since);
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

  private replay(ws: EngineSocket<Conn>, topic: string, since: number): void {
    const ring = this.rings.get(topic) ?? [];
    const current = this.seqOf(topic);
    // A forgotten topic keeps nothing and stands at the floor: a `since` below it is told to resync.
    const oldest = ring[0]?.seq ?? current + 1;
    if (since > current || since < oldest - 1) {
      ws.send(
        JSON.stringify({
          type: 'resync',
          topic,
          seq: current,
          reason:
            since > current
              ? 'the server restarted or no longer keeps this topic; reload it'
              : 'missed events are no longer kept; reload this topic',
        }),
      );
      return;
    }
    for (const e of ring) if (e.seq > since) ws.send(e.frame);
  }
}

const describeIssue = (err: z.ZodError): string => firstIssue(err, 'frame', 'invalid frame');
