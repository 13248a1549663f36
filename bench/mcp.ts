import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startFakeProvider, textReply, type FakeReply } from '../test/fixtures/fake-provider.js';
import { api } from '../test/helpers/api.js';
import {
  benchDir,
  emit,
  envInt,
  machine,
  note,
  removeLater,
  round,
  sleep,
  startSvc,
} from './lib.js';

/**
 * The cost of an MCP tool call through svc (agent worker → supervisor → mcp worker → stdio server
 * and back), against the same call made directly with the SDK client in one process, in the same
 * run, on the same server program (bench/mcp-server.ts, started once by svc and once here).
 *
 * Measure: the model (the fake provider) asks for BENCH_MCP_CALLS (50) calls of `stamp` in one
 * reply; the agent runs them one after the other, as it runs every reply's calls. The server stamps
 * each call on its own clock, so the gap between two consecutive stamps is one full round trip of
 * the caller: for svc that is the result's way back to the agent, the agent's per-call work (the
 * permission engine and its audit line, the tool message written to SQLite, its event) and the next
 * call's way to the server; for the direct client, its return and next call. No clock crosses a
 * process, and no turn or model time is inside a gap. BENCH_MCP_ROUNDS (20) rounds, svc and direct
 * interleaved, after 2 rounds of warm-up.
 *
 * Goal (issue 13): svc p50 − direct p50 ≤ 2 ms.
 */

const GOAL_ADDED_P50_MS = 2;
const calls = envInt('BENCH_MCP_CALLS', 50);
const rounds = envInt('BENCH_MCP_ROUNDS', 20);
const API_KEY = 'sk-bench-mcp';
const serverJs = join(benchDir, 'mcp-server.js');

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[
    Math.min(xs.length - 1, Math.max(0, Math.ceil((xs.length * p) / 100) - 1))
  ]!;
const dist = (xs: number[]) => ({
  p50_ms: round(pct(xs, 50), 3),
  p90_ms: round(pct(xs, 90), 3),
  p99_ms: round(pct(xs, 99), 3),
  max_ms: round(Math.max(...xs), 3),
  n: xs.length,
});

/** Gaps (ms) between consecutive stamps, from the texts "<seq> <ns>" in call order. */
function gaps(texts: string[], expectSeq: number[]): number[] {
  const stamps = texts.map((t, i) => {
    const m = /^(\d+) (\d+)$/.exec(t);
    if (!m || Number(m[1]) !== expectSeq[i])
      throw new Error(`unexpected stamp ${JSON.stringify(t)} for call ${expectSeq[i]}`);
    return BigInt(m[2]!);
  });
  return stamps.slice(1).map((s, i) => Number(s - stamps[i]!) / 1e6);
}

const fake = await startFakeProvider({ apiKey: API_KEY });
const home = mkdtempSync(join(tmpdir(), 'svc-bench-mcp-'));
removeLater(home);
writeFileSync(join(home, 'permissions.yml'), 'mcp__bench__*:\n  - allow: {}\n');
const svc = await startSvc({ home });
const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
try {
  const must = async (method: string, path: string, body: unknown, status: number) => {
    const r = await api(svc.port, method, path, body);
    if (r.status !== status)
      throw new Error(
        `${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}\n${svc.tail()}`,
      );
    return r.body;
  };
  await must(
    'POST',
    '/api/config/models',
    {
      id: 'm',
      provider: 'custom',
      protocol: 'openai',
      base_url: fake.baseUrl('openai'),
      model: 'fake',
      api_key: API_KEY,
    },
    201,
  );
  await must('PUT', '/api/config/models/default', { model_id: 'm' }, 200);
  await must(
    'POST',
    '/api/mcp/servers',
    { name: 'bench', command: process.execPath, args: [serverJs] },
    201,
  );
  for (let deadline = Date.now() + 30_000; ; await sleep(50)) {
    const s = await must('GET', '/api/mcp/servers/bench', undefined, 200);
    if (s.status === 'connected') break;
    if (Date.now() > deadline)
      throw new Error(`the bench MCP server did not connect: ${JSON.stringify(s)}`);
  }
  const session = (await must('POST', '/api/sessions', {}, 201)).id as string;
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [serverJs] }));

  let seq = 0;
  const viaSvc = async (): Promise<number[]> => {
    fake.reset();
    const seqs = Array.from({ length: calls }, () => ++seq);
    const step: FakeReply = {
      parts: seqs.map((n) => ({
        toolCall: { id: `c${n}`, name: 'mcp__bench__stamp', arguments: JSON.stringify({ seq: n }) },
      })),
      stop: 'tool_use',
    };
    fake.enqueue(step, textReply('done'));
    await must(
      'POST',
      `/api/chat/${session}/turn?wait=true`,
      { message: 'go', attachments: [] },
      200,
    );
    const sent = fake.requests.at(-1)?.body as
      | { messages?: Array<{ role: string; tool_call_id?: string; content?: unknown }> }
      | undefined;
    const texts = seqs.map((n) =>
      String(
        sent?.messages?.find((m) => m.role === 'tool' && m.tool_call_id === `c${n}`)?.content ?? '',
      ),
    );
    return gaps(texts, seqs);
  };
  const viaSdk = async (): Promise<number[]> => {
    const seqs = Array.from({ length: calls }, () => ++seq);
    const texts: string[] = [];
    for (const n of seqs) {
      const r = CallToolResultSchema.parse(
        await direct.callTool({ name: 'stamp', arguments: { seq: n } }),
      );
      const c = r.content[0];
      texts.push(c?.type === 'text' ? c.text : '');
    }
    return gaps(texts, seqs);
  };

  for (let i = 0; i < 2; i++) {
    await viaSvc();
    await viaSdk();
  }
  note(`mcp: ${rounds} rounds of ${calls} calls, svc and direct interleaved`);
  const svcGaps: number[] = [];
  const sdkGaps: number[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      svcGaps.push(...(await viaSvc()));
      sdkGaps.push(...(await viaSdk()));
    } else {
      sdkGaps.push(...(await viaSdk()));
      svcGaps.push(...(await viaSvc()));
    }
  }
  const s = dist(svcGaps);
  const d = dist(sdkGaps);
  emit({
    kind: 'result',
    bench: 'mcp',
    target: 'svc',
    about: 'agent worker → supervisor → mcp worker → stdio server, per call',
    ...s,
  });
  emit({
    kind: 'result',
    bench: 'mcp',
    target: 'direct',
    about: 'SDK client → stdio server in one process, per call',
    ...d,
  });
  const added = s.p50_ms - d.p50_ms;
  emit({
    kind: 'ratios',
    bench: 'mcp',
    machine: machine(),
    svc_over_direct_p50: round(s.p50_ms / d.p50_ms, 2),
    svc_over_direct_p99: round(s.p99_ms / d.p99_ms, 2),
    added_p50_ms: round(added, 3),
    added_p99_ms: round(s.p99_ms - d.p99_ms, 3),
    goal_added_p50_ms: GOAL_ADDED_P50_MS,
    all_targets_met: added <= GOAL_ADDED_P50_MS,
  });
} finally {
  await direct.close().catch(() => undefined);
  await svc.stop();
  await fake.close();
}
