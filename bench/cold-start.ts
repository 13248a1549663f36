import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import {
  descendants,
  emit,
  envInt,
  freePort,
  get,
  isMain,
  machine,
  median,
  note,
  removeLater,
  round,
  sleep,
  stopTree,
  svcBin,
  svcEnv,
  trackPid,
  tracked,
} from './lib.js';
import { CODE_CACHE_DIR } from '../src/release/code-loader.js';
import { packageRoot } from '../src/shared/version.js';

/**
 * Cold start: wall time from spawning `svc serve` to the first 200 from `GET /api/health`,
 * polled every ~5 ms on a fresh connection.
 *
 *   svc_cold   a fresh, empty SVC_HOME (key generation, store creation and migrations included)
 *   svc_warm   a second start on the same home (key and store already there)
 *   svc_uncached  the same, compiled from source as the first start after a build (no code cache)
 *   node_bare  baseline: `node -e` with a bare node:http server, same polling
 *
 * N runs each (BENCH_COLD_RUNS, default 10), interleaved; median and max reported.
 * Target: svc_cold ≤ 1000 ms.
 */

const POLL_MS = 5;
const START_TIMEOUT_MS = 20_000;
const TARGET_MS = 1000;

interface Start {
  ms_to_200: number;
  ms_to_listening_line: number | null;
  proc: ChildProcess;
}

/** Spawns `argv`, polls http://127.0.0.1:port/path until 200; resolves the timings. */
async function timeToFirst200(
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  path: string,
  listenRe?: RegExp,
): Promise<Start> {
  const t0 = performance.now();
  const proc = tracked(argv[0]!, argv.slice(1), { env });
  let listenAt: number | null = null;
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => {
    out = (out + d.toString()).slice(-4096);
    if (listenAt === null && listenRe?.test(out)) listenAt = performance.now() - t0;
  });
  proc.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4096)));
  const until = t0 + START_TIMEOUT_MS;
  while (performance.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new Error(
        `${argv.join(' ')} exited (${proc.exitCode ?? proc.signalCode}) before answering:\n${out}`,
      );
    try {
      const res = await get({ port, path, timeoutMs: 1000 });
      if (res.status === 200)
        return { ms_to_200: performance.now() - t0, ms_to_listening_line: listenAt, proc };
    } catch {
      // not listening yet
    }
    await sleep(POLL_MS);
  }
  proc.kill('SIGKILL');
  throw new Error(`no 200 from ${path} within ${START_TIMEOUT_MS} ms:\n${out}`);
}

async function startSvcTimed(home: string, env: NodeJS.ProcessEnv = {}): Promise<Start> {
  const port = await freePort();
  const s = await timeToFirst200(
    [process.execPath, svcBin, 'serve', '--addr', `127.0.0.1:${port}`],
    { ...svcEnv(home), ...env },
    port,
    '/api/health',
    /listening on http:/,
  );
  return s;
}

async function stopSvc(proc: ChildProcess): Promise<void> {
  const kids = descendants(proc.pid!);
  for (const k of kids) trackPid(k);
  await stopTree(proc, kids);
}

/**
 * The first start after a build or an upgrade compiles from source and keeps V8's code cache
 * (src/release/code-loader.ts); every later one starts from it. One unmeasured start, held until
 * the supervisor's and the gateway's caches are on disk, so every measured run is a later one;
 * `svc_uncached` (SVC_CODE_CACHE=off) shows the first.
 */
async function keepCodeCaches(): Promise<void> {
  const caches = ['cli', 'gateway'].map((d) =>
    join(packageRoot, 'dist', 'bundle', d, CODE_CACHE_DIR),
  );
  const kept = () =>
    caches.every((d) => existsSync(d) && readdirSync(d).some((f) => f.endsWith('.bin')));
  if (kept()) return;
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-cache-'));
  removeLater(home);
  const s = await startSvcTimed(home);
  for (let waited = 0; !kept() && waited < 20_000; waited += 100) await sleep(100);
  await stopSvc(s.proc);
  if (!kept()) note('the code caches were not written; svc_cold and svc_warm compiled from source');
}

export async function runColdStart(): Promise<{ ok: boolean }> {
  const runs = Math.max(1, envInt('BENCH_COLD_RUNS', 10));
  emit({
    bench: 'cold_start',
    kind: 'config',
    machine: machine(),
    runs,
    poll_ms: POLL_MS,
    target_ms: TARGET_MS,
  });
  const times: Record<string, number[]> = {
    svc_cold: [],
    svc_warm: [],
    svc_uncached: [],
    node_bare: [],
  };
  const listen: Record<string, number[]> = { svc_cold: [], svc_warm: [], svc_uncached: [] };
  await keepCodeCaches();
  let ok = true;
  const record = (variant: string, i: number, s: Start) => {
    times[variant]!.push(s.ms_to_200);
    if (s.ms_to_listening_line !== null) listen[variant]?.push(s.ms_to_listening_line);
    emit({
      bench: 'cold_start',
      kind: 'run',
      variant,
      run: i + 1,
      ms_to_200: round(s.ms_to_200, 1),
      ms_to_listening_line:
        s.ms_to_listening_line === null ? null : round(s.ms_to_listening_line, 1),
    });
  };
  for (let i = 0; i < runs; i++) {
    const home = mkdtempSync(join(tmpdir(), 'svc-bench-cold-'));
    removeLater(home);
    try {
      note(`run ${i + 1}/${runs}`);
      // Baseline first on odd runs, last on even runs, so drift in machine load evens out.
      const bare = async () => {
        const port = await freePort();
        const s = await timeToFirst200(
          [
            process.execPath,
            '-e',
            `require('http').createServer((q,s)=>s.end('ok')).listen(${port},'127.0.0.1')`,
          ],
          process.env,
          port,
          '/',
        );
        record('node_bare', i, s);
        await stopTree(s.proc);
      };
      if (i % 2 === 0) await bare();
      const cold = await startSvcTimed(home);
      record('svc_cold', i, cold);
      await stopSvc(cold.proc);
      const warm = await startSvcTimed(home);
      record('svc_warm', i, warm);
      await stopSvc(warm.proc);
      const uncached = await startSvcTimed(home, { SVC_CODE_CACHE: 'off' });
      record('svc_uncached', i, uncached);
      await stopSvc(uncached.proc);
      if (i % 2 === 1) await bare();
    } catch (err) {
      ok = false;
      emit({ bench: 'cold_start', kind: 'run', run: i + 1, error: (err as Error).message });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  const stats = (xs: number[]) =>
    xs.length
      ? {
          median_ms: round(median(xs), 1),
          max_ms: round(Math.max(...xs), 1),
          min_ms: round(Math.min(...xs), 1),
          runs: xs.length,
        }
      : null;
  for (const [variant, xs] of Object.entries(times)) {
    emit({
      bench: 'cold_start',
      kind: 'summary',
      variant,
      ...stats(xs),
      ...(listen[variant] ? { listening_line_median_ms: round(median(listen[variant]!), 1) } : {}),
    });
  }
  const coldMed = median(times.svc_cold!);
  const coldMax = Math.max(...times.svc_cold!);
  const bareMed = median(times.node_bare!);
  emit({
    bench: 'cold_start',
    kind: 'ratios',
    'svc_cold/node_bare': round(coldMed / bareMed, 2),
    'svc_warm/node_bare': round(median(times.svc_warm!) / bareMed, 2),
    'svc_uncached/node_bare': round(median(times.svc_uncached!) / bareMed, 2),
    svc_overhead_ms: round(coldMed - bareMed, 1),
    target: `svc_cold <= ${TARGET_MS} ms`,
    pass: { median: coldMed <= TARGET_MS, max: coldMax <= TARGET_MS },
    all_targets_met: coldMed <= TARGET_MS && coldMax <= TARGET_MS,
    measurements_clean: ok,
  });
  return { ok };
}

if (isMain(import.meta.url)) {
  runColdStart().then(
    (r) => process.exit(r.ok ? 0 : 1),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(2);
    },
  );
}
