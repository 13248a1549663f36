import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { loadUws } from '../src/shared/engine-choice.js';
import { createNetns, netnsUnavailable, type Netns } from '../test/helpers/netns.js';
import type { LoadConfig, Tool } from './loadgen.js';
import { nodeHttpSessionsServer, SESSIONS_PATH, svcSessionsServer } from './sessions.js';
import {
  benchDir,
  cpuSeconds,
  descendants,
  emit,
  envInt,
  isMain,
  machine,
  mean,
  note,
  onCleanup,
  removeLater,
  round,
  startSvc,
  stopTree,
  track,
  tracked,
  waitForLine,
  type Svc,
} from './lib.js';

/**
 * Requests per second, every target measured in the same run by the same load generator (wrk or
 * autocannon, in its own process, see bench/loadgen.ts; inside a network namespace for remote
 * targets). Each result also carries the CPU the server used, so `rps_per_server_cpu_s` tells
 * server cost apart from load-generator limits on a small, shared machine.
 *
 *   node dist/bench/http.js            all targets
 *   BENCH_TARGETS=svc_health,raw_uws   only these (their servers start on demand)
 *   BENCH_LOADGEN=auto|wrk|autocannon  auto (default): wrk when `command -v wrk` finds it, else autocannon
 *   BENCH_DURATION=5 BENCH_WARMUP=1 BENCH_CONNECTIONS=64 BENCH_PIPELINING=1 BENCH_ROUNDS=3 (the defaults)
 *
 * To benchmark a new route, add a `Target` to `targets` below (and a ratio to `ratios` if it
 * has a goal). A target names the server it runs against; servers start once and are shared.
 */

// ---------------------------------------------------------------- what is measured

export interface Target {
  /** Result name in the JSON lines. */
  name: string;
  /** A key of `servers`. */
  server: ServerName;
  path: string;
  method?: 'GET';
  /** Send `Authorization: Bearer <svc access key>`. */
  auth?: boolean;
  headers?: Record<string, string>;
  /** Status every response must have (the preflight checks it; other statuses count as non2xx). */
  expectStatus?: number;
  /** One line on what the number means, echoed into the result. */
  about: string;
  /** Diagnostic: runs only when named in BENCH_TARGETS. */
  optional?: boolean;
}

export const targets: Target[] = [
  {
    name: 'svc_health',
    server: 'svc',
    path: '/api/health',
    about: 'full svc gateway, public route, loopback client',
  },
  {
    name: 'raw_uws',
    server: 'uws',
    path: '/api/health',
    about: 'bare uWebSockets.js app, same body and headers',
  },
  {
    name: 'node_http',
    server: 'node_http',
    path: '/api/health',
    about: 'bare node:http server, same body and headers',
  },
  {
    name: 'svc_remote_auth_health',
    server: 'svc_remote',
    path: '/api/health',
    auth: true,
    about: 'full svc gateway from a network namespace (non-loopback), Bearer key sent and checked',
  },
  {
    name: 'svc_remote_auth_status',
    server: 'svc_remote',
    path: '/api/status',
    auth: true,
    about:
      'authenticated non-loopback GET /api/status: key check + IPC round trip to the supervisor',
  },
  {
    name: 'raw_uws_remote',
    server: 'uws_remote',
    path: '/api/health',
    about: 'bare uWebSockets.js over the same veth path, to separate network cost from svc cost',
  },
  {
    name: 'svc_sessions',
    server: 'svc_sessions',
    path: SESSIONS_PATH,
    auth: true,
    about:
      'GET /api/sessions?limit=50 with 10,000 sessions, Bearer key sent and checked, full svc gateway (bench/sessions.ts)',
  },
  {
    name: 'node_http_sessions',
    server: 'node_http_sessions',
    path: SESSIONS_PATH,
    about: 'the same query, same DAL and db file, served by bare node:http',
  },
  // The node:http engine (SVC_HTTP_ENGINE=node): what svc serves with on a Node that uWS has no binary for.
  {
    name: 'svc_node_health',
    server: 'svc_node',
    path: '/api/health',
    about:
      'full svc gateway on its node:http engine (SVC_HTTP_ENGINE=node), public route, loopback client',
  },
  {
    name: 'svc_node_sessions',
    server: 'svc_node_sessions',
    path: SESSIONS_PATH,
    auth: true,
    about:
      'GET /api/sessions?limit=50 with 10,000 sessions, Bearer key sent and checked, full svc gateway on its node:http engine',
  },
  {
    name: 'raw_uws_async',
    server: 'uws_async',
    path: '/api/health',
    optional: true,
    about: 'diagnostic: bare uWebSockets.js answering from a promise continuation, corked',
  },
];

export interface Ratio {
  name: string;
  numerator: string;
  denominator: string;
  /** The goal: ratio must be at least this. Omitted for informational ratios. */
  min?: number;
}

export const ratios: Ratio[] = [
  { name: 'health/raw_uws', numerator: 'svc_health', denominator: 'raw_uws', min: 0.8 },
  { name: 'health/node_http', numerator: 'svc_health', denominator: 'node_http', min: 1.5 },
  {
    name: 'sessions/node_http',
    numerator: 'svc_sessions',
    denominator: 'node_http_sessions',
    min: 1.5,
  },
  {
    name: 'node_engine_health/node_http',
    numerator: 'svc_node_health',
    denominator: 'node_http',
    min: 0.9,
  },
  {
    name: 'node_engine_sessions/node_http',
    numerator: 'svc_node_sessions',
    denominator: 'node_http_sessions',
  },
  {
    name: 'node_engine_health/uws_engine_health',
    numerator: 'svc_node_health',
    denominator: 'svc_health',
  },
  {
    name: 'remote_auth_health/raw_uws_remote',
    numerator: 'svc_remote_auth_health',
    denominator: 'raw_uws_remote',
  },
  {
    name: 'remote_auth_status/raw_uws_remote',
    numerator: 'svc_remote_auth_status',
    denominator: 'raw_uws_remote',
  },
];

// ---------------------------------------------------------------- servers

/** Server CPU (fraction of one core) above which it, not the load generator, set the pace. */
const SATURATED = 0.85;

interface Running {
  host: string;
  port: number;
  /** Processes whose CPU counts as "the server" (supervisor + children for svc). */
  pids(): number[];
  /** Access key, for svc. */
  key?: () => string;
  stop(): Promise<void>;
}

interface Ctx {
  ns?: Netns;
}

type ServerName =
  | 'svc'
  | 'svc_remote'
  | 'uws'
  | 'uws_async'
  | 'node_http'
  | 'uws_remote'
  | 'svc_sessions'
  | 'node_http_sessions'
  | 'svc_node'
  | 'svc_node_sessions';

interface ServerSpec {
  /** Needs the network namespace (host side bind on ns.hostIp, client inside the namespace). */
  remote: boolean;
  /** Needs uWebSockets.js's native binary for this runtime (the targets are skipped without it). */
  uws?: boolean;
  start(ctx: Ctx): Promise<Running>;
}

// The svc servers without `_node` run the uWS engine (forced, so they never quietly measure the other one).
const servers: Record<ServerName, ServerSpec> = {
  svc: { remote: false, uws: true, start: () => svcServer('127.0.0.1', 'uws') },
  svc_remote: { remote: true, uws: true, start: (ctx) => svcServer(ctx.ns!.hostIp, 'uws') },
  uws: { remote: false, uws: true, start: () => baseline('uws', '127.0.0.1') },
  uws_async: { remote: false, uws: true, start: () => baseline('uws_async', '127.0.0.1') },
  node_http: { remote: false, start: () => baseline('node_http', '127.0.0.1') },
  uws_remote: { remote: true, uws: true, start: (ctx) => baseline('uws', ctx.ns!.hostIp) },
  svc_sessions: { remote: false, uws: true, start: () => svcSessionsServer('127.0.0.1', 'uws') },
  node_http_sessions: { remote: false, start: () => nodeHttpSessionsServer() },
  svc_node: { remote: false, start: () => svcServer('127.0.0.1', 'node') },
  svc_node_sessions: { remote: false, start: () => svcSessionsServer('127.0.0.1', 'node') },
};

async function svcServer(host: string, engine: 'uws' | 'node'): Promise<Running> {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  removeLater(home);
  const svc: Svc = await startSvc({ home, host, engine });
  return {
    host,
    port: svc.port,
    pids: () => [svc.pid, ...descendants(svc.pid)],
    key: svc.key,
    stop: svc.stop,
  };
}

async function baseline(kind: 'uws' | 'uws_async' | 'node_http', host: string): Promise<Running> {
  const proc = tracked(process.execPath, [join(benchDir, 'baseline-server.js'), kind, host, '0'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  proc.stderr!.resume();
  const m = await waitForLine(proc, /listening (\d+) (\w+)/, 10_000, `${kind} baseline`);
  proc.stdout!.resume();
  if (m[2] === 'fallback')
    note('the raw uWebSockets.js baseline loaded the JS fallback, not the native addon');
  return { host, port: Number(m[1]), pids: () => [proc.pid!], stop: () => stopTree(proc) };
}

// ---------------------------------------------------------------- one measurement

interface LoadResult {
  event: string;
  rps: number;
  requests: number;
  duration_s: number;
  latency_ms: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  status_codes?: Record<string, number>;
  loadgen_cpu: number;
  error?: string;
  body?: string;
}

let runs = 0;

function runLoadgen(
  cfg: LoadConfig,
  ns: Netns | undefined,
  serverPids: number[],
): Promise<LoadResult & { server_cpu: number }> {
  // The config (headers, so maybe a key) goes in a 0600 file in a private folder, not on the command line.
  const file = join(cfg.workDir!, `load-${++runs}.json`);
  writeFileSync(file, JSON.stringify(cfg), { mode: 0o600 });
  const argv = [process.execPath, join(benchDir, 'loadgen.js'), file];
  const proc: ChildProcess = ns ? track(ns.spawn(argv)) : tracked(argv[0]!, argv.slice(1));
  let stdout = '';
  let stderr = '';
  let cpuStart = 0;
  const cpuNow = () => serverPids.reduce((s, p) => s + cpuSeconds(p), 0);
  return new Promise((resolve, reject) => {
    const limit = (cfg.warmupS + cfg.durationS + 30) * 1000;
    const timer = setTimeout(() => proc.kill('SIGKILL'), limit);
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (cpuStart === 0 && stdout.includes('"event":"start"')) cpuStart = cpuNow();
    });
    proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('close', (code) => {
      clearTimeout(timer);
      const cpuEnd = cpuNow();
      const last = stdout.trim().split('\n').pop() ?? '';
      let r: LoadResult;
      try {
        r = JSON.parse(last);
      } catch {
        return reject(
          new Error(
            `load generator exited ${code} without a result: ${stderr.slice(-1000) || stdout.slice(-1000)}`,
          ),
        );
      }
      if (r.event !== 'done')
        return reject(
          new Error(`load generator failed: ${r.error}${r.body ? ` (body ${r.body})` : ''}`),
        );
      resolve({ ...r, server_cpu: (cpuEnd - cpuStart) / r.duration_s });
    });
  });
}

// ---------------------------------------------------------------- the run

function hasWrk(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function chooseTool(want: string): Tool {
  if (want === 'autocannon') return 'autocannon';
  if (want === 'wrk') {
    if (!hasWrk())
      throw new Error('BENCH_LOADGEN=wrk but wrk is not installed (apt-get install wrk)');
    return 'wrk';
  }
  if (want !== 'auto')
    throw new Error(`BENCH_LOADGEN must be auto, wrk or autocannon (got ${JSON.stringify(want)})`);
  return hasWrk() ? 'wrk' : 'autocannon';
}

/** Resolves ok=false when a measurement broke (errors, non-2xx, a failed check); goals are in the ratios line. */
export async function runHttp(): Promise<{ ok: boolean }> {
  const durationS = envInt('BENCH_DURATION', 5);
  const warmupS = envInt('BENCH_WARMUP', 1);
  const connections = envInt('BENCH_CONNECTIONS', 64);
  const pipelining = envInt('BENCH_PIPELINING', 1);
  const rounds = Math.max(1, envInt('BENCH_ROUNDS', 3));
  const tool = chooseTool(process.env.BENCH_LOADGEN ?? 'auto');
  const only = (process.env.BENCH_TARGETS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of only)
    if (!targets.some((t) => t.name === n))
      throw new Error(
        `BENCH_TARGETS names an unknown target ${JSON.stringify(n)}; known: ${targets.map((t) => t.name).join(', ')}`,
      );

  let selected = only.length
    ? targets.filter((t) => only.includes(t.name))
    : targets.filter((t) => !t.optional);
  const ctx: Ctx = {};
  const skipped: Record<string, string> = {};
  const uws = loadUws();
  if ('error' in uws) {
    skipped.uws = uws.error;
    for (const t of selected.filter((t) => servers[t.server].uws)) {
      emit({ bench: 'http', target: t.name, skipped: true, reason: uws.error });
      note(`skipping ${t.name}: ${uws.error}`);
    }
    selected = selected.filter((t) => !servers[t.server].uws);
  }
  if (selected.some((t) => servers[t.server].remote)) {
    const why = netnsUnavailable();
    let ns: Netns | undefined;
    if (!why) {
      try {
        ns = createNetns();
      } catch (err) {
        skipped.reason = `could not create a network namespace: ${(err as Error).message}`;
      }
    } else skipped.reason = why;
    if (ns) {
      ctx.ns = ns;
      onCleanup(() => ns.close());
    } else {
      for (const t of selected.filter((t) => servers[t.server].remote)) {
        emit({ bench: 'http', target: t.name, skipped: true, reason: skipped.reason });
        note(`skipping ${t.name}: ${skipped.reason}`);
      }
      selected = selected.filter((t) => !servers[t.server].remote);
    }
  }

  emit({
    bench: 'http',
    kind: 'config',
    machine: machine(),
    loadgen: tool === 'wrk' ? 'wrk -t1 (separate process)' : 'autocannon (separate node process)',
    duration_s: durationS,
    warmup_s: warmupS,
    connections,
    pipelining,
    rounds,
    targets: selected.map((t) => t.name),
  });

  const workDir = mkdtempSync(join(tmpdir(), 'svc-bench-http-'));
  removeLater(workDir);
  const running = new Map<ServerName, Running>();
  const perTarget = new Map<
    string,
    Array<{ round: number; rps: number; eff: number | null; cpu: number }>
  >();
  let ok = true;
  try {
    for (const name of new Set(selected.map((t) => t.server))) {
      note(`starting ${name}`);
      running.set(name, await servers[name].start(ctx));
    }

    // A non-loopback request without the key must be refused, or the "authenticated" numbers mean nothing.
    const remoteSvc = running.get('svc_remote');
    if (remoteSvc && ctx.ns) {
      const res = await ctx.ns.run(
        [
          process.execPath,
          '-e',
          `fetch('http://${remoteSvc.host}:${remoteSvc.port}/api/status').then(r=>console.log(r.status),e=>{console.log(0);})`,
        ],
        15_000,
      );
      const status = Number(res.stdout.trim());
      const good = status === 401;
      if (!good) ok = false;
      emit({
        bench: 'http',
        kind: 'check',
        check: 'remote GET /api/status without key is refused',
        status,
        expected: 401,
        ok: good,
      });
    }

    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? selected : [...selected].reverse();
      for (const t of order) {
        const srv = running.get(t.server)!;
        const remote = servers[t.server].remote;
        const headers: Record<string, string> = { ...t.headers };
        if (t.auth) headers.Authorization = `Bearer ${srv.key!()}`;
        const cfg: LoadConfig = {
          tool,
          workDir,
          url: `http://${srv.host}:${srv.port}${t.path}`,
          headers,
          connections,
          pipelining,
          durationS,
          warmupS,
          expectStatus: t.expectStatus ?? 200,
        };
        note(`round ${r + 1}/${rounds}: ${t.name} (${durationS}s, ${connections} connections)`);
        try {
          const res = await runLoadgen(cfg, remote ? ctx.ns : undefined, srv.pids());
          const clean = res.non2xx === 0 && res.errors === 0;
          if (!clean) ok = false;
          (perTarget.get(t.name) ?? perTarget.set(t.name, []).get(t.name)!).push({
            round: r,
            rps: res.rps,
            eff: res.server_cpu > 0.05 ? res.rps / res.server_cpu : null,
            cpu: res.server_cpu,
          });
          emit({
            bench: 'http',
            target: t.name,
            round: r + 1,
            method: t.method ?? 'GET',
            path: t.path,
            client: remote ? 'netns' : 'loopback',
            auth: t.auth === true,
            rps: round(res.rps),
            requests: res.requests,
            duration_s: res.duration_s,
            latency_ms: Object.fromEntries(
              Object.entries(res.latency_ms).map(([k, v]) => [k, round(v, 2)]),
            ),
            non2xx: res.non2xx,
            errors: res.errors,
            timeouts: res.timeouts,
            status_codes: res.status_codes,
            server_cpu: round(res.server_cpu, 2),
            loadgen_cpu: round(res.loadgen_cpu, 2),
            rps_per_server_cpu_s: res.server_cpu > 0 ? round(res.rps / res.server_cpu) : null,
            server_saturated: res.server_cpu >= SATURATED,
            ok: clean,
            about: t.about,
          });
        } catch (err) {
          ok = false;
          emit({ bench: 'http', target: t.name, round: r + 1, error: (err as Error).message });
        }
      }
    }
  } finally {
    for (const [name, srv] of running) {
      note(`stopping ${name}`);
      await srv.stop().catch(() => undefined);
    }
    ctx.ns?.close();
  }

  const summary: Record<string, { rps: number; eff: number | null }> = {};
  const notSaturated: string[] = [];
  for (const t of selected) {
    const xs = perTarget.get(t.name) ?? [];
    if (xs.length === 0) continue;
    const rps = xs.map((x) => x.rps);
    const effs = xs.map((x) => x.eff).filter((e): e is number => e !== null);
    summary[t.name] = { rps: mean(rps), eff: effs.length ? mean(effs) : null };
    emit({
      bench: 'http',
      kind: 'summary',
      target: t.name,
      rps_mean: round(mean(rps)),
      rps_min: round(Math.min(...rps)),
      rps_max: round(Math.max(...rps)),
      rounds: xs.length,
      rps_per_server_cpu_s_mean: effs.length ? round(mean(effs)) : null,
      server_cpu_mean: round(mean(xs.map((x) => x.cpu)), 2),
    });
    if (mean(xs.map((x) => x.cpu)) < SATURATED) notSaturated.push(t.name);
  }
  // Primary ratio: mean rps over mean rps. Also per round (targets run back to back, so each
  // round's ratio sees similar machine noise) and per server CPU-second (less sensitive to
  // neighbours stealing CPU from the load generator, since it divides out the CPU the server got).
  const out: Record<string, unknown> = {};
  const pass: Record<string, boolean> = {};
  /** The same goals judged on requests per server CPU-second (see RESULTS.md for when to trust which). */
  const passPerCpu: Record<string, boolean> = {};
  for (const q of ratios) {
    const a = summary[q.numerator];
    const b = summary[q.denominator];
    if (a === undefined || b === undefined) continue;
    out[q.name] = round(a.rps / b.rps, 3);
    const perRound = (perTarget.get(q.numerator) ?? []).flatMap((x) => {
      const y = (perTarget.get(q.denominator) ?? []).find((d) => d.round === x.round);
      return y ? [round(x.rps / y.rps, 3)] : [];
    });
    out[`${q.name}_per_round`] = perRound;
    if (a.eff !== null && b.eff !== null) out[`${q.name}_per_cpu`] = round(a.eff / b.eff, 3);
    if (q.min !== undefined) {
      pass[q.name] = a.rps / b.rps >= q.min;
      if (a.eff !== null && b.eff !== null) passPerCpu[q.name] = a.eff / b.eff >= q.min;
      out[`${q.name}_target`] = `>= ${q.min}`;
    }
  }
  // null when no goal could be judged (its targets were skipped or not selected)
  const allPass = Object.keys(pass).length ? Object.values(pass).every(Boolean) : null;
  emit({
    bench: 'http',
    kind: 'ratios',
    loadgen: tool,
    ...out,
    pass,
    pass_per_cpu: passPerCpu,
    all_targets_met: allPass,
    measurements_clean: ok,
    // A server below ~0.85 of a core was waiting on the load generator (or on CPU taken by other
    // load on the machine): its rps is a floor, and the *_per_cpu ratios are the better estimate.
    ...(notSaturated.length ? { server_not_saturated: notSaturated } : {}),
    ...(skipped.reason ? { skipped_remote: skipped.reason } : {}),
    ...(skipped.uws ? { skipped_uws: skipped.uws } : {}),
  });
  return { ok };
}

if (isMain(import.meta.url)) {
  runHttp().then(
    (r) => process.exit(r.ok ? 0 : 1),
    (err: Error) => {
      note(err.stack ?? err.message);
      process.exit(2);
    },
  );
}
