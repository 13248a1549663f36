import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { WebSocket } from 'undici';
import {
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type FakeRequest,
} from '../test/fixtures/fake-provider.js';
import { api } from '../test/helpers/api.js';
import { loadUws } from '../src/shared/engine-choice.js';
import {
  benchDir,
  emit as emitLine,
  envInt,
  isMain,
  machine,
  mean,
  median,
  note,
  removeLater,
  round,
  startSvc,
  cpuSeconds,
  stopTree,
  tracked,
  waitForLine,
} from './lib.js';

/**
 * Agent turns, end to end through the real server: the fake provider (test/fixtures) streams a
 * reply, the agent worker parses it, the supervisor routes its events to the gateway, the gateway
 * sends them to /ws subscribers. Three measurements, each against the same thing done by
 * bench/turn-relay.ts (one bare uWebSockets.js process relaying the provider's stream to
 * WebSocket clients, no batching, no store) in the same run:
 *
 *   latency     first-delta overhead: from the fake provider handing the first text chunk of a
 *               turn to its socket, to one WebSocket client receiving the first turn.text_delta
 *               of that turn. BENCH_TURNS (200) sequential turns after BENCH_TURN_WARMUP (20),
 *               svc and relay interleaved turn by turn, over 10 sessions. Targets: p50 ≤ 5 ms,
 *               p99 ≤ 20 ms. Also a /ws ping round trip, for scale.
 *   fanout      one turn of BENCH_FANOUT_DELTAS (2000) text deltas to BENCH_FANOUT_SUBSCRIBERS
 *               (100) WebSocket subscribers: every subscriber must get the whole text in order
 *               (concatenation equal to what was sent, seq consecutive); latency of every delta
 *               at every subscriber (provider write → frame carrying it received). Twice: paced
 *               (the fake pauses ~1 ms between deltas, ~1000 deltas/s) and burst (no pause).
 *   concurrent  BENCH_SESSIONS (20) sessions each streaming a turn of BENCH_SESSION_DELTAS (1000)
 *               deltas at once, burst, one subscriber per session: no lost, duplicated, reordered
 *               or misrouted event; throughput in deltas/s from the turn commands to the last
 *               turn.completed. BENCH_CONCURRENT_ROUNDS (3) rounds.
 *   gateway_cpu the gateway's CPU time (utime + stime from /proc) per 1,000 text deltas the model
 *               streams: BENCH_CPU_DELTAS (2000) deltas a turn, paced (~2 ms apart, a fast model)
 *               and burst, BENCH_CPU_ROUNDS (3) turns each, one /ws subscriber. Not by default: it
 *               is for comparing builds (below).
 *
 *   node dist/bench/turns.js                  latency, fanout, concurrent
 *   BENCH_PARTS=latency,fanout node dist/bench/turns.js
 *
 * BENCH_BASELINE_SVC=<root of another svc build> adds that build as a third server ("base"),
 * started the same way in the same run and interleaved turn by turn with this one in latency and
 * gateway_cpu: the ratios this/base are printed beside those against the relay.
 *
 * Clock: every timestamp is CLOCK_MONOTONIC (process.hrtime), one clock for every process on the
 * machine. The fake provider runs in this process and stamps writes on the performance clock,
 * converted here. Subscribers of fanout and concurrent run in a child process of their own (this
 * file with `--clients`), so parsing 100 clients' frames does not delay the fake provider's writes.
 */

const API_KEY = 'sk-bench-turns';

/** The gateway engine svc runs with in the current pass (BENCH_TURN_ENGINES: every pass starts its own svc). */
let svcEngine: 'uws' | 'node' = 'uws';
/** Every line names the engine of its pass. */
const emit = (obj: Record<string, unknown>) => emitLine({ ...obj, engine: svcEngine });
const SESSIONS_FOR_LATENCY = 10;
const TURN_TIMEOUT_MS = 30_000;
const LATENCY_TARGET = { p50: 5, p99: 20 };

/** Monotonic milliseconds, comparable across processes on this machine. */
const mono = () => Number(process.hrtime.bigint()) / 1e6;
/** Converts a performance-clock stamp (`performance.timeOrigin + performance.now()`, as the fake records) to `mono`. */
const perfToMono = (() => {
  const offset = mono() - (performance.timeOrigin + performance.now());
  return (t: number) => t + offset;
})();

/** Nearest-rank percentile of sorted values. */
function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ]!;
}

function dist(xs: number[], digits = 2): Record<string, number> {
  const s = Float64Array.from(xs).sort();
  return {
    p50: round(pct(s, 50), digits),
    p90: round(pct(s, 90), digits),
    p99: round(pct(s, 99), digits),
    max: round(s[s.length - 1] ?? NaN, digits),
    mean: round(mean(xs), digits),
    n: xs.length,
  };
}

/** The deltas of script `k`: distinct per script, so a subscriber can tell whose text it got. */
function deltasOf(k: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${k}.${i} `);
}

// ---------------------------------------------------------------- a /ws client

interface WsEvent {
  topic: string;
  type: string;
  seq: number;
  data: any;
}

/** A /ws client (svc's or the relay's: same frames) stamping every event on arrival. */
class WsConn {
  readonly events: Array<{ e: WsEvent; at: number }> = [];
  /** The topic's seq when the subscription was confirmed. */
  readonly subscribedSeq: Record<string, number> = {};
  readonly replies: Array<Record<string, unknown>> = [];
  onEvent: ((e: WsEvent, at: number) => void) | undefined;
  /** Answers to commands (turn.accepted, error, ...). */
  onReply: ((frame: Record<string, unknown>) => void) | undefined;
  private pong: (() => void) | undefined;

  private constructor(private readonly ws: WebSocket) {}

  static open(port: number, topics: string[]): Promise<WsConn> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    const c = new WsConn(ws);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('no subscription confirmation within 10 s')),
        10_000,
      );
      ws.addEventListener('error', () => reject(new Error('WebSocket error')));
      ws.addEventListener('message', (m) => {
        const at = mono();
        const frame = JSON.parse(String(m.data)) as Record<string, unknown>;
        if (frame.type === 'hello' && frame.topic === 'server')
          ws.send(JSON.stringify({ type: 'subscribe', topics }));
        else if (frame.type === 'subscribed') {
          Object.assign(c.subscribedSeq, frame.seq);
          clearTimeout(timer);
          resolve(c);
        } else if (frame.type === 'pong') c.pong?.();
        else if (typeof frame.topic === 'string' && typeof frame.seq === 'number') {
          const e = frame as unknown as WsEvent;
          c.events.push({ e, at });
          c.onEvent?.(e, at);
        } else {
          c.replies.push(frame);
          c.onReply?.(frame);
        }
      });
    });
  }

  send(frame: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(frame));
  }

  turn(sessionId: string, text: string): void {
    this.send({ type: 'turn', session_id: sessionId, message: { text, attachments: [] } });
  }

  /** One ping → pong round trip in ms. */
  ping(): Promise<number> {
    return new Promise((resolve) => {
      const t = mono();
      this.pong = () => resolve(mono() - t);
      this.send({ type: 'ping' });
    });
  }

  close(): void {
    this.ws.close();
  }
}

// ---------------------------------------------------------------- servers

interface Server {
  name: 'svc' | 'relay' | 'base';
  /** The gateway process's pid (svc and base). */
  gatewayPid?: () => Promise<number>;
  port: number;
  /** The end of the server's log, for error reports. */
  tail(): string;
  newSession(): Promise<string>;
  stop(): Promise<void>;
}

/** The build BENCH_BASELINE_SVC names (its root), if any. */
const baselineRoot = process.env.BENCH_BASELINE_SVC || undefined;

async function startSvcServer(fake: FakeProvider, root?: string): Promise<Server> {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-turns-'));
  removeLater(home);
  const svc = await startSvc({
    home,
    engine: svcEngine,
    ...(root ? { bin: join(root, 'bin', 'svc.js') } : {}),
  });
  let gateway: number | undefined;
  const model = await api(svc.port, 'POST', '/api/config/models', {
    id: 'm',
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake',
    api_key: API_KEY,
  });
  if (model.status !== 201)
    throw new Error(
      `POST /api/config/models answered ${model.status}: ${JSON.stringify(model.body)}`,
    );
  const slot = await api(svc.port, 'PUT', '/api/config/models/default', { model_id: 'm' });
  if (slot.status !== 200)
    throw new Error(
      `PUT /api/config/models/default answered ${slot.status}: ${JSON.stringify(slot.body)}`,
    );
  return {
    name: root ? 'base' : 'svc',
    port: svc.port,
    tail: svc.tail,
    gatewayPid: async () => {
      gateway ??= ((await svc.status()).processes as Array<{ role: string; pid: number }>).find(
        (p) => p.role === 'gateway',
      )?.pid;
      if (gateway === undefined) throw new Error('svc status names no gateway');
      return gateway;
    },
    newSession: async () => {
      const r = await api(svc.port, 'POST', '/api/sessions', {});
      if (r.status !== 201)
        throw new Error(`POST /api/sessions answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    },
    stop: svc.stop,
  };
}

let relaySessions = 0;
async function startRelay(fake: FakeProvider): Promise<Server> {
  const proc = tracked(
    process.execPath,
    [join(benchDir, 'turn-relay.js'), fake.baseUrl('openai'), API_KEY],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const m = await waitForLine(proc, /listening (\d+) (\w+)/, 10_000, 'turn relay');
  proc.stdout!.resume();
  if (m[2] !== 'native')
    note('the relay baseline loaded the uWebSockets.js JS fallback, not the native addon');
  let log = '';
  proc.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  return {
    name: 'relay',
    port: Number(m[1]),
    tail: () => log,
    newSession: async () => `relay${++relaySessions}`,
    stop: () => stopTree(proc),
  };
}

/**
 * A few short turns in a few sessions at once, so every agent worker svc will use is running (it
 * starts them on demand, up to agent.max_workers) and the code is warm.
 */
async function warmUp(s: Server, sessions = 4, turns = 3): Promise<void> {
  await Promise.all(Array.from({ length: sessions }, () => warmSession(s, turns)));
}

/** Turns refused with turn_in_progress right after the session's previous turn.completed arrived. */
const warmRefusals: Record<string, number> = {};
/** Warm-up turns sent again because the agent worker had not started in time. */
const warmRetries: Record<string, number> = {};

async function warmSession(s: Server, turns: number): Promise<void> {
  const session = await s.newSession();
  const conn = await WsConn.open(s.port, [`session:${session}`]);
  try {
    for (let i = 0; i < turns; i++) {
      const done = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(`${s.name}: a warm-up turn did not complete in ${TURN_TIMEOUT_MS} ms`),
            ),
          TURN_TIMEOUT_MS,
        );
        conn.onEvent = (e) => {
          if (
            e.type !== 'turn.completed' &&
            e.type !== 'turn.failed' &&
            e.type !== 'turn.interrupted'
          )
            return;
          // On a crowded machine an agent worker can start slower than the supervisor waits for
          // it; the warm-up exists to get workers running, so it sends that turn again (counted).
          if (
            e.type === 'turn.failed' &&
            (e.data as { reason?: string }).reason === 'worker_crashed' &&
            (warmRetries[s.name] ?? 0) < 10
          ) {
            warmRetries[s.name] = (warmRetries[s.name] ?? 0) + 1;
            setTimeout(() => conn.turn(session, `warm-up ${i}`), 100);
            return;
          }
          clearTimeout(timer);
          if (e.type === 'turn.completed') resolve();
          else
            reject(
              new Error(`${s.name}: a warm-up turn ended ${e.type}: ${JSON.stringify(e.data)}`),
            );
        };
        conn.onReply = (frame) => {
          if (frame.type !== 'error') return;
          // svc can still count the previous turn as running for a moment after its
          // turn.completed went out (see RESULTS.md): count it and send the turn again.
          if ((frame.error as { code?: string } | undefined)?.code === 'turn_in_progress') {
            warmRefusals[s.name] = (warmRefusals[s.name] ?? 0) + 1;
            setTimeout(() => conn.turn(session, `warm-up ${i}`), 5);
            return;
          }
          clearTimeout(timer);
          reject(new Error(`${s.name}: a warm-up turn was refused: ${JSON.stringify(frame)}`));
        };
      });
      conn.turn(session, `warm-up ${i}`);
      await done;
    }
  } finally {
    conn.close();
  }
}

/** svc, the relay and (BENCH_BASELINE_SVC) the baseline build, started and warmed up. */
async function withServers<T>(
  fake: FakeProvider,
  fn: (...servers: Server[]) => Promise<T>,
): Promise<T> {
  note(`starting svc (${svcEngine} engine) and the relay baseline`);
  const svc = await startSvcServer(fake);
  let relay: Server | undefined;
  let base: Server | undefined;
  try {
    relay = await startRelay(fake);
    if (baselineRoot) base = await startSvcServer(fake, baselineRoot);
    const servers = [svc, relay, ...(base ? [base] : [])];
    for (const s of servers) await warmUp(s);
    return await fn(...servers);
  } catch (err) {
    for (const s of [svc, relay, base])
      if (s)
        emit({ bench: 'turns', kind: 'server_log', target: s.name, tail: s.tail().slice(-3000) });
    throw err;
  } finally {
    note('stopping the servers');
    await base?.stop().catch(() => undefined);
    await relay?.stop().catch(() => undefined);
    await svc.stop().catch(() => undefined);
  }
}

// ---------------------------------------------------------------- 1. first-delta latency

/** A short reply streamed at a model's pace (a delta every ~5 ms), so the first delta is not flushed early by the turn's end. */
const LATENCY_REPLY: FakeReply = {
  parts: [{ text: ['Hello', ', ', 'world', '.'] }],
  usage: { input: 10, output: 4 },
  delayMs: 5,
};

async function latencyBench(): Promise<{
  ok: boolean;
  summary: Record<string, Record<string, number>>;
}> {
  const turns = Math.max(1, envInt('BENCH_TURNS', 200));
  const warmup = envInt('BENCH_TURN_WARMUP', 20);
  const fake = await startFakeProvider({ apiKey: API_KEY, whenEmpty: LATENCY_REPLY });
  try {
    return await withServers(fake, async (...servers) => {
      const setups = await Promise.all(
        servers.map(async (s) => {
          const sessions: string[] = [];
          for (let i = 0; i < SESSIONS_FOR_LATENCY; i++) sessions.push(await s.newSession());
          const conn = await WsConn.open(
            s.port,
            sessions.map((id) => `session:${id}`),
          );
          return { s, sessions, conn, first: [] as number[], whole: [] as number[] };
        }),
      );
      let ok = true;
      for (let i = 0; i < warmup + turns; i++) {
        // Alternate which goes first, so neither always follows the other's turn.
        for (const x of i % 2 ? [...setups].reverse() : setups) {
          const sid = x.sessions[i % x.sessions.length]!;
          const topic = `session:${sid}`;
          const before = fake.requests.length;
          let firstAt: number | undefined;
          const done = new Promise<WsEvent>((resolve, reject) => {
            const timer = setTimeout(
              () =>
                reject(
                  new Error(`${x.s.name}: turn ${i} did not complete in ${TURN_TIMEOUT_MS} ms`),
                ),
              TURN_TIMEOUT_MS,
            );
            x.conn.onReply = (frame) => {
              if (frame.type !== 'error') return;
              clearTimeout(timer);
              reject(new Error(`${x.s.name}: turn ${i} was refused: ${JSON.stringify(frame)}`));
            };
            x.conn.onEvent = (e, at) => {
              if (e.topic !== topic) return;
              if (e.type === 'turn.text_delta' && firstAt === undefined) firstAt = at;
              if (
                e.type === 'turn.completed' ||
                e.type === 'turn.failed' ||
                e.type === 'turn.interrupted'
              ) {
                clearTimeout(timer);
                resolve(e);
              }
            };
          });
          const sentAt = mono();
          x.conn.turn(sid, `latency turn ${i}`);
          const end = await done;
          const endAt = mono();
          const req: FakeRequest | undefined = fake.requests[before];
          if (
            end.type !== 'turn.completed' ||
            firstAt === undefined ||
            !req ||
            req.textAt.length === 0 ||
            fake.requests.length !== before + 1
          ) {
            ok = false;
            emit({
              bench: 'turns',
              kind: 'error',
              part: 'latency',
              target: x.s.name,
              turn: i,
              end: end.type,
              data: end.data,
              provider_requests: fake.requests.length - before,
            });
            continue;
          }
          if (i < warmup) continue;
          x.first.push(firstAt - perfToMono(req.textAt[0]!));
          x.whole.push(endAt - sentAt);
        }
      }
      // Scale: a /ws ping round trip on the same connections (loopback, no work behind it).
      const pings: Record<string, number[]> = {};
      for (const x of setups) {
        pings[x.s.name] = [];
        for (let i = 0; i < 200; i++) pings[x.s.name]!.push(await x.conn.ping());
        x.conn.close();
      }
      const summary: Record<string, Record<string, number>> = {};
      for (const x of setups) {
        summary[x.s.name] = dist(x.first);
        emit({
          bench: 'turns',
          kind: 'latency',
          target: x.s.name,
          turns: x.first.length,
          warmup,
          first_delta_ms: dist(x.first),
          turn_round_trip_ms: dist(x.whole),
          ws_ping_rtt_ms: dist(pings[x.s.name]!, 3),
          about:
            x.s.name === 'relay'
              ? 'the same through bench/turn-relay.ts (one bare uWebSockets.js process, no batching)'
              : `fake provider writes the first text chunk → /ws client gets the first turn.text_delta (agent worker → supervisor → gateway)${x.s.name === 'base' ? `; the build at ${baselineRoot}` : ''}`,
        });
      }
      summary.ping = dist(pings.svc!, 3);
      return { ok, summary };
    });
  } finally {
    await fake.close();
  }
}

// ---------------------------------------------------------------- subscribers in a child process

interface ClientsConfig {
  port: number;
  sessions: string[];
  /** Connections per session, each subscribed to that session's topic. */
  perSession: number;
  /** Deltas each turn carries (the text is `deltasOf(k, n)` for some k). */
  n: number;
}

interface ConnResult {
  session: string;
  conn: number;
  /** The script the text came from, or null when the text is not any script's. */
  k: number | null;
  text_ok: boolean;
  /** seq consecutive from the subscription on: nothing lost, duplicated or reordered. */
  seq_ok: boolean;
  /** turn.started, then the deltas, then turn.completed last (svc: message.committed between). */
  order_ok: boolean;
  end: string | null;
  frames: number;
  events: number;
  delta_chars: number;
  /** When the frame completing delta i arrived (mono ms); null where it never did. */
  delivered: Array<number | null>;
  startedAt: number | null;
  completedAt: number | null;
}

/** Child mode: open the connections, print ready, start the turns on `go`, print every connection's result. */
async function clientsMain(cfg: ClientsConfig): Promise<void> {
  const conns: Array<{ session: string; i: number; c: WsConn; done: Promise<void> }> = [];
  for (const session of cfg.sessions) {
    for (let i = 0; i < cfg.perSession; i++) {
      const c = await WsConn.open(cfg.port, [`session:${session}`]);
      const done = new Promise<void>((resolve) => {
        c.onEvent = (e) => {
          if (
            e.type === 'turn.completed' ||
            e.type === 'turn.failed' ||
            e.type === 'turn.interrupted'
          )
            resolve();
        };
      });
      conns.push({ session, i, c, done });
    }
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready' })}\n`);
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) if (line.trim() === 'go') break;
  const goAt = mono();
  for (const x of conns) if (x.i === 0) x.c.turn(x.session, `bench turn for ${x.session}`);
  const timeout = new Promise<void>((r) => setTimeout(r, TURN_TIMEOUT_MS));
  await Promise.race([Promise.all(conns.map((x) => x.done)), timeout]);
  // One write, and exit only once it is flushed: the results are megabytes on a pipe.
  const lines = [
    { event: 'go', at: goAt },
    ...conns.map((x) => ({ event: 'conn', ...judge(x.session, x.i, x.c, cfg.n) })),
    { event: 'done' },
  ];
  for (const x of conns) x.c.close();
  rl.close();
  process.stdout.write(lines.map((l) => JSON.stringify(l)).join('\n') + '\n', () =>
    process.exit(0),
  );
}

function judge(session: string, i: number, c: WsConn, n: number): ConnResult {
  const topic = `session:${session}`;
  const evs = c.events.filter((x) => x.e.topic === topic);
  let seq = c.subscribedSeq[topic] ?? 0;
  let seqOk = true;
  for (const { e } of evs) {
    if (e.seq !== seq + 1) seqOk = false;
    seq = e.seq;
  }
  const types = evs.map((x) => x.e.type);
  const deltas = evs.filter((x) => x.e.type === 'turn.text_delta');
  const text = deltas.map((x) => String(x.e.data.delta)).join('');
  const k = /^(\d+)\./.exec(text)?.[1];
  const expected = k === undefined ? [] : deltasOf(Number(k), n);
  const textOk = k !== undefined && text === expected.join('');
  const started = types.indexOf('turn.started');
  const end = evs.findIndex((x) =>
    ['turn.completed', 'turn.failed', 'turn.interrupted'].includes(x.e.type),
  );
  const firstDelta = types.indexOf('turn.text_delta');
  const lastDelta = types.lastIndexOf('turn.text_delta');
  const committed = types.indexOf('message.committed');
  const orderOk =
    started >= 0 &&
    firstDelta > started &&
    end === evs.length - 1 &&
    lastDelta < end &&
    types[end] === 'turn.completed' &&
    (committed === -1 || (committed > lastDelta && committed < end));
  // Which frame completed each delta: walk the cumulative lengths.
  const delivered: Array<number | null> = new Array(n).fill(null);
  let got = 0;
  let want = 0;
  let d = 0;
  for (const x of deltas) {
    got += String(x.e.data.delta).length;
    while (d < n && want + expected[d]!.length <= got) {
      want += expected[d]!.length;
      delivered[d++] = x.at;
    }
  }
  return {
    session,
    conn: i,
    k: textOk ? Number(k) : null,
    text_ok: textOk,
    seq_ok: seqOk,
    order_ok: orderOk,
    end: end >= 0 ? types[end]! : null,
    frames: deltas.length,
    events: evs.length,
    delta_chars: text.length,
    delivered: textOk ? delivered : [],
    startedAt: started >= 0 ? evs[started]!.at : null,
    completedAt: end >= 0 ? evs[end]!.at : null,
  };
}

/** Runs the subscribers in a child process; resolves their results once every turn ended. */
async function runClients(cfg: ClientsConfig): Promise<{ goAt: number; conns: ConnResult[] }> {
  const proc = tracked(
    process.execPath,
    [join(benchDir, 'turns.js'), '--clients', JSON.stringify(cfg)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const chunks: Buffer[] = [];
  let ready = false;
  proc.stdout!.on('data', (d: Buffer) => {
    chunks.push(d);
    if (!ready && Buffer.concat(chunks).includes('"event":"ready"')) {
      ready = true;
      proc.stdin!.write('go\n');
    }
  });
  const code = await new Promise<number | null>((resolve) => proc.once('close', (c) => resolve(c)));
  const conns: ConnResult[] = [];
  let goAt = NaN;
  let done = false;
  for (const line of Buffer.concat(chunks).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const m = JSON.parse(line) as { event: string; at?: number } & ConnResult;
    if (m.event === 'go') goAt = m.at!;
    else if (m.event === 'conn') conns.push(m);
    else if (m.event === 'done') done = true;
  }
  if (!done || conns.length !== cfg.sessions.length * cfg.perSession)
    throw new Error(
      `the subscriber process (exit ${code}) reported ${conns.length} connections of ${cfg.sessions.length * cfg.perSession}: ${err}`,
    );
  return { goAt, conns };
}

/** The fake's request that carried a session's turn (its message names the session). */
function requestOf(fake: FakeProvider, session: string): FakeRequest | undefined {
  return fake.requests.find((r) => r.raw.includes(`bench turn for ${session}"`));
}

/** Per-delta latency at each connection: frame received − provider wrote that delta. */
function latencies(fake: FakeProvider, conns: ConnResult[]): { ms: number[]; missing: number } {
  const ms: number[] = [];
  let missing = 0;
  for (const c of conns) {
    const req = requestOf(fake, c.session);
    if (!req || !c.text_ok) {
      missing++;
      continue;
    }
    for (let i = 0; i < c.delivered.length; i++) {
      const at = c.delivered[i];
      const sent = req.textAt[i];
      if (at === null || at === undefined || sent === undefined) missing++;
      else ms.push(at - perfToMono(sent));
    }
  }
  return { ms, missing };
}

// ---------------------------------------------------------------- 2. fan-out

async function fanoutBench(): Promise<{
  ok: boolean;
  summary: Record<string, Record<string, number>>;
}> {
  const subscribers = Math.max(1, envInt('BENCH_FANOUT_SUBSCRIBERS', 100));
  const n = Math.max(1, envInt('BENCH_FANOUT_DELTAS', 2000));
  const fake = await startFakeProvider({ apiKey: API_KEY });
  const summary: Record<string, Record<string, number>> = {};
  let ok = true;
  let k = 0;
  try {
    await withServers(fake, async (...servers) => {
      for (const mode of [
        { name: 'paced', delayMs: 1 },
        { name: 'burst', delayMs: 0 },
      ]) {
        for (const s of servers) {
          const session = await s.newSession();
          fake.reset();
          fake.enqueue({
            parts: [{ text: deltasOf(++k, n) }],
            usage: { input: 10, output: n },
            ...(mode.delayMs ? { delayMs: mode.delayMs } : {}),
          });
          note(`fanout ${mode.name}: ${s.name}, ${subscribers} subscribers, ${n} deltas`);
          const { goAt, conns } = await runClients({
            port: s.port,
            sessions: [session],
            perSession: subscribers,
            n,
          });
          const req = requestOf(fake, session);
          const lat = latencies(fake, conns);
          const allDelivered = conns.every((c) => c.text_ok);
          const inOrder = conns.every((c) => c.seq_ok && c.order_ok);
          const frames = conns.map((c) => c.frames);
          const endAt = Math.max(...conns.map((c) => c.completedAt ?? NaN));
          const good = allDelivered && inOrder && lat.missing === 0 && fake.requests.length === 1;
          if (!good) ok = false;
          const key = `${s.name}_${mode.name}`;
          summary[key] = dist(lat.ms);
          emit({
            bench: 'turns',
            kind: 'fanout',
            target: s.name,
            mode: mode.name,
            subscribers,
            deltas: n,
            provider_delay_ms: mode.delayMs,
            all_delivered: allDelivered,
            in_order: inOrder,
            subscribers_failed: conns.filter((c) => !(c.text_ok && c.seq_ok && c.order_ok)).length,
            ends: [...new Set(conns.map((c) => c.end))],
            frames_per_subscriber: { min: Math.min(...frames), max: Math.max(...frames) },
            delivery_latency_ms: dist(lat.ms),
            samples_missing: lat.missing,
            provider_stream_ms: req ? round(req.textAt.at(-1)! - req.textAt[0]!, 1) : null,
            turn_ms: round(endAt - goAt, 1),
            ok: good,
          });
          if (!good)
            emit({
              bench: 'turns',
              kind: 'error',
              part: 'fanout',
              target: s.name,
              mode: mode.name,
              sample: conns.find((c) => !(c.text_ok && c.seq_ok && c.order_ok)) ?? null,
              provider_requests: fake.requests.length,
            });
        }
      }
    });
  } finally {
    await fake.close();
  }
  return { ok, summary };
}

// ---------------------------------------------------------------- 3. concurrent sessions

async function concurrentBench(): Promise<{ ok: boolean; summary: Record<string, number> }> {
  const sessionsN = Math.max(1, envInt('BENCH_SESSIONS', 20));
  const n = Math.max(1, envInt('BENCH_SESSION_DELTAS', 1000));
  const rounds = Math.max(1, envInt('BENCH_CONCURRENT_ROUNDS', 3));
  const fake = await startFakeProvider({ apiKey: API_KEY });
  const tput: Record<string, number[]> = { svc: [], relay: [], base: [] };
  let ok = true;
  let k = 0;
  try {
    await withServers(fake, async (...servers) => {
      for (let r = 0; r < rounds; r++) {
        for (const s of r % 2 ? [...servers].reverse() : servers) {
          const sessions: string[] = [];
          for (let i = 0; i < sessionsN; i++) sessions.push(await s.newSession());
          fake.reset();
          for (let i = 0; i < sessionsN; i++)
            fake.enqueue({ parts: [{ text: deltasOf(++k, n) }], usage: { input: 10, output: n } });
          note(
            `concurrent round ${r + 1}/${rounds}: ${s.name}, ${sessionsN} sessions × ${n} deltas`,
          );
          const { goAt, conns } = await runClients({ port: s.port, sessions, perSession: 1, n });
          const lost = conns.filter((c) => !c.text_ok || c.end !== 'turn.completed').length;
          const reordered = conns.filter((c) => !c.seq_ok || !c.order_ok).length;
          const ks = conns.map((c) => c.k);
          const distinct = new Set(ks).size === ks.length && !ks.includes(null);
          const endAt = Math.max(...conns.map((c) => c.completedAt ?? NaN));
          const seconds = (endAt - goAt) / 1000;
          const deltas = conns.reduce((a, c) => a + (c.text_ok ? n : 0), 0);
          const frames = conns.reduce((a, c) => a + c.frames, 0);
          const chars = conns.reduce((a, c) => a + c.delta_chars, 0);
          const lat = latencies(fake, conns);
          const good =
            lost === 0 &&
            reordered === 0 &&
            distinct &&
            lat.missing === 0 &&
            fake.requests.length === sessionsN;
          if (!good) ok = false;
          tput[s.name]!.push(deltas / seconds);
          emit({
            bench: 'turns',
            kind: 'concurrent',
            target: s.name,
            round: r + 1,
            sessions: sessionsN,
            deltas_per_session: n,
            sessions_lost_events: lost,
            sessions_reordered: reordered,
            texts_distinct: distinct,
            wall_ms: round(endAt - goAt, 1),
            deltas_per_s: round(deltas / seconds),
            frames_per_s: round(frames / seconds),
            delta_chars_per_s: round(chars / seconds),
            frames_per_session: round(frames / sessionsN, 1),
            delivery_latency_ms: dist(lat.ms),
            ok: good,
          });
          if (!good)
            emit({
              bench: 'turns',
              kind: 'error',
              part: 'concurrent',
              target: s.name,
              sample: conns.find((c) => !(c.text_ok && c.seq_ok && c.order_ok)) ?? null,
              provider_requests: fake.requests.length,
            });
        }
      }
    });
  } finally {
    await fake.close();
  }
  // Median over rounds: on a shared machine one round can lose the CPU to a neighbour.
  return {
    ok,
    summary: {
      svc_deltas_per_s: round(median(tput.svc!)),
      relay_deltas_per_s: round(median(tput.relay!)),
    },
  };
}

// ---------------------------------------------------------------- 4. the gateway's CPU per delta

/** One turn of `n` deltas to one subscriber; the gateway's CPU milliseconds it took, or null when the text did not arrive whole. */
async function cpuTurn(
  s: Server,
  fake: FakeProvider,
  k: number,
  n: number,
  delayMs: number,
): Promise<number | null> {
  const session = await s.newSession();
  const conn = await WsConn.open(s.port, [`session:${session}`]);
  const pid = await s.gatewayPid!();
  fake.reset();
  const deltas = deltasOf(k, n);
  fake.enqueue({
    parts: [{ text: deltas }],
    usage: { input: 10, output: n },
    ...(delayMs ? { delayMs } : {}),
  });
  let text = '';
  const done = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${s.name}: a cpu turn did not end in ${TURN_TIMEOUT_MS} ms`)),
      TURN_TIMEOUT_MS,
    );
    conn.onEvent = (e) => {
      if (e.type === 'turn.text_delta') text += String(e.data.delta);
      if (
        e.type === 'turn.completed' ||
        e.type === 'turn.failed' ||
        e.type === 'turn.interrupted'
      ) {
        clearTimeout(timer);
        resolve(e.type);
      }
    };
  });
  const before = cpuSeconds(pid);
  conn.turn(session, `cpu turn ${k}`);
  const end = await done;
  const ms = (cpuSeconds(pid) - before) * 1000;
  conn.close();
  return end === 'turn.completed' && text === deltas.join('') ? ms : null;
}

async function gatewayCpuBench(): Promise<{
  ok: boolean;
  summary: Record<string, Record<string, number>>;
}> {
  const n = Math.max(1, envInt('BENCH_CPU_DELTAS', 2000));
  const rounds = Math.max(1, envInt('BENCH_CPU_ROUNDS', 3));
  const fake = await startFakeProvider({ apiKey: API_KEY });
  const summary: Record<string, Record<string, number>> = {};
  let ok = true;
  let k = 0;
  try {
    await withServers(fake, async (...servers) => {
      const svcs = servers.filter((s) => s.gatewayPid);
      for (const mode of [
        { name: 'paced', delayMs: 2 },
        { name: 'burst', delayMs: 0 },
      ]) {
        const per: Record<string, number[]> = {};
        for (let r = 0; r < rounds; r++)
          for (const s of r % 2 ? [...svcs].reverse() : svcs) {
            note(`gateway_cpu ${mode.name} ${r + 1}/${rounds}: ${s.name}, ${n} deltas`);
            const ms = await cpuTurn(s, fake, ++k, n, mode.delayMs);
            if (ms === null) {
              ok = false;
              emit({ bench: 'turns', kind: 'error', part: 'gateway_cpu', target: s.name });
              continue;
            }
            (per[s.name] ??= []).push((ms * 1000) / n);
          }
        for (const [name, xs] of Object.entries(per)) {
          summary[`${name}_${mode.name}`] = { median: round(median(xs), 1), n: xs.length };
          emit({
            bench: 'turns',
            kind: 'gateway_cpu',
            target: name,
            mode: mode.name,
            deltas_per_turn: n,
            provider_delay_ms: mode.delayMs,
            gateway_cpu_ms_per_1000_deltas: xs.map((x) => round(x, 1)),
            median: round(median(xs), 1),
            clock_tick_ms: 10,
          });
        }
      }
    });
  } finally {
    await fake.close();
  }
  return { ok, summary };
}

// ---------------------------------------------------------------- the run

export async function runTurns(): Promise<{ ok: boolean }> {
  const known = ['latency', 'fanout', 'concurrent', 'gateway_cpu'];
  const parts = (process.env.BENCH_PARTS ?? known.slice(0, 3).join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const p of parts)
    if (!known.includes(p))
      throw new Error(
        `BENCH_PARTS names an unknown part ${JSON.stringify(p)}; known: ${known.join(', ')}`,
      );
  // Both gateway engines by default, each against the same relay baseline (which needs native uWS).
  const engines = (process.env.BENCH_TURN_ENGINES ?? 'uws,node')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of engines)
    if (e !== 'uws' && e !== 'node')
      throw new Error(
        `BENCH_TURN_ENGINES names an unknown engine ${JSON.stringify(e)}; known: uws, node`,
      );
  const uws = loadUws();
  if ('error' in uws)
    throw new Error(`the relay baseline needs uWebSockets.js's native binary: ${uws.error}`);
  let ok = true;
  const byEngine: Record<string, Record<string, unknown>> = {};
  const pass: Record<string, boolean> = {};
  for (const engine of engines as Array<'uws' | 'node'>) {
    svcEngine = engine;
    for (const k of Object.keys(warmRefusals)) delete warmRefusals[k];
    for (const k of Object.keys(warmRetries)) delete warmRetries[k];
    emit({
      bench: 'turns',
      kind: 'config',
      machine: machine(),
      parts,
      baseline:
        'bench/turn-relay.ts: bare uWebSockets.js relay, same fake provider, same HTTP client (undici), no batching',
    });
    const r = await turnsOnEngine(parts);
    ok &&= r.ok;
    byEngine[engine] = r.ratios;
    for (const [k, v] of Object.entries(r.pass)) pass[`${engine}.${k}`] = v;
  }
  emitLine({
    bench: 'turns',
    kind: 'ratios',
    ...byEngine,
    pass,
    all_targets_met: Object.keys(pass).length ? Object.values(pass).every(Boolean) : null,
    measurements_clean: ok,
  });
  return { ok };
}

/** The chosen parts against svc on `svcEngine`; its ratios and goals. */
async function turnsOnEngine(
  parts: string[],
): Promise<{ ok: boolean; ratios: Record<string, unknown>; pass: Record<string, boolean> }> {
  let ok = true;
  const ratios: Record<string, unknown> = {};
  const pass: Record<string, boolean> = {};
  for (const part of parts) {
    const t0 = mono();
    try {
      if (part === 'latency') {
        const r = await latencyBench();
        ok &&= r.ok;
        const svc = r.summary.svc!;
        const relay = r.summary.relay!;
        ratios['first_delta_p50/relay'] = round(svc.p50! / relay.p50!, 2);
        ratios['first_delta_p99/relay'] = round(svc.p99! / relay.p99!, 2);
        ratios['first_delta_p50/ws_ping_rtt_p50'] = round(svc.p50! / r.summary.ping!.p50!, 1);
        ratios.first_delta_p50_ms = svc.p50;
        ratios.first_delta_p99_ms = svc.p99;
        ratios.first_delta_target = `p50 <= ${LATENCY_TARGET.p50} ms, p99 <= ${LATENCY_TARGET.p99} ms`;
        pass.first_delta_p50 = svc.p50! <= LATENCY_TARGET.p50;
        pass.first_delta_p99 = svc.p99! <= LATENCY_TARGET.p99;
        const base = r.summary.base;
        if (base) {
          ratios.base_first_delta_p50_ms = base.p50;
          ratios.base_first_delta_p99_ms = base.p99;
          ratios['first_delta_p50/base'] = round(svc.p50! / base.p50!, 2);
          ratios['first_delta_p99/base'] = round(svc.p99! / base.p99!, 2);
        }
      } else if (part === 'gateway_cpu') {
        const r = await gatewayCpuBench();
        ok &&= r.ok;
        for (const mode of ['paced', 'burst']) {
          const a = r.summary[`svc_${mode}`];
          const b = r.summary[`base_${mode}`];
          if (a) ratios[`gateway_cpu_ms_per_1000_deltas_${mode}`] = a.median;
          if (b) ratios[`base_gateway_cpu_ms_per_1000_deltas_${mode}`] = b.median;
          if (a && b) ratios[`gateway_cpu_${mode}/base`] = round(a.median! / b.median!, 2);
        }
      } else if (part === 'fanout') {
        const r = await fanoutBench();
        ok &&= r.ok;
        for (const mode of ['paced', 'burst']) {
          const a = r.summary[`svc_${mode}`];
          const b = r.summary[`relay_${mode}`];
          if (a && b) {
            ratios[`fanout_${mode}_p99_ms`] = a.p99;
            ratios[`fanout_${mode}_p99/relay`] = round(a.p99! / b.p99!, 2);
          }
        }
        pass.fanout_all_delivered_in_order = r.ok;
      } else {
        const r = await concurrentBench();
        ok &&= r.ok;
        ratios.concurrent_svc_deltas_per_s_median = r.summary.svc_deltas_per_s;
        ratios.concurrent_relay_deltas_per_s_median = r.summary.relay_deltas_per_s;
        ratios['concurrent_throughput/relay'] = round(
          r.summary.svc_deltas_per_s! / r.summary.relay_deltas_per_s!,
          2,
        );
        pass.concurrent_no_lost_or_reordered = r.ok;
      }
    } catch (err) {
      ok = false;
      emit({
        bench: 'turns',
        kind: 'error',
        part,
        error: (err as Error).stack ?? (err as Error).message,
      });
    }
    note(`${part} (${svcEngine} engine): ${round((mono() - t0) / 1000, 1)} s`);
  }
  // Not a measurement: how often a turn sent right after the previous turn.completed was refused.
  emit({
    bench: 'turns',
    kind: 'warm_up',
    turn_in_progress_refusals: { svc: warmRefusals.svc ?? 0, relay: warmRefusals.relay ?? 0 },
    worker_not_ready_retries: { svc: warmRetries.svc ?? 0 },
  });
  return { ok, ratios, pass };
}

if (process.argv[2] === '--clients') {
  clientsMain(JSON.parse(process.argv[3]!) as ClientsConfig).catch((err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(2);
  });
} else if (isMain(import.meta.url)) {
  runTurns().then(
    (r) => process.exit(r.ok ? 0 : 1),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(2);
    },
  );
}
