import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeReply, FakeUsage } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { createRequire } from 'node:module';
import { http, waitFor } from '../helpers/server.js';
import {
  connectWs,
  KEY,
  newChat,
  startRig,
  type TurnRig,
  type WsClient,
} from '../helpers/turns.js';
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../fixtures/otlp-receiver.js';

/**
 * What the agent spends: every model call is recorded with what the provider reported (both
 * protocols, streamed and not, nothing guessed when it reports nothing), priced when recorded,
 * and checked against the budgets before it is made; a call that could cross a limit is not
 * made at all (the fake provider never sees it).
 */

let rig: TurnRig;
let server: WsClient;
let otlp: OtlpReceiver;
/** A collector's credential in telemetry.otlp.headers: sent to the collector, shown nowhere. */
const OTLP_SECRET = 'Bearer otlp-collector-secret-4242';
test.before(async () => {
  otlp = await startOtlpReceiver();
  rig = await startRig({
    config: [
      'agent:',
      '  max_continuations: 5',
      'telemetry:',
      '  otlp:',
      `    endpoint: ${otlp.url}`,
      `    headers: { Authorization: "${OTLP_SECRET}" }`,
      '',
    ].join('\n'),
  });
  server = await connectWs(rig.port, ['server']);
});
test.after(async () => {
  server?.close();
  await rig?.stop();
  await otlp?.close();
});
test.before.each(async () => {
  rig.fake.reset();
  const r = await api(rig.port, 'PUT', '/api/budgets', {});
  assert.is(r.status, 200, JSON.stringify(r.body));
});

const OA = { input: 2, cached_input: 0.5, output: 8 };
const AN = { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 };

const cost = (u: Required<Omit<FakeUsage, 'reasoning'>>, p: typeof AN | typeof OA) =>
  (u.input * p.input +
    u.cachedInput * p.cached_input +
    u.cacheWrite * ('cache_write' in p ? p.cache_write : p.input) +
    u.output * p.output) /
  1e6;

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} ≠ ${b}`);

async function setLite(id: string | null) {
  const r = await api(rig.port, 'PUT', '/api/config/models/lite', { model_id: id });
  assert.is(r.status, 200, JSON.stringify(r.body));
}

async function spendOf(id: string) {
  const r = await api(rig.port, 'GET', `/api/sessions/${id}`);
  assert.is(r.status, 200);
  return r.body.spend;
}

test('prices are set on a model entry and shown with where they come from', async () => {
  for (const [id, prices] of [
    ['oa', OA],
    ['an', AN],
  ] as const) {
    const r = await api(rig.port, 'PATCH', `/api/config/models/${id}`, { prices });
    assert.is(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.prices, prices);
    assert.is(r.body.prices_source, 'config');
  }
  const bad = await api(rig.port, 'PATCH', '/api/config/models/oa', { prices: { input: -1 } });
  assert.is(bad.status, 400);
  // A built-in price, dated, for a well-known model.
  const known = await api(rig.port, 'POST', '/api/config/models', {
    id: 'known',
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    api_key: 'sk-unused',
  });
  assert.is(known.status, 201, JSON.stringify(known.body));
  assert.is(known.body.prices_source, 'builtin');
  assert.match(known.body.prices_taken, /^\d{4}-\d{2}-\d{2}$/);
  assert.is(known.body.prices.output, 5);
  assert.is((await api(rig.port, 'DELETE', '/api/config/models/known')).status, 200);
});

/** Runs one turn in a new chat with `model`, the lite model titling it; answers the session id. */
async function turnWithTitle(
  model: 'oa' | 'an',
  turn: FakeReply,
  title: FakeReply,
): Promise<string> {
  const other = model === 'oa' ? 'an' : 'oa';
  await setLite(other);
  const id = await newChat(rig.port, { model_id: model });
  rig.fake.enqueue(
    { ...turn, match: { protocol: model === 'oa' ? 'openai' : 'anthropic', stream: true } },
    { ...title, match: { protocol: other === 'oa' ? 'openai' : 'anthropic', stream: false } },
  );
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hello' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  await waitFor(async () => (await spendOf(id)).calls === 2, 10_000, 'the titling call');
  await setLite(null);
  return id;
}

test('exact tokens and cost, both protocols, streamed (the turn) and not (titling)', async () => {
  const oaTurn = { input: 1000, cachedInput: 200, cacheWrite: 0, output: 50, reasoning: 20 };
  const anTitle = { input: 30, cachedInput: 0, cacheWrite: 10, output: 4 };
  const a = await turnWithTitle(
    'oa',
    { parts: [{ text: 'Hi from OpenAI' }], usage: oaTurn },
    { parts: [{ text: 'Greeting' }], usage: anTitle },
  );
  const anTurn = { input: 700, cachedInput: 3000, cacheWrite: 500, output: 80 };
  const oaTitle = { input: 40, cachedInput: 8, cacheWrite: 0, output: 6, reasoning: 2 };
  const b = await turnWithTitle(
    'an',
    { parts: [{ text: 'Hi from Anthropic' }], usage: anTurn },
    { parts: [{ text: 'Greeting' }], usage: oaTitle },
  );
  // The fake was asked for usage in the OpenAI stream.
  const streamed = rig.fake.requests.find((r) => r.protocol === 'openai' && r.stream);
  assert.equal(streamed?.body?.stream_options, { include_usage: true });

  const sa = await spendOf(a);
  assert.is(sa.calls, 2);
  assert.is(sa.unknown_calls, 0);
  assert.is(sa.input_tokens, 1000 + 30);
  assert.is(sa.cached_input_tokens, 200);
  assert.is(sa.cache_write_tokens, 10);
  assert.is(sa.output_tokens, 50 + 4);
  assert.is(sa.reasoning_tokens, 20);
  close(sa.cost_usd, cost(oaTurn, OA) + cost(anTitle, AN), 'session a cost');

  const sb = await spendOf(b);
  assert.is(sb.input_tokens, 700 + 40);
  assert.is(sb.cached_input_tokens, 3000 + 8);
  assert.is(sb.cache_write_tokens, 500);
  assert.is(sb.output_tokens, 80 + 6);
  assert.is(sb.reasoning_tokens, 2);
  close(sb.cost_usd, cost(anTurn, AN) + cost(oaTitle, OA), 'session b cost');

  // The same numbers through /api/usage, grouped by session and by origin.
  const bySession = await api(rig.port, 'GET', '/api/usage?group_by=session');
  assert.is(bySession.status, 200, JSON.stringify(bySession.body));
  const rowA = bySession.body.items.find((i: any) => i.key === a);
  assert.is(rowA.output_tokens, 54);
  close(rowA.cost_usd, sa.cost_usd, 'usage row a');
  const byOrigin = await api(rig.port, 'GET', '/api/usage?group_by=origin');
  const origins = byOrigin.body.items.map((i: any) => i.key);
  assert.ok(origins.includes('chat') && origins.includes('titling'), origins.join());
  // A turn's details carry its spending: its own call and the titling it caused.
  const turns = await api(rig.port, 'GET', `/api/sessions/${a}/turns`);
  assert.is(turns.status, 200, JSON.stringify(turns.body));
  assert.is(turns.body.items.length, 1);
  const [t] = turns.body.items;
  assert.is(t.status, 'completed');
  assert.is(t.first_seq, 1);
  assert.is(t.spend.calls, 2);
  assert.is(t.spend.input_tokens, oaTurn.input + anTitle.input);
  assert.is(t.spend.output_tokens, oaTurn.output + anTitle.output);
  close(t.spend.cost_usd, cost(oaTurn, OA) + cost(anTitle, AN), 'turn cost');
  const one = await api(rig.port, 'GET', `/api/sessions/${a}/turns/${t.turn_id}`);
  close(one.body.spend.cost_usd, t.spend.cost_usd, 'the same turn alone');
  // A deleted session keeps what it spent.
  assert.is((await api(rig.port, 'DELETE', `/api/sessions/${a}`)).status, 200);
  const after = await api(rig.port, 'GET', '/api/usage?group_by=session');
  assert.ok(after.body.items.some((i: any) => i.key === a && i.output_tokens === 54));
});

test('a provider that reports no usage is recorded as unknown, never guessed', async () => {
  const id = await newChat(rig.port, { model_id: 'oa' });
  rig.fake.enqueue({ parts: [{ text: 'no numbers' }], usage: null });
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  const s = await spendOf(id);
  assert.is(s.calls, 1);
  assert.is(s.unknown_calls, 1);
  assert.is(s.input_tokens, 0);
  assert.is(s.output_tokens, 0);
  assert.is(s.cost_usd, 0);
  // Not streamed, Anthropic, no usage: titling by the lite model.
  await setLite('an');
  const t = await newChat(rig.port, { model_id: 'oa' });
  rig.fake.enqueue(
    { parts: [{ text: 'numbers' }], usage: { input: 5, output: 1 }, match: { stream: true } },
    { parts: [{ text: 'Title' }], usage: null, match: { stream: false } },
  );
  await api(rig.port, 'POST', `/api/chat/${t}/turn`, { message: 'hi' });
  await waitFor(async () => (await spendOf(t)).calls === 2, 10_000, 'the titling call');
  await setLite(null);
  const st = await spendOf(t);
  assert.is(st.unknown_calls, 1);
  assert.is(st.input_tokens, 5);
});

const toolCall = (n: number, usage: FakeUsage): FakeReply => ({
  parts: [{ toolCall: { name: 'clock', arguments: JSON.stringify({ n }) } }],
  usage,
});

test('a session budget stops a runaway goal before the call that would cross it; one warning; raising it lets the next turn run', async () => {
  const id = await newChat(rig.port, { model_id: 'an' });
  // 20k tokens reported per call, 100k allowed; each call is estimated at ~16k beforehand (the
  // prompt by characters / 4 plus the output cap). Calls 1-5 fit (after the fourth,
  // 80k: one warning; the fifth, past 80 % too, sends none); the sixth could not fit.
  // A small output cap keeps the estimate (~9k) well below a call's 20k, however the prompt grows.
  const cap = await api(rig.port, 'PATCH', '/api/config/models/an', { max_output_tokens: 1000 });
  assert.is(cap.status, 200);
  const put = await api(rig.port, 'PUT', '/api/budgets', { session: { tokens: 100_000 } });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.equal(put.body.limits.session, { tokens: 100_000 });
  assert.equal(
    (await api(rig.port, 'GET', '/api/budgets')).body,
    put.body,
    'GET reads what PUT set',
  );
  const goal = await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, { objective: 'Loop' });
  assert.is(goal.status, 201);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  const usage = { input: 19_000, output: 1000 };
  // Each turn makes a tool call and reports progress, so the goal goes on and on (a runaway).
  for (let i = 0; i < 6; i++)
    rig.fake.enqueue(toolCall(i, usage), { parts: [{ text: `step ${i}` }], usage });
  const from = rig.fake.requests.length;
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'go' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  const failed = await ws.waitEvent((e) => e.type === 'turn.failed', 'turn.failed');
  const started = ws.events.filter((e) => e.type === 'turn.started');
  assert.equal(
    started.map((e) => e.data.origin),
    ['http', 'goal', 'goal'],
  );
  assert.is(failed.data.turn_id, started[2]!.data.turn_id, 'the continuation was stopped');
  assert.is(failed.data.reason, 'budget_exceeded');
  assert.match(failed.data.message, 'budgets.session');
  assert.match(failed.data.message, '100,000 tokens spent', failed.data.message);
  assert.is(failed.data.budget.scope, 'session');
  assert.is(failed.data.budget.spent, 100_000);
  assert.is(failed.data.budget.limit, 100_000);
  assert.is(failed.data.budget.resets_at, null);
  // No continuation follows a refused turn.
  await waitFor(
    async () =>
      (await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {})).body.turn_id === null,
    10_000,
    'the session to be idle',
  );
  assert.is(rig.fake.requests.length - from, 5, 'the call that would cross the limit was not made');
  const turn = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${failed.data.turn_id}`);
  assert.is(turn.body.error.reason, 'budget_exceeded');
  assert.is(turn.body.spend.calls, 1, 'the refused call is not recorded as made');
  const warnings = server.events.filter(
    (e) => e.type === 'usage.warning' && e.data.key === `session:${id}`,
  );
  assert.is(warnings.length, 1, 'one warning at 80 %');
  assert.is(warnings[0]!.data.unit, 'tokens');
  assert.is(warnings[0]!.data.spent, 80_000);

  // Raised: the next turn runs.
  rig.fake.reset();
  await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, { status: 'paused' });
  await api(rig.port, 'PUT', '/api/budgets', { session: { tokens: 500_000 } });
  rig.fake.enqueue({ parts: [{ text: 'done' }], usage: { input: 10, output: 1 } });
  const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
  assert.is(next.body.status, 'completed', JSON.stringify(next.body));
  assert.is(rig.fake.requests.length, 1);
  await api(rig.port, 'PATCH', '/api/config/models/an', { max_output_tokens: null });
  ws.close();
});

test('a cron task over its budget fails before its first call, with the reason', async () => {
  const put = await api(rig.port, 'PUT', '/api/budgets', { cron_task: { tokens: 50 } });
  assert.is(put.status, 200, JSON.stringify(put.body));
  const t = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Costly',
    schedule: '0 0 1 1 *',
    prompt: 'spend',
    enabled: false,
  });
  assert.is(t.status, 201, JSON.stringify(t.body));
  const from = rig.fake.requests.length;
  const run = await api(rig.port, 'POST', `/api/tasks/${t.body.id}/run`);
  assert.is(run.status, 202, JSON.stringify(run.body));
  const done = await waitFor(
    async () =>
      ((await api(rig.port, 'GET', `/api/tasks/${t.body.id}/runs`)).body.items as any[]).find(
        (x) => x.status !== 'running',
      ),
    20_000,
    'the run to end',
  );
  assert.is(done.status, 'failed');
  assert.match(done.error, 'budgets.cron_task');
  assert.match(done.error, 'resets at');
  assert.is(rig.fake.requests.length, from, 'the provider saw no call');
  // Other turns are not limited by a cron task's budget.
  const id = await newChat(rig.port, { model_id: 'oa' });
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
});

test('GET /api/usage validates its query and pages', async () => {
  const bad = await api(rig.port, 'GET', '/api/usage?group_by=week');
  assert.is(bad.status, 400);
  assert.match(JSON.stringify(bad.body), 'group_by');
  const badDate = await api(rig.port, 'GET', '/api/usage?from=yesterday');
  assert.is(badDate.status, 400);
  const reversed = await api(rig.port, 'GET', '/api/usage?from=2026-02-01&to=2026-01-01');
  assert.is(reversed.status, 400);
  const page1 = await api(rig.port, 'GET', '/api/usage?group_by=session&limit=1');
  assert.is(page1.status, 200);
  assert.is(page1.body.items.length, 1);
  assert.type(page1.body.next_cursor, 'string');
  const page2 = await api(
    rig.port,
    'GET',
    `/api/usage?group_by=session&limit=1&cursor=${page1.body.next_cursor}`,
  );
  assert.is(page2.status, 200);
  assert.is.not(page2.body.items[0].key, page1.body.items[0].key);
  assert.is((await api(rig.port, 'GET', '/api/usage?cursor=nope')).status, 400);
  // A session's turns: newest first, paged; a bad cursor or an unknown session is a 4xx.
  const id = await newChat(rig.port, { model_id: 'oa' });
  for (const [text, input] of [
    ['first', 100],
    ['second', 300],
  ] as const) {
    rig.fake.enqueue({ parts: [{ text }], usage: { input, output: 10 } });
    const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: text });
    assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  }
  const newest = await api(rig.port, 'GET', `/api/sessions/${id}/turns?limit=1`);
  assert.is(newest.status, 200, JSON.stringify(newest.body));
  assert.is(newest.body.items[0].spend.input_tokens, 300);
  const older = await api(
    rig.port,
    'GET',
    `/api/sessions/${id}/turns?limit=1&cursor=${newest.body.next_cursor}`,
  );
  assert.is(older.body.items[0].spend.input_tokens, 100);
  assert.ok(older.body.items[0].first_seq < newest.body.items[0].first_seq);
  assert.is(older.body.next_cursor, null);
  assert.is((await api(rig.port, 'GET', `/api/sessions/${id}/turns?cursor=nope`)).status, 400);
  assert.is((await api(rig.port, 'GET', `/api/sessions/${id}/turns?limit=0`)).status, 400);
  const missing = await api(rig.port, 'GET', '/api/sessions/s_aaaaaaaaaaaaaaaaaaaaa/turns');
  assert.is(missing.status, 404);
  const badBudget = await api(rig.port, 'PUT', '/api/budgets', { daily: {} });
  assert.is(badBudget.status, 400);
  const doc = await api(rig.port, 'GET', '/api/openapi.json');
  assert.ok(JSON.stringify(doc.body).includes('/api/usage'));
});

/** A real Prometheus text-format parser (the package has no types: its output is described here). */
interface PromSample {
  labels?: Record<string, string>;
  value?: string;
  count?: string;
  sum?: string;
  buckets?: Record<string, string>;
}
interface PromFamily {
  name: string;
  type: string;
  metrics: PromSample[];
}
const parseProm = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => PromFamily[];

async function scrape(): Promise<PromFamily[] & { text: string }> {
  const r = await http({ port: rig.port, path: '/api/metrics' });
  assert.is(r.status, 200, r.text);
  assert.match(String(r.headers['content-type']), 'text/plain');
  return Object.assign(parseProm(r.text), { text: r.text });
}

/** The sum of a family's samples whose labels include `labels` (a histogram: its count). */
function sampleSum(families: PromFamily[], name: string, labels: Record<string, string> = {}) {
  const f = families.find((x) => x.name === name);
  if (!f) return 0;
  return f.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((n, m) => n + Number(m.count ?? m.value ?? 0), 0);
}

test('GET /api/metrics parses as Prometheus text and its counters move with the work done', async () => {
  const before = await scrape();
  const id = await newChat(rig.port, { model_id: 'oa' });
  rig.fake.enqueue(toolCall(1, { input: 100, output: 10 }), {
    parts: [{ text: 'It is late.' }],
    usage: { input: 200, cachedInput: 50, output: 20 },
  });
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'time?' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  const after = await scrape();
  const moved = (name: string, labels: Record<string, string> = {}) =>
    sampleSum(after, name, labels) - sampleSum(before, name, labels);
  assert.is(moved('svc_turns_total', { status: 'completed', origin: 'http' }), 1);
  assert.is(moved('svc_turn_duration_seconds'), 1);
  assert.is(moved('svc_turn_first_delta_seconds'), 1);
  assert.is(moved('svc_tool_calls_total', { tool: 'clock' }), 1);
  assert.is(moved('svc_model_calls_total', { model: 'oa', status: 'ok' }), 2);
  // The parser drops the labels (and counts) of a labelled histogram: read its count line.
  const calls = (t: string) =>
    Number(/^svc_model_call_duration_seconds_count\{provider="custom"\} (\d+)$/m.exec(t)?.[1] ?? 0);
  assert.is(calls(after.text) - calls(before.text), 2);
  assert.is(moved('svc_model_tokens_total', { model: 'oa', origin: 'chat', kind: 'input' }), 300);
  assert.is(
    moved('svc_model_tokens_total', { model: 'oa', origin: 'chat', kind: 'cached_input' }),
    50,
  );
  assert.is(moved('svc_model_tokens_total', { model: 'oa', origin: 'chat', kind: 'output' }), 30);
  const cost = moved('svc_model_cost_usd_total', { model: 'oa', origin: 'chat' });
  assert.ok(Math.abs(cost - (300 * 2 + 50 * 0.5 + 30 * 8) / 1e6) < 1e-12, String(cost));
  for (const role of ['supervisor', 'gateway', 'agent'])
    assert.ok(sampleSum(after, 'svc_process_resident_memory_bytes', { role }) > 0, role);
  assert.ok(sampleSum(after, 'svc_process_cpu_seconds', { role: 'agent' }) > 0);
  assert.ok(sampleSum(after, 'svc_ws_connections') >= 1);
  assert.is(sampleSum(after, 'svc_approvals_waiting'), 0);
  // The same authentication as every route: a request that is not local needs the key.
  const remote = { 'X-Forwarded-For': '203.0.113.7' };
  const denied = await http({ port: rig.port, path: '/api/metrics', headers: remote });
  assert.is(denied.status, 401);
  const key = rig.server.key();
  const allowed = await http({
    port: rig.port,
    path: '/api/metrics',
    headers: { ...remote, Authorization: `Bearer ${key}` },
  });
  assert.is(allowed.status, 200);
});

test('telemetry.otlp: a turn is one trace across gateway, supervisor and agent, parented over IPC', async () => {
  const id = await newChat(rig.port, { model_id: 'oa' });
  rig.fake.enqueue(
    {
      parts: [{ toolCall: { name: 'current_time', arguments: '{}' } }],
      usage: { input: 120, output: 12 },
    },
    {
      parts: [{ text: 'Noon.' }],
      usage: { input: 150, cachedInput: 30, output: 9 },
    },
  );
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'time?' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
  const turnId: string = r.body.turn_id;
  // Each process sends its spans when the turn ends there: wait until all six arrived.
  const spans = await waitFor(
    () => {
      const traces = new Set(
        otlp.spans.filter((s) => s.attributes['svc.turn_id'] === turnId).map((s) => s.traceId),
      );
      if (traces.size !== 1) return undefined;
      const trace = otlp.spans.filter((s) => s.traceId === [...traces][0]);
      return trace.length >= 6 ? trace : undefined;
    },
    10_000,
    "the turn's spans at the receiver",
  );
  const one = (name: string): ReceivedSpan => {
    const found = spans.filter((s) => s.name === name);
    assert.is(found.length, 1, `one ${name} span: ${spans.map((s) => s.name).join(', ')}`);
    return found[0]!;
  };
  const root = one('svc.turn');
  const dispatch = one('svc.turn.dispatch');
  const run = one('svc.turn.run');
  const chats = spans.filter((s) => s.name === 'chat fake');
  const tool = one('execute_tool current_time');
  assert.is(spans.length, 6, spans.map((s) => s.name).join(', '));
  assert.is(chats.length, 2);
  // Each process's span, under the one of the process that handed it the turn.
  assert.is(root.resource['svc.role'], 'gateway');
  assert.is(dispatch.resource['svc.role'], 'supervisor');
  assert.is(run.resource['svc.role'], 'agent');
  assert.is(root.parentSpanId, '', 'the gateway span is the root');
  assert.is(dispatch.parentSpanId, root.spanId);
  assert.is(run.parentSpanId, dispatch.spanId);
  for (const s of [...chats, tool]) {
    assert.is(s.parentSpanId, run.spanId, s.name);
    assert.is(s.resource['svc.role'], 'agent');
  }
  for (const s of [root, dispatch, run]) {
    assert.is(s.attributes['svc.turn_id'], turnId, s.name);
    assert.is(s.attributes['svc.session_id'], id, s.name);
    assert.is(s.attributes['svc.turn.status'], 'completed', s.name);
  }
  // What a model call and a tool call used, as the provider reported it and the usage API shows.
  const [first, second] = chats.sort(
    (a, b) =>
      Number(a.attributes['gen_ai.usage.input_tokens']) -
      Number(b.attributes['gen_ai.usage.input_tokens']),
  );
  for (const c of [first!, second!]) {
    assert.is(c.attributes['gen_ai.request.model'], 'fake');
    assert.is(c.attributes['gen_ai.provider.name'], 'custom');
    assert.is(c.attributes['svc.model_id'], 'oa');
    assert.is(c.attributes['svc.usage.origin'], 'chat');
    assert.is(c.attributes['svc.call.status'], 'ok');
  }
  assert.is(first!.attributes['gen_ai.usage.input_tokens'], 120);
  assert.is(first!.attributes['gen_ai.usage.output_tokens'], 12);
  assert.is(second!.attributes['gen_ai.usage.input_tokens'], 150);
  assert.is(second!.attributes['gen_ai.usage.cache_read.input_tokens'], 30);
  assert.is(second!.attributes['gen_ai.usage.output_tokens'], 9);
  close(Number(second!.attributes['svc.cost_usd']), (150 * 2 + 30 * 0.5 + 9 * 8) / 1e6, 'cost');
  assert.is(tool.attributes['gen_ai.tool.name'], 'current_time');
  assert.is(tool.attributes['svc.tool.verdict'], 'allowed');
  assert.is(tool.attributes['svc.tool.is_error'], false);
  // The collector's header reached it; no secret is in any span, and the API masks the header.
  assert.is(otlp.headers[0]?.authorization, OTLP_SECRET);
  for (const secret of [KEY, rig.server.key(), OTLP_SECRET])
    assert.not.ok(
      otlp.bodies.some((b) => b.includes(secret)),
      `a secret (${secret.slice(0, 6)}…) in an exported span`,
    );
  const config = await api(rig.port, 'GET', '/api/config');
  assert.is(config.status, 200);
  assert.not.ok(JSON.stringify(config.body).includes(OTLP_SECRET));
  assert.equal(Object.keys(config.body.telemetry.otlp.headers), ['Authorization']);
});

test.run();
