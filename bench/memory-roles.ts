import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeProvider, type FakeProvider } from '../test/fixtures/fake-provider.js';
import {
  startFakeTelegram,
  type FakeTelegram,
  type TgUser,
} from '../test/fixtures/fake-telegram.js';
import { api } from '../test/helpers/api.js';
import {
  benchDir,
  emit,
  envInt,
  machine,
  mib,
  note,
  removeLater,
  round,
  sleep,
  startSvc,
  statusBytes,
  stopTree,
  tracked,
  waitForLine,
  type Svc,
} from './lib.js';

/**
 * Memory with every role running (issue 37): a real `svc serve` with a Telegram channel (on the
 * local stand-in of the Bot API), an MCP server written with the SDK (stdio), an enabled cron
 * schedule and a model on the fake provider, measured after one chat turn (made on Telegram),
 * BENCH_SETTLE_MS (8000) after the last change. Per process: RSS (/proc) and V8 heap in use (svc
 * status), each as a ratio to a bare `node -e` process idling beside it in the same run.
 *
 * Then the same after BENCH_TURNS (1000) turns (sessions of 10 turns through the API, every
 * tenth turn on Telegram) and BENCH_SCHED_FIRES (1440) scheduled runs: 24 hours of an
 * every-minute schedule, compressed. croner has no clock to drive from outside, so time is not
 * faked: BENCH_SCHED_TASKS (12) tasks fire every second (`* * * * * *`) on croner's real timers
 * until that many runs are recorded (about two minutes), each a real turn in a new session, while
 * the chat turns run. Then the extra tasks go and the daily one is back, and after the settle
 * time the table is taken again: growth per role.
 *
 * Targets (issue 37, ratios of RSS to the bare process): mcp, channels, cron ≤ 1.3; supervisor,
 * gateway ≤ 1.5; agent (idle between turns) ≤ 2; the six processes ≤ 300 MB (decimal).
 */

const TOKEN = '123456789:AAHsvcBenchTokenForMemory_abcdefXY';
const ALICE: TgUser = { id: 4242, first_name: 'Alice' };
const KEY = 'sk-bench-mem';
const DAILY = '0 3 * * *';

export const roleTargets: Record<string, number> = {
  supervisor: 1.5,
  gateway: 1.5,
  agent: 2,
  mcp: 1.3,
  channels: 1.3,
  cron: 1.3,
};
const TOTAL_TARGET_BYTES = 300e6;

interface Row {
  role: string;
  pid: number;
  rss_mib: number;
  /** Shared pages (the node binary's) split between the processes that share them. */
  pss_mib: number | null;
  /** Pages of this process alone (what stopping it would free). */
  uss_mib: number | null;
  heap_mib: number | null;
  rss_x_bare: number;
  heap_x_bare: number | null;
}

interface Table {
  rows: Row[];
  total_rss_mib: number;
  total_rss_mb: number;
  total_pss_mib: number;
  bare_rss_mib: number;
  bare_heap_mib: number;
}

/**
 * A bare `node -e` process idling for `ms`: its RSS from /proc, then its heap in use (it prints
 * process.memoryUsage() on SIGUSR2; the handler is all it holds beyond Node itself).
 */
async function bareNode(ms: number): Promise<{ rss: number; heap: number }> {
  const p = tracked(process.execPath, [
    '-e',
    "process.on('SIGUSR2',()=>console.log('heap '+process.memoryUsage().heapUsed));console.log('ready');setInterval(()=>{},1000)",
  ]);
  p.stderr!.resume();
  await waitForLine(p, /ready/, 10_000, 'bare node');
  await sleep(ms);
  const rss = statusBytes(p.pid!, 'VmRSS') ?? NaN;
  const heapLine = waitForLine(p, /heap (\d+)/, 5000, 'bare node heap');
  p.kill('SIGUSR2');
  const heap = Number((await heapLine)[1]);
  await stopTree(p);
  return { rss, heap };
}

/** PSS and USS (private clean + dirty) from /proc/<pid>/smaps_rollup, in MiB. */
function rollup(pid: number): { pss: number; uss: number } | undefined {
  try {
    const txt = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(txt)?.[1] ?? NaN);
    return {
      pss: mib(kb('Pss') * 1024),
      uss: mib((kb('Private_Clean') + kb('Private_Dirty')) * 1024),
    };
  } catch {
    return undefined;
  }
}

/** The table: svc's own processes (the supervisor and the children `svc status` names; not the MCP server it started). */
async function measure(svc: Svc, settleMs: number, label: string): Promise<Table> {
  note(`${label}: settling ${settleMs} ms beside a bare node process`);
  // The pids first: answering `svc status` costs the supervisor memory of its own, so RSS is
  // read from /proc before the second call (which brings each process's heap figure).
  const pids = (await svc.status()).processes.filter((p) => p.pid > 0).map((p) => p.pid);
  const [bare] = await Promise.all([bareNode(settleMs), sleep(settleMs)]);
  const rssOf = new Map(pids.map((pid) => [pid, statusBytes(pid, 'VmRSS') ?? 0]));
  const pssOf = new Map(pids.map((pid) => [pid, rollup(pid)]));
  const st = await svc.status();
  const procs = (
    st.processes as Array<{ role: string; pid: number; heap_used_bytes?: number | null }>
  ).filter((p) => rssOf.has(p.pid));
  const rows: Row[] = procs.map((p) => {
    const rss = rssOf.get(p.pid) ?? 0;
    const heap = p.heap_used_bytes ?? null;
    return {
      role: p.role,
      pid: p.pid,
      rss_mib: mib(rss),
      pss_mib: pssOf.get(p.pid)?.pss ?? null,
      uss_mib: pssOf.get(p.pid)?.uss ?? null,
      heap_mib: heap === null ? null : mib(heap),
      rss_x_bare: round(rss / bare.rss, 2),
      heap_x_bare: heap === null ? null : round(heap / bare.heap, 2),
    };
  });
  const total = rows.reduce((s, r) => s + r.rss_mib * 1048576, 0);
  const table = {
    rows,
    total_pss_mib: round(
      rows.reduce((s, r) => s + (r.pss_mib ?? 0), 0),
      1,
    ),
    total_rss_mib: mib(total),
    total_rss_mb: round(total / 1e6, 1),
    bare_rss_mib: mib(bare.rss),
    bare_heap_mib: mib(bare.heap),
  };
  emit({ bench: 'memory', scenario: 'every_role', kind: 'table', at: label, ...table });
  printTable(label, table);
  return table;
}

function printTable(label: string, t: Table): void {
  const lines = [
    `| ${label} | RSS MiB | × bare | PSS | USS | heap MiB | × bare |`,
    '|---|---|---|---|---|---|---|',
    ...t.rows.map(
      (r) =>
        `| ${r.role} | ${r.rss_mib} | ${r.rss_x_bare} | ${r.pss_mib ?? '?'} | ${r.uss_mib ?? '?'} | ${r.heap_mib ?? '?'} | ${r.heap_x_bare ?? '?'} |`,
    ),
    `| bare node | ${t.bare_rss_mib} | 1 | | | ${t.bare_heap_mib} | 1 |`,
    `| **total** | ${t.total_rss_mib} (${t.total_rss_mb} MB) | | ${t.total_pss_mib} | | | |`,
  ];
  note(`\n${lines.join('\n')}`);
}

async function must(svc: Svc, method: string, path: string, body?: unknown): Promise<any> {
  const r = await api(svc.port, method, path, body);
  if (r.status >= 300)
    throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}\n${svc.tail()}`);
  return r.body;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

/** One turn on Telegram: Alice writes, the bot's reply arrives in her chat. */
async function telegramTurn(tg: FakeTelegram, n: number): Promise<void> {
  const before = tg.chat(ALICE.id).length;
  tg.userSays(ALICE, `telegram turn ${n}`);
  await until('the bot answered on Telegram', 30_000, async () =>
    tg.chat(ALICE.id).length > before && tg.chat(ALICE.id).at(-1)?.text === 'OK' ? true : undefined,
  );
}

export async function setUp(svc: Svc, fake: FakeProvider, tg: FakeTelegram): Promise<string> {
  await must(svc, 'POST', '/api/config/models', {
    id: 'oa',
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake',
    api_key: KEY,
  });
  await must(svc, 'PUT', '/api/config/models/default', { model_id: 'oa' });
  await must(svc, 'POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
    allowed_users: String(ALICE.id),
  });
  await must(svc, 'POST', '/api/mcp/servers', {
    name: 'fixture',
    command: process.execPath,
    args: [join(benchDir, '..', 'test', 'fixtures', 'mcp-server.js'), 'stdio'],
  });
  const task = await must(svc, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'daily',
    schedule: DAILY,
    prompt: 'the daily summary',
  });
  await until('telegram running', 30_000, async () =>
    (await must(svc, 'GET', '/api/channels/telegram')).state === 'running' ? true : undefined,
  );
  await until('the MCP server connected', 30_000, async () =>
    (await must(svc, 'GET', '/api/mcp/servers/fixture')).status === 'connected' ? true : undefined,
  );
  await telegramTurn(tg, 0);
  await until('six processes', 30_000, async () => {
    const roles = (await svc.status()).processes
      .filter((p) => p.pid > 0 && p.state === 'running')
      .map((p) => p.role);
    return ['gateway', 'agent', 'mcp', 'channels', 'cron'].every((r) => roles.includes(r))
      ? true
      : undefined;
  });
  return task.id as string;
}

/** BENCH_TURNS turns and BENCH_SCHED_FIRES scheduled runs, at once. */
async function longRun(
  svc: Svc,
  tg: FakeTelegram,
  dailyId: string,
): Promise<Record<string, unknown>> {
  const turns = envInt('BENCH_TURNS', 1000);
  const fires = envInt('BENCH_SCHED_FIRES', 1440);
  const tasks = Math.max(1, envInt('BENCH_SCHED_TASKS', 12));
  const db = new Database(join(svc.home, 'svc.db'), { readonly: true, fileMustExist: true });
  // The store keeps the last 100 runs of a task, so runs are counted by id as they appear
  // (polled far more often than 100 runs of one task can happen).
  const seen = new Set<string>();
  const poll = () => {
    for (const r of db.prepare('SELECT id FROM cron_runs').all() as Array<{ id: string }>)
      seen.add(r.id);
    return seen.size;
  };
  const runsSoFar = poll;
  const runs0 = poll();
  const poller = setInterval(poll, 250);
  const t0 = performance.now();
  // The schedules: the daily task every second, and tasks-1 more like it.
  const extra: string[] = [];
  if (fires > 0) {
    await must(svc, 'PATCH', `/api/tasks/${dailyId}`, { schedule: '* * * * * *' });
    for (let i = 1; i < tasks; i++)
      extra.push(
        (
          await must(svc, 'POST', '/api/tasks', {
            kind: 'cron',
            name: `every-second-${i}`,
            schedule: '* * * * * *',
            prompt: `scheduled ${i}`,
          })
        ).id as string,
      );
  }
  const chat = (async () => {
    let sid = '';
    for (let i = 1; i <= turns; i++) {
      if (i % 10 === 0) await telegramTurn(tg, i);
      else {
        if (i % 10 === 1) sid = (await must(svc, 'POST', '/api/chat', {})).session_id as string;
        await must(svc, 'POST', `/api/chat/${sid}/turn`, { message: `turn ${i}` });
      }
      if (i % 100 === 0) note(`${i} turns, ${runsSoFar() - runs0} scheduled runs`);
    }
  })();
  await chat;
  const chatS = (performance.now() - t0) / 1000;
  await until('scheduled runs', Math.max(60_000, fires * 1000), async () =>
    runsSoFar() - runs0 >= fires ? true : undefined,
  );
  for (const id of extra) await must(svc, 'DELETE', `/api/tasks/${id}`);
  await must(svc, 'PATCH', `/api/tasks/${dailyId}`, { schedule: DAILY });
  await until('the last runs ended', 60_000, async () =>
    (
      db.prepare("SELECT count(*) AS n FROM cron_runs WHERE status = 'running'").get() as {
        n: number;
      }
    ).n === 0
      ? true
      : undefined,
  );
  clearInterval(poller);
  const runs = runsSoFar() - runs0;
  const byStatus = db
    .prepare('SELECT status, count(*) AS n FROM cron_runs GROUP BY status')
    .all() as Array<{ status: string; n: number }>;
  db.close();
  return {
    turns,
    turns_s: round(chatS, 1),
    scheduled_runs: runs,
    scheduled_tasks: tasks,
    last_runs_by_status: Object.fromEntries(byStatus.map((r) => [r.status, r.n])),
    long_phase_s: round((performance.now() - t0) / 1000, 1),
  };
}

function judge(t: Table): Record<string, boolean> {
  const pass: Record<string, boolean> = {};
  for (const r of t.rows) {
    const target = roleTargets[r.role];
    if (target === undefined) continue;
    const key = `${r.role}_rss_x_bare<=${target}`;
    pass[key] = (pass[key] ?? true) && r.rss_x_bare <= target;
  }
  pass['total<=300MB'] = t.total_rss_mb * 1e6 <= TOTAL_TARGET_BYTES;
  return pass;
}

/** Growth per process between two tables (same pid), in MiB and as a ratio. */
function growth(a: Table, b: Table): Array<Record<string, unknown>> {
  return b.rows.map((r) => {
    const was = a.rows.find((x) => x.pid === r.pid);
    return {
      role: r.role,
      pid: r.pid,
      rss_mib: was ? round(r.rss_mib - was.rss_mib, 1) : 'new process',
      heap_mib:
        was && r.heap_mib !== null && was.heap_mib !== null
          ? round(r.heap_mib - was.heap_mib, 1)
          : null,
    };
  });
}

export async function runEveryRole(): Promise<{ ok: boolean; ratios: Record<string, unknown> }> {
  const settle = envInt('BENCH_SETTLE_MS', 8000);
  emit({
    bench: 'memory',
    scenario: 'every_role',
    kind: 'config',
    machine: machine(),
    settle_ms: settle,
  });
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-roles-'));
  removeLater(home);
  const fake = await startFakeProvider({ apiKey: KEY });
  const tg = await startFakeTelegram(TOKEN);
  const svc = await startSvc({ home });
  try {
    const dailyId = await setUp(svc, fake, tg);
    const before = await measure(svc, settle, 'after one turn');
    const passBefore = judge(before);
    let after: Table | undefined;
    let long: Record<string, unknown> | undefined;
    if (envInt('BENCH_TURNS', 1000) > 0 || envInt('BENCH_SCHED_FIRES', 1440) > 0) {
      long = await longRun(svc, tg, dailyId);
      emit({ bench: 'memory', scenario: 'every_role', kind: 'long_run', ...long });
      after = await measure(svc, settle, 'after the long run');
    }
    // A diagnostic: BENCH_HOLD_MS keeps svc up after the last table (to read /proc, take heap snapshots).
    const hold = envInt('BENCH_HOLD_MS', 0);
    if (hold > 0) {
      note(`holding svc (home ${home}, port ${svc.port}) for ${hold} ms`);
      await sleep(hold);
    }
    const passAfter = after ? judge(after) : {};
    const ratios = {
      all_targets_met: [...Object.values(passBefore), ...Object.values(passAfter)].every(Boolean),
      every_role_total_rss_mb: before.total_rss_mb,
      every_role_rss_x_bare: Object.fromEntries(before.rows.map((r) => [r.role, r.rss_x_bare])),
      pass: passBefore,
      ...(after
        ? {
            after_long_run_total_rss_mb: after.total_rss_mb,
            after_long_run_pass: passAfter,
            growth: growth(before, after),
          }
        : {}),
    };
    return { ok: true, ratios };
  } finally {
    await svc.stop();
    await fake.close();
    await tg.close();
    rmSync(home, { recursive: true, force: true });
  }
}
