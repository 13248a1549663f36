import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ApiError } from '../shared/errors.js';
import { version } from '../shared/version.js';
import type { AuthDecision } from './auth.js';
import { readRequest, type RequestInfo } from './http.js';
import type { HttpResponse, TemplatedApp, WebSocket } from './uws.js';

interface Conn {
  local: boolean;
  topics: Set<string>;
}

export const topicSchema = z
  .string()
  .regex(/^(server|sessions|tasks|workflows|trash|session:[A-Za-z0-9_-]{1,64})$/, 'a topic is server, sessions, tasks, workflows, trash or session:<id>');

const clientFrame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('subscribe'), topics: z.array(topicSchema).min(1).max(100), since: z.record(z.string(), z.number().int().min(0)).optional() }),
  z.object({ type: z.literal('unsubscribe'), topics: z.array(topicSchema).min(1).max(100) }),
  z.object({ type: z.literal('ping') }),
]);

const RING = 512;

interface Stored {
  seq: number;
  frame: string;
}

/**
 * /ws: authenticates the upgrade like any request, then carries `{topic, type, seq, data}` events.
 * Each topic numbers its events and keeps the last few, so a client that reconnects with
 * `since` gets what it missed, or is told to resync when that is gone.
 */
export class WsHub {
  /** Changes every gateway start: a `since` from another epoch cannot be trusted. */
  readonly epoch = randomUUID();
  private readonly seqs = new Map<string, number>();
  private readonly rings = new Map<string, Stored[]>();
  private readonly sockets = new Set<WebSocket<Conn>>();

  constructor(
    private readonly app: TemplatedApp,
    opts: { frameLimit: number; authorize: (req: RequestInfo) => AuthDecision },
  ) {
    app.ws<Conn>('/ws', {
      maxPayloadLength: opts.frameLimit,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      maxBackpressure: 8 * 1024 * 1024,
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => {
        const info = readRequest(res, req);
        const decision = opts.authorize(info);
        if (!decision.ok) return refuse(res, decision.error);
        res.upgrade<Conn>(
          { local: decision.local, topics: new Set() },
          info.headers['sec-websocket-key'] ?? '',
          info.headers['sec-websocket-protocol'] ?? '',
          info.headers['sec-websocket-extensions'] ?? '',
          context,
        );
      },
      open: (ws) => {
        this.sockets.add(ws);
        ws.send(JSON.stringify({ topic: 'server', type: 'hello', seq: 0, data: { version, epoch: this.epoch, local: ws.getUserData().local } }));
      },
      message: (ws, message, isBinary) => this.onFrame(ws, message, isBinary),
      close: (ws) => {
        this.sockets.delete(ws);
      },
    });
  }

  publish(topic: string, type: string, data: unknown): number {
    const seq = (this.seqs.get(topic) ?? 0) + 1;
    this.seqs.set(topic, seq);
    const frame = JSON.stringify({ topic, type, seq, data });
    const ring = this.rings.get(topic) ?? [];
    ring.push({ seq, frame });
    if (ring.length > RING) ring.shift();
    this.rings.set(topic, ring);
    this.app.publish(topic, frame);
    return seq;
  }

  /** Closes every WebSocket (restart handover); returns how many there were. */
  closeAll(code: number, reason: string): number {
    const n = this.sockets.size;
    for (const ws of [...this.sockets]) ws.end(code, reason);
    return n;
  }

  private onFrame(ws: WebSocket<Conn>, message: ArrayBuffer, isBinary: boolean): void {
    let parsed: z.infer<typeof clientFrame>;
    try {
      if (isBinary) throw new Error('frames are JSON text');
      parsed = clientFrame.parse(JSON.parse(Buffer.from(message).toString('utf8')));
    } catch (err) {
      const problem = err instanceof z.ZodError ? (err.issues[0]?.message ?? 'invalid frame') : (err as Error).message;
      ws.send(JSON.stringify({ type: 'error', error: { code: 'invalid_request', message: `Ignored a frame: ${problem}. Frames are JSON such as {"type":"subscribe","topics":["server"]}.` } }));
      return;
    }
    const conn = ws.getUserData();
    if (parsed.type === 'ping') return void ws.send(JSON.stringify({ type: 'pong' }));
    if (parsed.type === 'unsubscribe') {
      for (const t of parsed.topics) {
        ws.unsubscribe(t);
        conn.topics.delete(t);
      }
      return void ws.send(JSON.stringify({ type: 'unsubscribed', topics: parsed.topics }));
    }
    const seq: Record<string, number> = {};
    ws.cork(() => {
      for (const t of parsed.topics) {
        const since = parsed.since?.[t];
        if (since !== undefined) this.replay(ws, t, since);
        ws.subscribe(t);
        conn.topics.add(t);
        seq[t] = this.seqs.get(t) ?? 0;
      }
      ws.send(JSON.stringify({ type: 'subscribed', topics: parsed.topics, seq, epoch: this.epoch }));
    });
  }

  private replay(ws: WebSocket<Conn>, topic: string, since: number): void {
    const ring = this.rings.get(topic) ?? [];
    const current = this.seqs.get(topic) ?? 0;
    const oldest = ring[0]?.seq ?? current + 1;
    if (since > current || since < oldest - 1) {
      ws.send(JSON.stringify({ type: 'resync', topic, seq: current, reason: since > current ? 'the server restarted; reload this topic' : 'missed events are no longer kept; reload this topic' }));
      return;
    }
    for (const e of ring) if (e.seq > since) ws.send(e.frame);
  }
}

function refuse(res: HttpResponse, error: ApiError): void {
  res.cork(() => {
    res.writeStatus(`${error.status} ${error.status === 401 ? 'Unauthorized' : 'Forbidden'}`);
    res.writeHeader('Content-Type', 'application/json');
    for (const [k, v] of Object.entries(error.headers ?? {})) res.writeHeader(k, v);
    res.end(JSON.stringify(error.toBody()), true);
  });
}
