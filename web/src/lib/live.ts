import type { WsEventFrame } from '../../../src/shared/protocol/events';
import { authNeeded } from './api';
import { Store } from './store';

/**
 * One event of a topic, as /ws sends it (the server's catalogue: narrowing on `type` gives
 * `data` its shape). `$reset` is ours: reload this topic from the REST API.
 */
export type LiveEvent = WsEventFrame | { topic: string; type: '$reset'; seq: number; data: null };

export type ConnState = 'connecting' | 'online' | 'reconnecting';

type Handler = (e: LiveEvent) => void;

/**
 * A frame as it arrives, before any field is trusted: each one used below is checked for its
 * type first (an event's data is the server's catalogue shape once `topic`, `seq` and `type` are).
 */
interface RawFrame {
  type?: unknown;
  topic?: unknown;
  seq?: unknown;
  topics?: unknown;
  data?: { epoch?: unknown; local?: unknown; version?: unknown } | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Waits between reconnection attempts; the first is quick because a restart hands the port over. */
const BACKOFF_MS = [200, 1000, 2000, 4000, 8000, 15000];

/**
 * The /ws connection: reconnects by itself with backoff, resubscribes with `since` when the
 * server is the same (same epoch), and otherwise tells each topic's handlers to reload (`$reset`).
 * Events are numbered per topic; one already seen is never delivered twice.
 */
class Live {
  readonly state = new Store<ConnState>('connecting');
  /** Whether the server sees this page as local (no key needed). */
  readonly local = new Store<boolean | undefined>(undefined);
  /** The server's version, from its hello. */
  readonly version = new Store<string>('');
  /** Bumped at every new server epoch (a restart). */
  readonly epochs = new Store<number>(0);

  private ws: WebSocket | undefined;
  private epoch: string | undefined;
  private readonly seqs = new Map<string, number>();
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Topics whose subscribe is sent and not yet confirmed; those to reload once it is. */
  private readonly pending = new Set<string>();
  private readonly needReset = new Set<string>();
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private started = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    this.connect();
  }

  /** Listens to a topic (subscribing the first time); returns the way to stop. */
  on(topic: string, fn: Handler): () => void {
    let set = this.handlers.get(topic);
    if (!set) {
      this.handlers.set(topic, (set = new Set()));
      this.sendSubscribe([topic]);
    }
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size > 0 || this.handlers.get(topic) !== set) return;
      this.handlers.delete(topic);
      this.seqs.delete(topic);
      this.pending.delete(topic);
      if (this.ws?.readyState === WebSocket.OPEN)
        this.ws.send(JSON.stringify({ type: 'unsubscribe', topics: [topic] }));
    };
  }

  /** Drops the connection as a network failure would (then reconnects); for the status view's "reconnect". */
  reconnectNow(): void {
    this.ws?.close();
  }

  private connect(): void {
    clearTimeout(this.timer);
    const ws = new WebSocket(
      `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`,
    );
    this.ws = ws;
    ws.onmessage = (m) => {
      if (this.ws !== ws) return;
      let frame: unknown;
      try {
        frame = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (isRecord(frame)) this.onFrame(frame as RawFrame);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.pending.clear();
      this.state.set('reconnecting');
      void this.checkAuth();
      const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)]!;
      this.attempt++;
      this.timer = setTimeout(() => this.connect(), delay + Math.random() * delay * 0.2);
    };
  }

  /** A refused upgrade looks like any close: ask a REST route whether the key is what is missing. */
  private async checkAuth(): Promise<void> {
    try {
      const res = await fetch('/api/status', { credentials: 'same-origin' });
      if (res.status === 401) authNeeded.set(true);
    } catch {
      // the server is away; the next attempt will tell
    }
  }

  private sendSubscribe(topics: string[]): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || topics.length === 0) return;
    const since: Record<string, number> = {};
    for (const t of topics) {
      const s = this.seqs.get(t);
      if (s !== undefined && !this.needReset.has(t)) since[t] = s;
      else this.needReset.add(t);
      this.pending.add(t);
    }
    ws.send(
      JSON.stringify({
        type: 'subscribe',
        topics,
        ...(Object.keys(since).length ? { since } : {}),
      }),
    );
  }

  private onFrame(frame: RawFrame): void {
    if (frame.type === 'hello' && frame.topic === 'server') {
      const epoch = String(frame.data?.epoch ?? '');
      if (this.epoch !== undefined && this.epoch !== epoch) {
        // Another server (a restart): its numbers mean nothing to us; every topic reloads.
        this.seqs.clear();
        this.epochs.set((n) => n + 1);
      }
      this.epoch = epoch;
      this.attempt = 0;
      this.local.set(frame.data?.local === true);
      this.version.set(String(frame.data?.version ?? ''));
      this.state.set('online');
      authNeeded.set(false);
      this.sendSubscribe([...this.handlers.keys()]);
      return;
    }
    if (frame.type === 'subscribed') {
      const seqs = isRecord(frame.seq) ? frame.seq : {};
      for (const t of Array.isArray(frame.topics) ? frame.topics : []) {
        if (typeof t !== 'string' || !this.pending.delete(t)) continue;
        const seq = Number(seqs[t] ?? 0);
        if (this.needReset.delete(t) || !this.seqs.has(t)) {
          this.seqs.set(t, seq);
          this.dispatch({ topic: t, type: '$reset', seq, data: null });
        } else this.seqs.set(t, Math.max(seq, this.seqs.get(t) ?? 0));
      }
      return;
    }
    if (frame.type === 'resync' && typeof frame.topic === 'string') {
      // Either our `since` is gone (we stay subscribed; `subscribed` follows) or we fell behind
      // (the server dropped us from the topic): reload it and subscribe again.
      this.needReset.add(frame.topic);
      if (!this.pending.has(frame.topic) && this.handlers.has(frame.topic))
        this.sendSubscribe([frame.topic]);
      return;
    }
    if (
      typeof frame.topic === 'string' &&
      typeof frame.seq === 'number' &&
      typeof frame.type === 'string'
    ) {
      const last = this.seqs.get(frame.topic);
      if (last !== undefined && frame.seq <= last) return; // seen already (a replay overlapping what we had)
      if (this.needReset.has(frame.topic)) return; // about to reload; the reload covers it
      this.seqs.set(frame.topic, frame.seq);
      this.dispatch(frame as unknown as LiveEvent);
    }
  }

  private dispatch(e: LiveEvent): void {
    for (const fn of [...(this.handlers.get(e.topic) ?? [])]) {
      try {
        fn(e);
      } catch (err) {
        console.error('svc: a handler of', e.topic, e.type, 'failed', err);
      }
    }
  }
}

export const live = new Live();
