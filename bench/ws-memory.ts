import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import { startFakeProvider } from '../test/fixtures/fake-provider.js';
import { api } from '../test/helpers/api.js';
import {
  emit,
  envInt,
  get,
  isMain,
  machine,
  note,
  removeLater,
  round,
  sleep,
  startSvc,
  type Svc,
} from './lib.js';

/**
 * Issue 31, defect 6: does the gateway's heap grow with every chat, and does the supervisor's
 * level off? The real `svc serve` and the fake provider (its default reply):
 *
 *   gateway     V8 heap after a full GC: before, after BENCH_WS_SESSIONS (300) chats of one turn
 *               each, and once their /ws topics were idle for limits.ws_idle_topic_seconds
 *               (BENCH_WS_IDLE_S, 10 here; 300 by default in svc) with nobody following them.
 *               BENCH_WS_IDLE_S=3600 keeps every topic through the run, as the hub did before.
 *   supervisor  V8 heap after a full GC every 100 turns, up to BENCH_SUP_TURNS (500).
 *
 * The heap is read over the inspector (SIGUSR1 opens it on 127.0.0.1:9229; the bench checks it
 * is the right pid, forces a GC, reads the heap, and closes it again), so it needs port 9229.
 *
 *   node dist/bench/ws-memory.js
 */

const KEY = 'sk-bench-ws-memory';

/** The heap a process uses after a full GC, through its inspector (opened and closed again). */
async function heapAfterGc(pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR1');
  let url: string | undefined;
  for (let i = 0; i < 200 && !url; i++) {
    await sleep(50);
    try {
      const list = JSON.parse((await get({ port: 9229, path: '/json/list' })).body) as Array<{
        webSocketDebuggerUrl: string;
      }>;
      url = list[0]?.webSocketDebuggerUrl;
    } catch {
      // not open yet
    }
  }
  if (!url) throw new Error('no inspector on 127.0.0.1:9229 (is the port in use?)');
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)));
  });
  let next = 1;
  const pending = new Map<number, (m: { result?: any; error?: unknown }) => void>();
  ws.addEventListener('message', (ev) => {
    const m = JSON.parse(String(ev.data)) as { id?: number; result?: any; error?: unknown };
    if (m.id !== undefined) pending.get(m.id)?.(m);
  });
  const send = (method: string, params: Record<string, unknown> = {}): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, (m) =>
        m.error ? reject(new Error(`${method}: ${JSON.stringify(m.error)}`)) : resolve(m.result),
      );
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    const who = await send('Runtime.evaluate', { expression: 'process.pid', returnByValue: true });
    if (who.result.value !== pid)
      throw new Error(`the inspector on 9229 is pid ${who.result.value}, not ${pid}`);
    await send('HeapProfiler.collectGarbage');
    await send('HeapProfiler.collectGarbage');
    const usage = (await send('Runtime.getHeapUsage')) as { usedSize: number };
    // Closes the inspector, so the next process can open its own on the same port.
    await send('Runtime.evaluate', { expression: 'setTimeout(() => process._debugEnd(), 10)' });
    return usage.usedSize;
  } finally {
    ws.close();
    // wait for the port to be free again
    for (let i = 0; i < 100; i++) {
      try {
        await get({ port: 9229, path: '/json/list' });
        await sleep(50);
      } catch {
        break;
      }
    }
  }
}

const mb = (bytes: number) => round(bytes / 1e6, 1);

async function turns(svc: Svc, n: number, sessions: string[], newChats: boolean): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (newChats) {
      const r = await api(svc.port, 'POST', '/api/chat', { message: `hello ${i}` });
      if (r.status !== 201) throw new Error(`chat ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      sessions.push(r.body.session_id as string);
    } else {
      const id = sessions[i % sessions.length]!;
      const r = await api(svc.port, 'POST', `/api/chat/${id}/turn`, { message: `again ${i}` });
      if (r.status !== 200) throw new Error(`turn ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  }
}

export async function wsMemory(): Promise<void> {
  const nSessions = envInt('BENCH_WS_SESSIONS', 300);
  const supTurns = envInt('BENCH_SUP_TURNS', 500);
  const idleS = envInt('BENCH_WS_IDLE_S', 10);
  const fake = await startFakeProvider({ apiKey: KEY });
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-wsmem-'));
  removeLater(home);
  writeFileSync(join(home, 'config.yml'), `limits:\n  ws_idle_topic_seconds: ${idleS}\n`);
  const svc = await startSvc({ home });
  try {
    const add = await api(svc.port, 'POST', '/api/config/models', {
      id: 'm',
      provider: 'custom',
      protocol: 'openai',
      base_url: fake.baseUrl('openai'),
      model: 'fake',
      api_key: KEY,
    });
    if (add.status !== 201) throw new Error(`model: ${JSON.stringify(add.body)}`);
    await api(svc.port, 'PUT', '/api/config/models/default', { model_id: 'm' });
    const pids = async () => {
      const s = await svc.status();
      const of = (role: string) => s.processes.find((p) => p.role === role)?.pid ?? 0;
      return { gateway: of('gateway'), supervisor: svc.pid };
    };
    const counters = async () =>
      (
        (await svc.status()).processes.find((p) => p.role === 'gateway') as
          | { counters?: Record<string, number> }
          | undefined
      )?.counters;

    // A first turn so that every process has loaded what a turn needs.
    const sessions: string[] = [];
    await turns(svc, 1, sessions, true);
    const { gateway, supervisor } = await pids();
    const gw0 = await heapAfterGc(gateway);
    const sup: Array<{ turns: number; heap_mb: number }> = [
      { turns: 0, heap_mb: mb(await heapAfterGc(supervisor)) },
    ];
    note(`${nSessions} chats of one turn`);
    let done = 0;
    for (let k = 0; k < nSessions; k += 100) {
      await turns(svc, Math.min(100, nSessions - k), sessions, true);
      done += Math.min(100, nSessions - k);
      sup.push({ turns: done, heap_mb: mb(await heapAfterGc(supervisor)) });
    }
    const gw1 = await heapAfterGc(gateway);
    const kept = await counters();
    // An idle time past two minutes stands for the hub that kept every topic: no wait for it.
    const wait = idleS <= 120;
    if (wait) note(`waiting ${idleS} s (+ the sweep) for the idle topics to go`);
    const t0 = Date.now();
    let after = kept;
    while (wait && Date.now() - t0 < (idleS + 60) * 1000) {
      await sleep(1000);
      after = await counters();
      if ((after?.ws_kept_events ?? 1) === 0) break;
    }
    const gw2 = await heapAfterGc(gateway);
    emit({
      bench: 'ws-memory',
      part: 'gateway',
      sessions: nSessions,
      heap_before_mb: mb(gw0),
      heap_after_turns_mb: mb(gw1),
      heap_after_idle_mb: mb(gw2),
      grew_with_turns_mb: mb(gw1 - gw0),
      grew_after_idle_mb: mb(gw2 - gw0),
      per_100_sessions_kept_mb: round((((gw1 - gw0) / nSessions) * 100) / 1e6, 2),
      counters_after_turns: kept,
      counters_after_idle: after,
      idle_seconds: idleS,
      machine: machine(),
    });
    note(`${supTurns - done} more turns in the same chats`);
    while (done < supTurns) {
      const n = Math.min(100, supTurns - done);
      await turns(svc, n, sessions, false);
      done += n;
      sup.push({ turns: done, heap_mb: mb(await heapAfterGc(supervisor)) });
    }
    emit({ bench: 'ws-memory', part: 'supervisor', heap_by_turns: sup });
  } finally {
    await svc.stop();
    await fake.close();
  }
}

if (isMain(import.meta.url))
  wsMemory().then(
    () => process.exit(0),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(1);
    },
  );
