import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cmdline,
  descendants,
  emit,
  envInt,
  isMain,
  machine,
  median,
  mib,
  note,
  pssBytes,
  removeLater,
  round,
  sleep,
  startSvc,
  statusBytes,
  stopTree,
  tracked,
  waitForLine,
} from './lib.js';
import { runEveryRole } from './memory-roles.js';

/**
 * Idle memory: resident memory (VmRSS from /proc/<pid>/status) of every svc process (the
 * supervisor and all its descendants) after BENCH_IDLE_MS (default 2000) of idle time following
 * the listening line. Per process too, with PSS (shared pages split between processes, so the
 * node binary's text is not counted once per process) for context.
 *
 * Baselines in the same run: a bare `node` process idling, and a bare node:http server idling.
 * BENCH_MEM_RUNS (default 3) runs; the median total is the result. Target: ≤ 150 MB (RSS sum,
 * decimal megabytes, so the stricter reading).
 */

const TARGET_MB = 150;
/** Judged strictly in decimal megabytes (150 MB = 150e6 bytes, about 143 MiB). */
const TARGET_BYTES = TARGET_MB * 1e6;

interface Proc {
  role: string;
  pid: number;
  rss_mib: number;
  pss_mib: number | null;
  rss_anon_mib: number | null;
  hwm_mib: number | null;
  /** What `svc status --json` says, for comparison. */
  status_rss_mib: number | null;
}

async function bareRss(code: string, idleMs: number): Promise<{ rss: number; pss: number | null }> {
  const p = tracked(process.execPath, ['-e', code]);
  p.stderr!.resume();
  await waitForLine(p, /ready/, 10_000, 'bare node');
  await sleep(idleMs);
  const rss = statusBytes(p.pid!, 'VmRSS') ?? NaN;
  const pss = pssBytes(p.pid!);
  await stopTree(p);
  return { rss, pss };
}

export async function runMemory(): Promise<{ ok: boolean; ratios: Record<string, unknown> }> {
  const runs = Math.max(1, envInt('BENCH_MEM_RUNS', 3));
  const idleMs = envInt('BENCH_IDLE_MS', 2000);
  emit({
    bench: 'memory',
    kind: 'config',
    machine: machine(),
    runs,
    idle_ms: idleMs,
    target_mb: TARGET_MB,
    unit: '*_mib = MiB (1048576 bytes); the target is judged in decimal MB (1e6 bytes)',
  });
  const totals: number[] = [];
  const pssTotals: number[] = [];
  const bare: number[] = [];
  const bareHttp: number[] = [];
  const counts: number[] = [];
  let ok = true;
  for (let i = 0; i < runs; i++) {
    const home = mkdtempSync(join(tmpdir(), 'svc-bench-mem-'));
    removeLater(home);
    try {
      note(`run ${i + 1}/${runs}`);
      const b = await bareRss(`console.log('ready'); setInterval(() => {}, 1000)`, idleMs);
      const bh = await bareRss(
        `require('http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',()=>console.log('ready'))`,
        idleMs,
      );
      bare.push(b.rss);
      bareHttp.push(bh.rss);
      const svc = await startSvc({ home });
      try {
        await sleep(idleMs);
        // Measure first (from /proc), then ask svc status for the roles (it runs in its own process).
        const pids = [svc.pid, ...descendants(svc.pid)];
        const measured = pids.map((pid) => ({
          pid,
          rss: statusBytes(pid, 'VmRSS'),
          pss: pssBytes(pid),
          anon: statusBytes(pid, 'RssAnon'),
          hwm: statusBytes(pid, 'VmHWM'),
        }));
        const status = await svc.status().catch((err: Error) => {
          note(`svc status --json failed: ${err.message}`);
          return { processes: [] };
        });
        const procs: Proc[] = measured.map((m) => {
          const s = status.processes.find((p) => p.pid === m.pid);
          return {
            role:
              s?.role ??
              (m.pid === svc.pid ? 'supervisor' : cmdline(m.pid).replace(/^.*\/dist\/src\//, '')),
            pid: m.pid,
            rss_mib: mib(m.rss ?? 0),
            pss_mib: m.pss === null ? null : mib(m.pss),
            rss_anon_mib: m.anon === null ? null : mib(m.anon),
            hwm_mib: m.hwm === null ? null : mib(m.hwm),
            status_rss_mib: s?.rss_bytes == null ? null : mib(s.rss_bytes),
          };
        });
        // Processes svc status knows but /proc did not show under the supervisor (should be none).
        const missing = status.processes
          .filter((p) => p.pid > 0 && !pids.includes(p.pid))
          .map((p) => `${p.role}:${p.pid}`);
        const total = measured.reduce((s, m) => s + (m.rss ?? 0), 0);
        const pssTotal = measured.reduce((s, m) => s + (m.pss ?? 0), 0);
        totals.push(total);
        pssTotals.push(pssTotal);
        counts.push(pids.length);
        emit({
          bench: 'memory',
          kind: 'run',
          run: i + 1,
          total_rss_mib: mib(total),
          total_pss_mib: mib(pssTotal),
          processes: procs,
          ...(missing.length ? { not_under_supervisor: missing } : {}),
          baseline_bare_node_rss_mib: mib(b.rss),
          baseline_bare_node_http_rss_mib: mib(bh.rss),
        });
      } finally {
        await svc.stop();
      }
    } catch (err) {
      ok = false;
      emit({ bench: 'memory', kind: 'run', run: i + 1, error: (err as Error).message });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  if (totals.length === 0)
    return { ok: false, ratios: { error: 'no successful run', measurements_clean: false } };
  const tot = median(totals);
  const bareMed = median(bare);
  const procCount = median(counts);
  emit({
    bench: 'memory',
    kind: 'summary',
    total_rss_mb_median: round(tot / 1e6, 1),
    total_rss_mib_median: mib(tot),
    total_rss_mib_max: mib(Math.max(...totals)),
    total_pss_mib_median: mib(median(pssTotals)),
    processes: procCount,
    baseline_bare_node_rss_mib: mib(bareMed),
    baseline_bare_node_http_rss_mib: mib(median(bareHttp)),
  });
  const ratios = {
    'svc_total/bare_node': round(tot / bareMed, 2),
    'svc_per_process/bare_node': round(tot / procCount / bareMed, 2),
    svc_over_bare_nodes_mib: mib(tot - procCount * bareMed),
    total_rss_mb: round(tot / 1e6, 1),
    target: `total RSS <= ${TARGET_MB} MB (${TARGET_BYTES} bytes)`,
    pass: { total_rss: tot <= TARGET_BYTES },
    all_targets_met: tot <= TARGET_BYTES,
    measurements_clean: ok,
  };
  return { ok, ratios };
}

/**
 * BENCH_MEM_SCENARIOS (default "idle,every_role"): the idle figure above, and every role running
 * (bench/memory-roles.ts). One ratios line gathers both.
 */
async function main(): Promise<boolean> {
  const chosen = (process.env.BENCH_MEM_SCENARIOS ?? 'idle,every_role').split(',');
  const out: Record<string, unknown> = { bench: 'memory', kind: 'ratios' };
  let ok = true;
  let met = true;
  if (chosen.includes('idle')) {
    const r = await runMemory();
    ok &&= r.ok;
    met &&= r.ratios.all_targets_met === true;
    out.idle = r.ratios;
  }
  if (chosen.includes('every_role')) {
    const r = await runEveryRole();
    ok &&= r.ok;
    met &&= r.ratios.all_targets_met === true;
    out.every_role = r.ratios;
  }
  emit({ ...out, all_targets_met: met, measurements_clean: ok });
  return ok;
}

if (isMain(import.meta.url)) {
  main().then(
    (ok) => process.exit(ok ? 0 : 1),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(2);
    },
  );
}
