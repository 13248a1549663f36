import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { budgetsSchema } from '../src/shared/config/budgets.js';
import { openAndMigrate } from '../src/shared/store/db.js';
import { appendMessage } from '../src/shared/store/messages.js';
import { createSession } from '../src/shared/store/sessions.js';
import { insertUsage, type UsageRecordInput } from '../src/shared/store/usage.js';
import { checkCall, dueWarnings, limitStates } from '../src/shared/usage/budgets.js';
import { startFakeProvider } from '../test/fixtures/fake-provider.js';
import { api } from '../test/helpers/api.js';
import { emit, envInt, machine, median, note, removeLater, startSvc } from './lib.js';

/**
 * What recording usage (issue 33) costs a turn, against the same work without it, in one run.
 *
 *   store   the agent's store work for one model call, in-process on a real svc.db: today's
 *           commit of the reply (appendMessage) vs the same commit with its usage row in the
 *           transaction, and vs that plus the budget check before the call and the warning
 *           check after it (daily, monthly and session limits set: every query runs).
 *           BENCH_USAGE_OPS (2000) calls per variant per round, BENCH_USAGE_ROUNDS (5) rounds,
 *           variants interleaved, so drift in machine load evens out.
 *   turn    whole turns through the real svc serve and the fake provider (POST /api/chat/{id}/turn,
 *           waiting): budgets unset vs daily + monthly + session limits set (usage is recorded in
 *           both: it cannot be switched off), BENCH_USAGE_TURNS (40) per variant per round,
 *           alternating in batches of 10.
 *
 *   node dist/bench/usage.js
 */

const OPS = envInt('BENCH_USAGE_OPS', 2000);
const ROUNDS = envInt('BENCH_USAGE_ROUNDS', 5);
const TURNS = envInt('BENCH_USAGE_TURNS', 40);

const budgets = budgetsSchema.parse({
  daily: { usd: 1000, tokens: 1e11 },
  monthly: { usd: 10_000 },
  session: { tokens: 1e11 },
});
const scope = (sessionId: string) => ({ sessionId, cronTask: null, channel: null });

function usageRow(sessionId: string): UsageRecordInput {
  return {
    at: new Date().toISOString(),
    session_id: sessionId,
    turn_id: 't_bench',
    model_id: 'm',
    provider: 'custom',
    model: 'fake',
    origin: 'chat',
    channel: null,
    cron_task: null,
    workflow_run: null,
    status: 'ok',
    streamed: true,
    tokens: { input: 1000, cachedInput: 200, cacheWrite: 0, output: 50, reasoning: null },
    estimated_tokens: 9000,
    cost_usd: 0.0001,
    latency_ms: 800,
  };
}

function storeBench(): void {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-usage-'));
  removeLater(home);
  const { db } = openAndMigrate(join(home, 'svc.db'));
  const session = createSession(db).id;
  const content = { text: 'A reply of a typical length. '.repeat(20), stop_reason: 'end_turn' };
  const variants: Record<string, () => void> = {
    baseline: () => {
      appendMessage(db, session, { role: 'assistant', content });
    },
    recorded: () => {
      db.transaction(() => {
        appendMessage(db, session, { role: 'assistant', content });
        insertUsage(db, usageRow(session));
      }).immediate();
    },
    recorded_with_budgets: () => {
      checkCall(limitStates(db, budgets, scope(session)), { tokens: 9000, usd: 0.001 });
      db.transaction(() => {
        appendMessage(db, session, { role: 'assistant', content });
        insertUsage(db, usageRow(session));
      }).immediate();
      dueWarnings(db, limitStates(db, budgets, scope(session)), budgets.warn_at);
    },
  };
  const perOp: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, fn] of Object.entries(variants)) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < OPS; i++) fn();
      const us = Number(process.hrtime.bigint() - t0) / 1000 / OPS;
      (perOp[name] ??= []).push(us);
    }
  db.close();
  const base = median(perOp.baseline!);
  for (const [name, xs] of Object.entries(perOp))
    emit({
      bench: 'usage',
      part: 'store',
      variant: name,
      us_per_call_median: Number(median(xs).toFixed(1)),
      rounds_us: xs.map((x) => Number(x.toFixed(1))),
      ratio_vs_baseline: Number((median(xs) / base).toFixed(2)),
      added_us: Number((median(xs) - base).toFixed(1)),
    });
}

async function turnBench(): Promise<void> {
  const fake = await startFakeProvider();
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-usage-'));
  removeLater(home);
  const svc = await startSvc({ home });
  try {
    const port = svc.port;
    const m = await api(port, 'POST', '/api/config/models', {
      id: 'fake',
      provider: 'custom',
      protocol: 'openai',
      base_url: `${fake.url}/v1`,
      model: 'fake',
      prices: { input: 1, output: 2 },
    });
    if (m.status !== 201) throw new Error(JSON.stringify(m.body));
    await api(port, 'PUT', '/api/config/models/default', { model_id: 'fake' });
    const id = (await api(port, 'POST', '/api/chat', {})).body.session_id as string;
    const times: Record<string, number[]> = { budgets_off: [], budgets_on: [] };
    const turn = async () => {
      const t0 = performance.now();
      const r = await api(port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' });
      if (r.body?.status !== 'completed') throw new Error(JSON.stringify(r.body));
      return performance.now() - t0;
    };
    for (let i = 0; i < 10; i++) await turn(); // warm-up: the worker, its caches
    for (let round = 0; round < TURNS / 10; round++)
      for (const variant of ['budgets_off', 'budgets_on'] as const) {
        const put = await api(
          port,
          'PUT',
          '/api/budgets',
          variant === 'budgets_on'
            ? { daily: budgets.daily, monthly: budgets.monthly, session: budgets.session }
            : {},
        );
        if (put.status !== 200) throw new Error(JSON.stringify(put.body));
        for (let i = 0; i < 10; i++) times[variant]!.push(await turn());
      }
    const off = median(times.budgets_off!);
    for (const [name, xs] of Object.entries(times))
      emit({
        bench: 'usage',
        part: 'turn',
        variant: name,
        turns: xs.length,
        ms_median: Number(median(xs).toFixed(2)),
        ratio_vs_budgets_off: Number((median(xs) / off).toFixed(3)),
      });
  } finally {
    await svc.stop();
    await fake.close();
  }
}

emit({
  bench: 'usage',
  kind: 'config',
  ops: OPS,
  rounds: ROUNDS,
  turns: TURNS,
  machine: machine(),
});
note("store: one model call's store work, with and without its usage record");
storeBench();
note('turn: whole turns, budgets off and on');
await turnBench();
