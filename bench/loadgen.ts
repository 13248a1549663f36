import { createRequire } from 'node:module';
import { request } from 'node:http';

/**
 * The load generator, always in its own process (and inside the network namespace for remote
 * targets): `node dist/bench/loadgen.js '<json config>'`.
 *
 * 1. one preflight request with the same headers: its status must be `expectStatus`, else exit 3;
 * 2. a warm-up run of `warmupS` seconds (discarded);
 * 3. prints `{"event":"start"}`, runs `durationS` seconds, prints one JSON result line.
 */

export interface LoadConfig {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  pipelining: number;
  durationS: number;
  warmupS: number;
  expectStatus?: number;
}

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: Record<string, unknown>, cb: (err: Error | null, result: any) => void) => unknown;

function cannon(cfg: LoadConfig, durationS: number): Promise<any> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: cfg.url, headers: cfg.headers ?? {}, connections: cfg.connections, pipelining: cfg.pipelining, duration: durationS, timeout: 10 },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

function preflight(cfg: LoadConfig): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(cfg.url, { headers: { ...cfg.headers, Connection: 'close' }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(5000, () => req.destroy(new Error('preflight timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as LoadConfig;
  const pre = await preflight(cfg);
  const expect = cfg.expectStatus ?? 200;
  if (pre.status !== expect) {
    process.stdout.write(`${JSON.stringify({ event: 'error', error: `preflight answered ${pre.status}, expected ${expect}`, body: pre.body.slice(0, 300) })}\n`);
    process.exit(3);
  }
  if (cfg.warmupS > 0) await cannon(cfg, cfg.warmupS);
  process.stdout.write(`${JSON.stringify({ event: 'start' })}\n`);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await cannon(cfg, cfg.durationS);
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const total: number = r.requests.total;
  process.stdout.write(
    `${JSON.stringify({
      event: 'done',
      preflight_status: pre.status,
      preflight_body: pre.body.slice(0, 200),
      rps: total / r.duration,
      requests: total,
      duration_s: r.duration,
      rps_p50_per_s: r.requests.p50,
      latency_ms: { avg: r.latency.average, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      status_codes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, (v as { count: number }).count])),
      loadgen_cpu: (cpu.user + cpu.system) / 1e6 / wallS,
    })}\n`,
  );
}

main().catch((err: Error) => {
  process.stdout.write(`${JSON.stringify({ event: 'error', error: err.message })}\n`);
  process.exit(1);
});
