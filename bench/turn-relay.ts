import { createRequire } from 'node:module';
import { request } from 'undici';
import type { WebSocket } from 'uWebSockets.js';

/**
 * The baseline for bench/turns.ts, in its own process like the svc gateway:
 *   node dist/bench/turn-relay.js <provider base url> <api key>
 *
 * The least a server can do to relay a model's stream to WebSocket clients: one process, a bare
 * uWebSockets.js app speaking the same frames as svc's /ws (hello, subscribe/subscribed, `turn`
 * commands, `{topic, type, seq, data}` events), which streams the provider's reply with the same
 * HTTP client as svc's agent worker (undici `request`), parses the SSE and sends every text delta
 * at once to each subscriber of the topic. No store, no IPC hops, no batching, no tools, no
 * history: what is left is HTTP client + SSE parse + WebSocket send, the floor under svc's number.
 * Prints `listening <port> <native|fallback>` when ready.
 */

const [baseUrl, apiKey] = process.argv.slice(2);
if (!baseUrl || !apiKey) throw new Error('usage: turn-relay.js <provider base url> <api key>');

// Exit with the parent: the bench harness holds our stdin open; EOF means it is gone.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

interface Conn {
  topics: Set<string>;
}

const require = createRequire(import.meta.url);
const uws = require('uWebSockets.js') as typeof import('uWebSockets.js');
const native = Function.prototype.toString.call(uws.App).includes('[native code]');
const subscribers = new Map<string, Set<WebSocket<Conn>>>();
const seqs = new Map<string, number>();
let turns = 0;

function publish(topic: string, type: string, data: unknown): void {
  const seq = (seqs.get(topic) ?? 0) + 1;
  seqs.set(topic, seq);
  const frame = JSON.stringify({ topic, type, seq, data });
  for (const ws of subscribers.get(topic) ?? []) ws.cork(() => ws.send(frame));
}

async function runTurn(sessionId: string, text: string): Promise<void> {
  const topic = `session:${sessionId}`;
  const turnId = `turn_${++turns}`;
  publish(topic, 'turn.started', { turn_id: turnId, session_id: sessionId });
  let reply = '';
  try {
    const res = await request(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({
        model: 'fake',
        stream: true,
        messages: [{ role: 'user', content: text }],
      }),
    });
    if (res.statusCode !== 200)
      throw new Error(`provider answered ${res.statusCode}: ${await res.body.text()}`);
    res.body.setEncoding('utf8');
    let buf = '';
    for await (const chunk of res.body as AsyncIterable<string>) {
      buf += chunk;
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, end);
        buf = buf.slice(end + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
          const delta = (
            JSON.parse(line.slice(6)) as {
              choices?: Array<{ delta?: { content?: string | null } }>;
            }
          ).choices?.[0]?.delta?.content;
          if (delta) {
            reply += delta;
            publish(topic, 'turn.text_delta', { turn_id: turnId, delta });
          }
        }
      }
    }
    publish(topic, 'turn.completed', { turn_id: turnId, status: 'completed', reply });
  } catch (err) {
    publish(topic, 'turn.failed', {
      turn_id: turnId,
      status: 'failed',
      message: (err as Error).message,
    });
  }
}

const app = uws.App();
app.ws<Conn>('/ws', {
  maxPayloadLength: 4 * 1024 * 1024,
  idleTimeout: 120,
  maxBackpressure: 64 * 1024 * 1024,
  upgrade: (res, req, context) => {
    res.upgrade<Conn>(
      { topics: new Set() },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  },
  open: (ws) => void ws.send(JSON.stringify({ topic: 'server', type: 'hello', seq: 0, data: {} })),
  message: (ws, message) => {
    const frame = JSON.parse(Buffer.from(message).toString('utf8')) as {
      type: string;
      topics?: string[];
      session_id?: string;
      message?: { text: string };
    };
    if (frame.type === 'subscribe') {
      const seq: Record<string, number> = {};
      for (const t of frame.topics ?? []) {
        let set = subscribers.get(t);
        if (!set) subscribers.set(t, (set = new Set()));
        set.add(ws);
        ws.getUserData().topics.add(t);
        seq[t] = seqs.get(t) ?? 0;
      }
      ws.send(JSON.stringify({ type: 'subscribed', topics: frame.topics, seq }));
    } else if (frame.type === 'turn') {
      void runTurn(frame.session_id ?? '', frame.message?.text ?? '');
      ws.send(JSON.stringify({ type: 'turn.accepted', session_id: frame.session_id }));
    } else if (frame.type === 'ping') ws.send(JSON.stringify({ type: 'pong' }));
  },
  close: (ws) => {
    for (const t of ws.getUserData().topics) subscribers.get(t)?.delete(ws);
  },
});
app.listen('127.0.0.1', 0, (token) => {
  if (!token) throw new Error('the relay could not listen');
  process.stdout.write(
    `listening ${uws.us_socket_local_port(token)} ${native ? 'native' : 'fallback'}\n`,
  );
});
