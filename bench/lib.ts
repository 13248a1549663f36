import { spawn, execFileSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeEngine } from '../src/shared/runtime.js';

/**
 * Shared pieces of the benchmarks: JSON-line output, a cleanup registry that kills every process
 * (and removes every temp folder) we started even when the run fails or is interrupted, /proc
 * readers, and small statistics helpers.
 */

/** The package root, from dist/bench/lib.js. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const svcBin = join(repoRoot, 'bin', 'svc.js');
/** Compiled bench scripts live next to this file. */
export const benchDir = fileURLToPath(new URL('.', import.meta.url));

/** One JSON line per result on stdout; progress and diagnostics go to stderr. */
export function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

export function note(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`${name} must be a non-negative number (got ${JSON.stringify(v)})`);
  return n;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- cleanup

const procs = new Set<ChildProcess>();
const extraPids = new Set<number>();
const cleanups: Array<() => void> = [];
let handlersInstalled = false;

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Synchronous, idempotent: SIGKILL every tracked process and its descendants (a load generator's
 * wrk, svc's children), then run every registered cleanup.
 */
export function cleanupNow(): void {
  for (const p of procs) {
    if (p.exitCode !== null || p.signalCode !== null || !p.pid) continue;
    const kids = descendants(p.pid);
    killPid(p.pid, 'SIGKILL');
    for (const k of kids) killPid(k, 'SIGKILL');
  }
  procs.clear();
  for (const pid of extraPids) if (pidAlive(pid)) killPid(pid, 'SIGKILL');
  extraPids.clear();
  while (cleanups.length > 0) {
    try {
      cleanups.pop()!();
    } catch {
      // best effort
    }
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', cleanupNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      note(`${sig}: cleaning up`);
      cleanupNow();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    note(`uncaught: ${err.stack ?? err.message}`);
    cleanupNow();
    process.exit(1);
  });
}
installHandlers();

/** Track a child so it is killed when the bench exits for any reason. */
export function track<T extends ChildProcess>(p: T): T {
  procs.add(p);
  p.once('exit', () => procs.delete(p));
  return p;
}

/** Track a pid we did not spawn directly (a child of svc) so it cannot outlive the bench. */
export function trackPid(pid: number): void {
  extraPids.add(pid);
}

export function onCleanup(fn: () => void): void {
  cleanups.push(fn);
}

export function tracked(cmd: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
  return track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts }));
}

/** Temp folder removed at exit. */
export function removeLater(path: string): void {
  onCleanup(() => rmSync(path, { recursive: true, force: true }));
}

/** SIGTERM, then SIGKILL after `timeoutMs`; also waits for the given descendants to disappear. */
export async function stopTree(
  proc: ChildProcess,
  descendants: number[] = [],
  timeoutMs = 10_000,
): Promise<void> {
  if (proc.exitCode === null && proc.signalCode === null) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  }
  const until = Date.now() + 5_000;
  for (const pid of descendants) {
    while (pidAlive(pid) && Date.now() < until) await sleep(20);
    if (pidAlive(pid)) {
      note(`pid ${pid} outlived its parent; killing it`);
      killPid(pid, 'SIGKILL');
    }
    extraPids.delete(pid);
  }
}

// ---------------------------------------------------------------- /proc

export function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z /.test(stat); // a zombie is gone for our purposes
  } catch {
    return false;
  }
}

/** Direct children of a pid, from /proc/<pid>/task/<tid>/children. */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const txt = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (txt) out.push(...txt.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

/** Every descendant of a pid, depth first. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const c of childPids(pid)) out.push(c, ...descendants(c));
  return out;
}

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM, RssAnon, ...), or null. */
export function statusBytes(pid: number, field: string): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Proportional set size (shared pages split between the processes sharing them), or null. */
export function pssBytes(pid: number): number | null {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

const CLK_TCK = 100; // USER_HZ on Linux

/** utime + stime of a process in seconds. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // after "pid (comm) ": state is field 3 → index 0; utime field 14 → index 11, stime 15 → 12
    return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------- machine, stats, HTTP

export function machine(): Record<string, unknown> {
  let nproc: number | string = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    // keep os.cpus()
  }
  let load: string | undefined;
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    // not Linux
  }
  return {
    date: new Date().toISOString(),
    node: process.version,
    nproc,
    cpu: cpus()[0]?.model ?? 'unknown',
    mem_total_mib: Math.round(totalmem() / 1048576),
    loadavg: load,
  };
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;
export const mib = (bytes: number) => round(bytes / 1048576, 1);

/** A free TCP port on host (bound and released at once; a tiny race we accept for a benchmark). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** One GET on a fresh connection; resolves status and body, rejects on a connection error. */
export function get(opts: {
  host?: string;
  port: number;
  path: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: opts.host ?? '127.0.0.1',
        port: opts.port,
        path: opts.path,
        headers: { Connection: 'close', ...opts.headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.setTimeout(opts.timeoutMs ?? 2000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Waits for a line on a stream matching `re`; rejects on timeout or when the process exits first. */
export function waitForLine(
  proc: ChildProcess,
  re: RegExp,
  timeoutMs: number,
  what: string,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) {
        finish();
        resolve(m);
      }
    };
    const onExit = (code: number | null) => {
      finish();
      reject(new Error(`${what} exited (code ${code}) before it was ready:\n${out.slice(-2000)}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`${what} was not ready within ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.stderr?.off('data', onData);
      proc.off('exit', onExit);
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    proc.once('exit', onExit);
  });
}

/** True when this module is the script node was started with. */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(metaUrl) === process.argv[1];
}

// ---------------------------------------------------------------- svc

export interface Svc {
  home: string;
  host: string;
  port: number;
  /** The HTTP engine the gateway serves with, as its start line names it. */
  engine: 'uws' | 'node';
  proc: ChildProcess;
  /** Supervisor pid. */
  pid: number;
  key(): string;
  /** Last ~8 KB of svc's stdout + stderr (its log), for error reports. */
  tail(): string;
  /** The processes `svc status --json` reports (role, pid, rss_bytes, ...). */
  status(): Promise<
    {
      processes: Array<{ role: string; pid: number; rss_bytes: number | null; state: string }>;
    } & Record<string, unknown>
  >;
  stop(): Promise<void>;
}

/** Environment for svc: our own SVC_HOME, and no inherited key so the generated one is used. */
export function svcEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_HOME: home,
    SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'warn',
  };
  delete env.SVC_ACCESS_KEY;
  delete env.SVC_DAEMONIZED;
  return env;
}

/**
 * Starts the real `svc serve --addr host:port` and resolves once it prints its listening line.
 * `engine` forces the gateway's HTTP engine (SVC_HTTP_ENGINE); unset, svc picks by the runtime (or the inherited SVC_HTTP_ENGINE).
 */
export async function startSvc(opts: {
  home: string;
  host?: string;
  port?: number;
  timeoutMs?: number;
  engine?: 'uws' | 'node';
  /** Another build's `bin/svc.js` (a baseline measured in the same run); this tree's by default. */
  bin?: string;
}): Promise<Svc> {
  const host = opts.host ?? '127.0.0.1';
  const env = svcEnv(opts.home);
  if (opts.engine) env.SVC_HTTP_ENGINE = opts.engine;
  const args = [opts.bin ?? svcBin, 'serve', '--addr', `${host}:${opts.port ?? 0}`];
  const proc = tracked(process.execPath, args, { env });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8192);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const m = await waitForLine(
    proc,
    /listening on http:\/\/(\S+?):(\d+)\/ \(engine: ([^)]+)\)/,
    opts.timeoutMs ?? 20_000,
    'svc serve',
  );
  const engine = m[3] === describeEngine('uws') ? 'uws' : 'node';
  if (opts.engine && engine !== opts.engine)
    throw new Error(`svc serve started the ${m[3]} engine, not ${opts.engine}`);
  const pid = proc.pid!;
  for (const d of descendants(pid)) trackPid(d);
  const svc: Svc = {
    home: opts.home,
    host,
    port: Number(m[2]),
    engine,
    proc,
    pid,
    key: () => readFileSync(join(opts.home, 'access_key'), 'utf8').trim(),
    tail: () => out,
    status: () => svcStatus(opts.home),
    stop: () => stopTree(proc, descendants(pid)),
  };
  return svc;
}

/** `svc status --json` for the given home. */
export function svcStatus(home: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const p = tracked(process.execPath, [svcBin, 'status', '--json'], { env: svcEnv(home) });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 15_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`svc status --json failed (code ${code}): ${stderr || stdout}`));
      }
    });
  });
}
