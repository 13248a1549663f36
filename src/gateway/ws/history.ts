import { randomUUID } from 'node:crypto';
import type { WsState } from '../../shared/protocol/ipc.js';
import { resyncFrame } from './frames.js';

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
/** At most this much of the kept frames goes to a successor gateway (newest first); older `since` values resync. */
const HANDOFF_BYTES = 16 * 1024 * 1024;

interface Stored {
  seq: number;
  frame: string;
}

/**
 * Each topic's numbering and its last frames, so a client that reconnects with `since` gets what
 * it missed, or is told to resync when that is gone. A topic nobody follows is forgotten once idle.
 */
export class TopicHistory {
  /**
   * Names this numbering: kept across a restart (the successor takes it over with the seqs and
   * frames), new after a crash, where a `since` from before cannot be trusted.
   */
  readonly epoch: string;
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
  private readonly followed: (topic: string) => boolean;
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(opts: {
    resume?: WsState;
    /** How long a topic nobody follows keeps its history after its last event. */
    idleTopicMs?: () => number;
    /** Whether someone follows a topic (a socket or an in-process listener): it keeps its numbering. */
    followed: (topic: string) => boolean;
  }) {
    this.followed = opts.followed;
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
  }

  /** The last seq given on a topic (the floor before its first event, 0 at first). */
  seqOf(topic: string): number {
    return this.seqs.get(topic) ?? this.floor;
  }

  /** Takes the next seq on a topic. */
  next(topic: string): number {
    const seq = this.seqOf(topic) + 1;
    this.seqs.set(topic, seq);
    return seq;
  }

  /** Keeps an event's frame for replay; the topic had an event now. */
  record(topic: string, seq: number, frame: string): void {
    this.keep(topic, { seq, frame });
    this.lastEventAt.set(topic, Date.now());
  }

  /** What a client that saw a topic up to `since` is sent: the frames after it, or a resync. */
  replay(topic: string, since: number): string[] {
    const ring = this.rings.get(topic) ?? [];
    const current = this.seqOf(topic);
    // A forgotten topic keeps nothing and stands at the floor: a `since` below it is told to resync.
    const oldest = ring[0]?.seq ?? current + 1;
    if (since > current || since < oldest - 1)
      return [
        resyncFrame(
          topic,
          current,
          since > current
            ? 'the server restarted or no longer keeps this topic; reload it'
            : 'missed events are no longer kept; reload this topic',
        ),
      ];
    return ring.filter((e) => e.seq > since).map((e) => e.frame);
  }

  /** The numbering and the newest frames (within HANDOFF_BYTES) for a successor gateway. */
  handOff(): WsState {
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
  forget(topic: string): void {
    this.rings.delete(topic);
    this.ringBytes.delete(topic);
    if (this.followed(topic)) return;
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
      if (now - at < idle || this.followed(topic)) continue;
      this.forget(topic);
      n++;
    }
    return n;
  }

  /** Topics, kept events and their bytes, and how many topics were forgotten. */
  stats(): { topics: number; events: number; bytes: number; forgotten: number } {
    let events = 0;
    let bytes = 0;
    for (const r of this.rings.values()) events += r.length;
    for (const b of this.ringBytes.values()) bytes += b;
    return { topics: this.seqs.size, events, bytes, forgotten: this.forgotten };
  }
}
