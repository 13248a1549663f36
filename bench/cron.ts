import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeProvider } from '../test/fixtures/fake-provider.js';
import { api } from '../test/helpers/api.js';
import { startServer } from '../test/helpers/server.js';
import {
  emit,
  envInt,
  machine,
  median,
  note,
  pssBytes,
  removeLater,
  round,
  sleep,
  svcStatus,
} from './lib.js';

/**
 * Scheduled tasks through the real server: the cron worker fires a one-second schedule and each
 * run is a turn like a chat's. Measured against a chat turn of the same reply (POST
 * /api/chat/{id}/turn, waiting) in the same run:
 *
 *   fire_delay   scheduled time → run recorded as started (croner's timer, the store's checks)
 *   run          run started → run ended (session made, turn through the supervisor, reply saved)
 *   memory       the cron worker's PSS beside an agent worker's (it must stay small: no agent code)
 *
 *   BENCH_CRON_RUNS (20) runs and as many chat turns.
 */

const KEY = 'sk-bench-cron';
const N = envInt('BENCH_CRON_RUNS', 20);

const fake = await startFakeProvider({ apiKey: KEY });
const home = mkdtempSync(join(tmpdir(), 'svc-bench-cron-'));
removeLater(home);
// The test helper's start (it knows both engines' start lines).
const svc = await startServer({ home, env: { SVC_LOG_LEVEL: 'warn' } });
try {
  const port = svc.port;
  const must = async (method: string, path: string, body?: unknown) => {
    const r = await api(port, method, path, body);
    if (r.status >= 300)
      throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  await must('POST', '/api/config/models', {
    id: 'oa',
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake',
    api_key: KEY,
  });
  await must('PUT', '/api/config/models/default', { model_id: 'oa' });

  // Baseline: chat turns, one at a time.
  const sid = (await must('POST', '/api/chat', {})).session_id as string;
  await must('POST', `/api/chat/${sid}/turn`, { message: 'warm up' });
  const chat: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await must('POST', `/api/chat/${sid}/turn`, { message: `turn ${i}` });
    chat.push(performance.now() - t0);
  }

  const task = await must('POST', '/api/tasks', {
    kind: 'cron',
    name: 'bench',
    schedule: '* * * * * *',
    prompt: 'tick',
  });
  const runsOf = async () =>
    (await must('GET', `/api/tasks/${task.id}/runs`)).items as Array<{
      status: string;
      scheduled_for: string;
      started_at: string;
      ended_at: string | null;
    }>;
  let runs = await runsOf();
  const until = Date.now() + (N + 30) * 3000;
  while (runs.filter((r) => r.status === 'completed').length < N + 1 && Date.now() < until) {
    await sleep(500);
    runs = await runsOf();
  }
  const st = (await svcStatus(home)) as { processes: Array<{ role: string; pid: number }> };
  const pssOf = (role: string) => {
    const p = st.processes.find((x) => x.role === role && x.pid > 0);
    return p ? pssBytes(p.pid) : null;
  };
  const cronPss = pssOf('cron');
  const agentPss = pssOf('agent');
  await must('PATCH', `/api/tasks/${task.id}`, { enabled: false });

  // The first run is left out (the worker had just started).
  const done = runs
    .filter((r) => r.status === 'completed' && r.ended_at !== null)
    .sort((a, b) => a.started_at.localeCompare(b.started_at))
    .slice(1, N + 1);
  if (done.length < N) note(`only ${done.length} runs completed in time`);
  const fire = done.map((r) => Date.parse(r.started_at) - Date.parse(r.scheduled_for));
  const run = done.map((r) => Date.parse(r.ended_at!) - Date.parse(r.started_at));
  emit({
    bench: 'cron',
    kind: 'result',
    runs: done.length,
    fire_delay_ms: { median: round(median(fire), 1), max: Math.max(...fire) },
    run_ms: { median: round(median(run), 1), max: Math.max(...run) },
    chat_turn_ms: { median: round(median(chat), 1), max: round(Math.max(...chat), 1) },
  });
  emit({
    bench: 'cron',
    kind: 'memory',
    cron_pss_mib: cronPss === null ? null : round(cronPss / 1048576, 1),
    agent_pss_mib: agentPss === null ? null : round(agentPss / 1048576, 1),
  });
  const runRatio = round(median(run) / median(chat), 2);
  const memRatio = cronPss !== null && agentPss !== null ? round(cronPss / agentPss, 2) : null;
  emit({
    bench: 'cron',
    kind: 'ratios',
    run_vs_chat_turn: runRatio,
    cron_vs_agent_memory: memRatio,
    fire_delay_median_ms: round(median(fire), 1),
    // Targets: a cron run costs about what a chat turn does; the worker is a fraction of an agent's memory; it fires within a second.
    all_targets_met: runRatio <= 2 && (memRatio === null || memRatio <= 0.6) && median(fire) < 1000,
    machine: machine(),
  });
} finally {
  await svc.stop();
  await fake.close();
}
process.exit(0);
