import { request as httpRequest } from 'node:http';
import { WebSocket } from 'undici';
import * as assert from 'uvu/assert';
import {
  startFakeProvider,
  type FakeProtocol,
  type FakeProvider,
} from '../fixtures/fake-provider.js';
import { api } from './api.js';
import { removeHome, SLACK, startServer, type RunningServer } from './server.js';

/**
 * Shared set-up for the turn tests: the real `svc serve`, the fake provider, a model entry per
 * protocol, a /ws client that can resume and send commands, and an SSE reader.
 */

export const KEY = 'sk-fake-turns-key-0123456789';

export interface TurnRig {
  server: RunningServer;
  fake: FakeProvider;
  port: number;
  /** Stops the server and the fake provider and removes the home; safe to call twice. */
  stop: () => Promise<void>;
}

export interface RigOptions {
  /** Extra config.yml text (agent:, restart:, …). */
  config?: string;
  /** Model entries to add: id → protocol and extras. The first becomes the default slot. */
  models?: Record<string, { protocol: FakeProtocol; context_window?: number }>;
  /** A model id to put in the lite slot. */
  lite?: string;
  /** Extra environment for `svc serve`. */
  env?: NodeJS.ProcessEnv;
  /** $SVC_HOME (default: a new temporary folder). */
  home?: string;
  /** A command that execs `svc serve` (startServer's `wrap`). */
  wrap?: string[];
}

export async function startRig(opts: RigOptions = {}): Promise<TurnRig> {
  const fake = await startFakeProvider({ apiKey: KEY });
  let server: RunningServer | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (server) await server.stop();
    await fake.close();
    if (server) removeHome(server.home);
  };
  try {
    server = await startServer({
      ...(opts.config === undefined ? {} : { config: opts.config }),
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.home ? { home: opts.home } : {}),
      ...(opts.wrap ? { wrap: opts.wrap } : {}),
    });
    const models = opts.models ?? { oa: { protocol: 'openai' }, an: { protocol: 'anthropic' } };
    let first = true;
    for (const [id, m] of Object.entries(models)) {
      const res = await api(server.port, 'POST', '/api/config/models', {
        id,
        provider: 'custom',
        protocol: m.protocol,
        base_url: fake.baseUrl(m.protocol),
        model: 'fake',
        api_key: KEY,
        ...(m.context_window === undefined ? {} : { context_window: m.context_window }),
      });
      assert.is(res.status, 201, `model ${id}: ${JSON.stringify(res.body)}`);
      if (first) {
        const slot = await api(server.port, 'PUT', '/api/config/models/default', { model_id: id });
        assert.is(slot.status, 200, JSON.stringify(slot.body));
        first = false;
      }
    }
    if (opts.lite) {
      const slot = await api(server.port, 'PUT', '/api/config/models/lite', {
        model_id: opts.lite,
      });
      assert.is(slot.status, 200, JSON.stringify(slot.body));
    }
    return { server, fake, port: server.port, stop };
  } catch (err) {
    // uvu does not print a failing before hook's error: say it here.
    console.error('startRig failed:', err);
    await stop();
    throw err;
  }
}

/** A new chat (session) with the given settings; answers its id. */
export async function newChat(
  port: number,
  settings: Record<string, unknown> = {},
): Promise<string> {
  const res = await api(port, 'POST', '/api/chat', settings);
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.session_id as string;
}

export async function messagesOf(port: number, sessionId: string): Promise<any[]> {
  const res = await api(port, 'GET', `/api/sessions/${sessionId}/messages?limit=200`);
  assert.is(res.status, 200);
  return res.body.items as any[];
}

// ---- /ws ----

export interface WsEvent {
  topic: string;
  type: string;
  seq: number;
  data: any;
}

export interface WsClient {
  /** Topic events (frames with a topic and a seq), in arrival order. */
  events: WsEvent[];
  /** Every frame, in arrival order (hello, subscribed, replies, resync, events). */
  frames: any[];
  /** The server's answer to the subscribe frame. */
  subscribed: any;
  send: (frame: unknown) => void;
  /** The first frame (already received or still to come) that matches. */
  waitFrame: (match: (f: any) => boolean, what?: string, timeoutMs?: number) => Promise<any>;
  /** The first topic event that matches. */
  waitEvent: (
    match: (e: WsEvent) => boolean,
    what?: string,
    timeoutMs?: number,
  ) => Promise<WsEvent>;
  /** Closes the connection and stops recording at once, as if it dropped. */
  drop: () => void;
  close: () => void;
}

/** Connects to /ws, subscribes to `topics` (with `since` when given) and resolves once subscribed; with `key`, a socket that may answer approvals. */
export async function connectWs(
  port: number,
  topics: string[],
  since?: Record<string, number>,
  key?: string,
): Promise<WsClient> {
  const ws = new WebSocket(
    `ws://127.0.0.1:${port}/ws${key ? `?access_key=${encodeURIComponent(key)}` : ''}`,
  );
  const frames: any[] = [];
  const events: WsEvent[] = [];
  const waiters = new Set<() => void>();
  let recording = true;
  const client: WsClient = {
    events,
    frames,
    subscribed: undefined,
    send: (frame) => ws.send(JSON.stringify(frame)),
    waitFrame: (match, what = 'a frame', timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const f = frames.find(match);
          if (f === undefined) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(f);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `timed out waiting for ${what}; got ${JSON.stringify(frames.map((f) => f.type))}`,
            ),
          );
        }, timeoutMs * SLACK);
        if (!check()) waiters.add(check);
      }),
    waitEvent: (match, what, timeoutMs) =>
      client.waitFrame(
        (f) =>
          typeof f.topic === 'string' &&
          typeof f.seq === 'number' &&
          f.type !== 'resync' &&
          match(f),
        what,
        timeoutMs,
      ),
    drop: () => {
      recording = false;
      ws.close();
    },
    close: () => ws.close(),
  };
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('no subscription confirmation within 5 s')),
      5000 * SLACK,
    );
    ws.addEventListener('error', () => reject(new Error('WebSocket error')));
    ws.addEventListener('message', (m) => {
      if (!recording) return;
      const frame = JSON.parse(String(m.data)) as any;
      frames.push(frame);
      if (frame.type === 'hello' && frame.topic === 'server')
        ws.send(JSON.stringify({ type: 'subscribe', topics, ...(since ? { since } : {}) }));
      else if (frame.type === 'subscribed') {
        client.subscribed = frame;
        clearTimeout(timer);
        resolve();
      } else if (
        typeof frame.topic === 'string' &&
        typeof frame.seq === 'number' &&
        frame.type !== 'resync'
      )
        events.push(frame as WsEvent);
      for (const w of [...waiters]) w();
    });
  });
  await ready;
  return client;
}

/** The events of one turn, in order. */
export const ofTurn = (events: WsEvent[], turnId: string) =>
  events.filter((e) => e.data?.turn_id === turnId);

/** Concatenated deltas of a type. */
export const joined = (events: { type: string; data: any }[], type: string) =>
  events
    .filter((e) => e.type === type)
    .map((e) => e.data.delta as string)
    .join('');

export function assertIncreasing(events: { seq: number }[], what = 'events'): void {
  for (let i = 1; i < events.length; i++) {
    assert.ok(
      events[i]!.seq > events[i - 1]!.seq,
      `${what}: seq ${events[i]!.seq} after ${events[i - 1]!.seq}`,
    );
  }
}

// ---- SSE ----

export interface SseEvent {
  event: string;
  id?: string;
  data: any;
  /** Which read from the socket carried the end of this event (0-based). */
  chunk: number;
}

export interface SseResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: SseEvent[];
  comments: number;
  /** Reads from the socket in all. */
  chunks: number;
}

/** POSTs with `Accept: text/event-stream` and reads the stream to its end. */
export function sse(
  port: number,
  path: string,
  body: unknown,
  timeoutMs = 20_000,
): Promise<SseResult> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'text/event-stream',
          'Content-Length': Buffer.byteLength(text),
          Connection: 'close',
        },
      },
      (res) => {
        const events: SseEvent[] = [];
        let comments = 0;
        let buf = '';
        let chunks = 0;
        const timer = setTimeout(() => {
          res.destroy();
          reject(
            new Error(
              `SSE stream did not end within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.event))}`,
            ),
          );
        }, timeoutMs * SLACK);
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let at: number;
          while ((at = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            const e: SseEvent = { event: 'message', data: undefined, chunk: chunks };
            let data = '';
            let isComment = true;
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              isComment = false;
              const i = line.indexOf(':');
              const field = i < 0 ? line : line.slice(0, i);
              const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
              if (field === 'event') e.event = value;
              else if (field === 'id') e.id = value;
              else if (field === 'data') data += (data ? '\n' : '') + value;
            }
            if (isComment) {
              comments++;
              continue;
            }
            e.data = JSON.parse(data);
            events.push(e);
          }
          chunks++;
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, events, comments, chunks });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

// ---- svc status ----

/** `GET /api/status` (what `svc status --json` shows). */
export async function status(port: number): Promise<any> {
  const res = await api(port, 'GET', '/api/status');
  assert.is(res.status, 200);
  return res.body;
}
