import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root, from dist/test/helpers/server.js. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const svcBin = join(repoRoot, 'bin', 'svc.js');

export function tmpHome(prefix = 'svc-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunningServer {
  home: string;
  port: number;
  /** http://127.0.0.1:PORT */
  base: string;
  proc: ChildProcess;
  output: () => string;
  key: () => string;
  stop: () => Promise<void>;
}

export interface StartOptions {
  home?: string;
  /** Extra `svc serve` arguments; `--addr 127.0.0.1:0` is added unless an addr is given. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Written to $SVC_HOME/config.yml before start. */
  config?: string;
  timeoutMs?: number;
  /** A command that runs `svc serve` (e.g. ['prlimit', '--nofile=128:128']); it must exec it, so the pid stays svc's. */
  wrap?: string[];
}

/** Starts the real `svc serve` and resolves once it prints its listening line. */
export function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const home = opts.home ?? tmpHome();
  if (opts.config !== undefined)
    writeFileSync(join(home, 'config.yml'), opts.config, { mode: 0o600 });
  const args = opts.args ?? [];
  const hasAddr = args.some((a) => a === '--addr' || a === '-addr' || a.startsWith('--addr='));
  // SVC_UPGRADE_CHECK=0: no test server asks the real releases API (the upgrade tests turn it on with their own)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_HOME: home,
    SVC_LOG_LEVEL: 'info',
    SVC_UPGRADE_CHECK: '0',
    // Every JSON answer is checked against its route's declared schema (src/gateway/answer-check.ts).
    SVC_CHECK_RESPONSES: '1',
    ...opts.env,
  };
  if (opts.env && 'SVC_ACCESS_KEY' in opts.env && opts.env.SVC_ACCESS_KEY === undefined)
    delete env.SVC_ACCESS_KEY;
  const command = [
    ...(opts.wrap ?? []),
    process.execPath,
    svcBin,
    'serve',
    ...(hasAddr ? [] : ['--addr', '127.0.0.1:0']),
    ...args,
  ];
  const proc = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    // A bound, not a measure: a loaded CI machine can take many seconds to start a process.
    const timer = setTimeout(
      () => {
        proc.kill('SIGKILL');
        reject(new Error(`svc serve did not start in time:\n${out}`));
      },
      (opts.timeoutMs ?? 15_000) * SLACK,
    );
    const check = () => {
      const m = /listening on http:\/\/(\S+?):(\d+)\/.*$/m.exec(out);
      if (!m) return;
      clearTimeout(timer);
      proc.stdout!.off('data', check);
      // SVC_HTTP_ENGINE runs the suite on one engine: a server on the other would prove nothing.
      const want = env.SVC_HTTP_ENGINE;
      if (
        want &&
        !m[0].includes(`(engine: ${want === 'uws' ? 'uWebSockets.js native' : 'node:http'})`)
      ) {
        proc.kill('SIGKILL');
        return reject(
          new Error(`SVC_HTTP_ENGINE=${want}, but svc serve started with another engine: ${m[0]}`),
        );
      }
      const port = Number(m[2]);
      resolve({
        home,
        port,
        base: `http://127.0.0.1:${port}`,
        proc,
        output: () => out,
        key: () => readFileSync(join(home, 'access_key'), 'utf8').trim(),
        stop: () => stopProcess(proc),
      });
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited with code ${code} before listening:\n${out}`));
    });
  });
}

export function stopProcess(proc: ChildProcess, timeoutMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

export function removeHome(home: string): void {
  // SVC_TEST_KEEP_HOMES=1 keeps each test's SVC_HOME (its logs/ hold every process's log) for a post-mortem.
  if (process.env.SVC_TEST_KEEP_HOMES === '1') return void process.stdout.write(`kept ${home}\n`);
  rmSync(home, { recursive: true, force: true });
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any;
}

/**
 * A raw HTTP request where the test controls every header, `Host` included (fetch cannot set it).
 * A fresh connection each time, so tests never share keep-alive state.
 */
export function http(opts: {
  port: number;
  host?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  localAddress?: string;
}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: opts.host ?? '127.0.0.1',
        port: opts.port,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: { Host: `127.0.0.1:${opts.port}`, Connection: 'close', ...opts.headers },
        setHost: false,
        agent: false,
        localAddress: opts.localAddress,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: () => JSON.parse(text),
          });
        });
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.end(opts.body);
    else req.end();
  });
}

/** Tries a WebSocket upgrade; resolves the HTTP status (101 when it was accepted). */
export function upgradeStatus(opts: {
  port: number;
  path?: string;
  headers?: Record<string, string>;
}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: opts.port,
      path: opts.path ?? '/ws',
      setHost: false,
      agent: false,
      headers: {
        Host: `127.0.0.1:${opts.port}`,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...opts.headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs `svc <args>` to completion. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [svcBin, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs * SLACK);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * How much longer than written a wait may take before it fails. The bounds in the tests are what
 * a quiet machine needs; CI runs on a loaded one (load 15+ on 2 cores), where a process start can
 * take several times as long. A longer bound never slows a passing test: waits end on the
 * condition. SVC_TEST_SLACK overrides the factor.
 */
export const SLACK = Math.max(1, Number(process.env.SVC_TEST_SLACK) || 4);

/** Polls `fn` until it returns a truthy value or the time runs out (no fixed sleeps in assertions). */
export async function waitFor<T>(
  fn: () => Promise<T> | T,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs * SLACK;
  let last: unknown;
  while (Date.now() < until) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}
