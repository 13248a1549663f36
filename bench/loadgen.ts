import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The load generator, always in its own process (and inside the network namespace for remote
 * targets): `node dist/bench/loadgen.js <config.json>` (a file, so a key in the headers never shows
 * in a process list; an inline `'{...}'` is accepted too).
 *
 * 1. one preflight request with the same headers: its status must be `expectStatus`, else exit 3;
 * 2. a warm-up run of `warmupS` seconds (discarded);
 * 3. prints `{"event":"start"}`, runs `durationS` seconds, prints one JSON result line.
 *
 * Tools: `autocannon` (npm devDependency, runs in this node process) or `wrk` (C, one thread,
 * a child of this process; much cheaper per request, so it can saturate a server on a 2-core box).
 */

export type Tool = 'autocannon' | 'wrk';

export interface LoadConfig {
  tool: Tool;
  url: string;
  headers?: Record<string, string>;
  connections: number;
  pipelining: number;
  durationS: number;
  warmupS: number;
  expectStatus?: number;
  /** A private folder for wrk's script (it holds the headers, so a key stays off the command line). */
  workDir?: string;
}

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (
  opts: Record<string, unknown>,
  cb: (err: Error | null, result: any) => void,
) => unknown;

interface Run {
  requests: number;
  duration_s: number;
  latency_ms: { avg: number; p50: number; p90: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  status_codes?: Record<string, number>;
  /** CPU seconds the tool used (this process for autocannon, the wrk child for wrk). */
  cpu_s: number;
}

function cannon(cfg: LoadConfig, durationS: number): Promise<Run> {
  const cpu0 = process.cpuUsage();
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: cfg.url,
        headers: cfg.headers ?? {},
        connections: cfg.connections,
        pipelining: cfg.pipelining,
        duration: durationS,
        timeout: 10,
      },
      (err, r) => {
        if (err) return reject(err);
        const cpu = process.cpuUsage(cpu0);
        resolve({
          requests: r.requests.total,
          duration_s: r.duration,
          latency_ms: {
            avg: r.latency.average,
            p50: r.latency.p50,
            p90: r.latency.p90,
            p99: r.latency.p99,
            max: r.latency.max,
          },
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          status_codes: Object.fromEntries(
            Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [
              k,
              (v as { count: number }).count,
            ]),
          ),
          cpu_s: (cpu.user + cpu.system) / 1e6,
        });
      },
    );
  });
}

const WRK_REPORT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n@@{"duration_us":%d,"requests":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"mean":%f,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.duration, summary.requests, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

/** CPU seconds of this process's waited-for children (cutime + cstime of /proc/self/stat). */
function childrenCpu(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[13]) + Number(rest[14])) / 100;
}

function wrk(cfg: LoadConfig, durationS: number): Promise<Run> {
  if (cfg.pipelining !== 1)
    throw new Error('the wrk driver sends one request at a time per connection (pipelining 1)');
  const script = join(cfg.workDir ?? tmpdir(), `wrk-${process.pid}.lua`);
  // JSON string literals are valid Lua string literals for the characters headers may hold.
  const headers = Object.entries(cfg.headers ?? {})
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}\n`)
    .join('');
  writeFileSync(script, headers + WRK_REPORT, { mode: 0o600 });
  const args = [
    '-t1',
    `-c${cfg.connections}`,
    `-d${durationS}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    cfg.url,
  ];
  const cpu0 = childrenCpu();
  return new Promise((resolve, reject) => {
    const p = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => {
      rmSync(script, { force: true });
      const m = /@@(\{.*\})/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`wrk exited ${code}: ${out.slice(-500)}`));
      const w = JSON.parse(m[1]!) as Record<string, number>;
      resolve({
        requests: w.requests!,
        duration_s: w.duration_us! / 1e6,
        latency_ms: {
          avg: w.mean! / 1000,
          p50: w.p50! / 1000,
          p90: w.p90! / 1000,
          p99: w.p99! / 1000,
          max: w.max! / 1000,
        },
        non2xx: w.status!,
        errors: w.connect! + w.read! + w.write! + w.timeout!,
        timeouts: w.timeout!,
        cpu_s: childrenCpu() - cpu0,
      });
    });
  });
}

function load(cfg: LoadConfig, durationS: number): Promise<Run> {
  return cfg.tool === 'wrk' ? wrk(cfg, durationS) : cannon(cfg, durationS);
}

function preflight(cfg: LoadConfig): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      cfg.url,
      { headers: { ...cfg.headers, Connection: 'close' }, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error('preflight timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const arg = process.argv[2] ?? '{}';
  const cfg = JSON.parse(
    arg.trimStart().startsWith('{') ? arg : readFileSync(arg, 'utf8'),
  ) as LoadConfig;
  const pre = await preflight(cfg);
  const expect = cfg.expectStatus ?? 200;
  if (pre.status !== expect) {
    process.stdout.write(
      `${JSON.stringify({ event: 'error', error: `preflight answered ${pre.status}, expected ${expect}`, body: pre.body.slice(0, 300) })}\n`,
    );
    process.exit(3);
  }
  if (cfg.warmupS > 0) await load(cfg, cfg.warmupS);
  process.stdout.write(`${JSON.stringify({ event: 'start' })}\n`);
  const r = await load(cfg, cfg.durationS);
  process.stdout.write(
    `${JSON.stringify({
      event: 'done',
      tool: cfg.tool,
      preflight_status: pre.status,
      preflight_body: pre.body.slice(0, 200),
      rps: r.requests / r.duration_s,
      ...r,
      loadgen_cpu: r.cpu_s / r.duration_s,
    })}\n`,
  );
}

main().catch((err: Error) => {
  process.stdout.write(`${JSON.stringify({ event: 'error', error: err.message })}\n`);
  process.exit(1);
});
