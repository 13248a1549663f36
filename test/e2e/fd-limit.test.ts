import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import {
  http,
  removeHome,
  SLACK,
  startServer,
  waitFor,
  type RunningServer,
} from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';

/**
 * No descriptors left (issue 24 item 6): `svc serve` under `nofile=128` (soft and hard, so it
 * cannot raise it) takes a storm of 300 WebSocket clients. The gateway caps its connections
 * below the limit, refuses the rest cleanly (503 or a closed connection, never a hang), keeps
 * /api/health answering throughout, does not spin, and takes new clients once the storm is over.
 */

const NOFILE = 128;
const STORM = 300;
/** Generous, and stretched for a loaded machine; a gateway out of descriptors hangs health for good. */
const HEALTH_BOUND_MS = 5_000 * SLACK;

// prlimit comes with util-linux (essential on Debian); without it the limit cannot be set for the test.
const missing = spawnSync('prlimit', ['--version']).error
  ? 'prlimit (util-linux) is not installed, so no descriptor limit can be put on svc'
  : '';

if (missing) {
  skipFile(missing);
} else {
  let server: RunningServer;

  test.before(async () => {
    server = await startServer({ wrap: ['prlimit', `--nofile=${NOFILE}:${NOFILE}`] });
  });
  test.after(async () => {
    await server?.stop();
    if (server) removeHome(server.home);
  });

  function gatewayPid(): number {
    const kids = readFileSync(`/proc/${server.proc.pid}/task/${server.proc.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    const pid = kids.find((k) =>
      readFileSync(`/proc/${k}/cmdline`, 'utf8').includes('gateway/main.js'),
    );
    assert.ok(pid, 'the gateway process');
    return pid;
  }

  /** utime + stime of a process, in clock ticks. */
  function cpuTicks(pid: number): number {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  }

  type Outcome =
    | { kind: 'open'; ws: WebSocket }
    | { kind: 'refused'; status: number; retryAfter: string | undefined }
    | { kind: 'closed'; error: string };

  /** One client: settles when it is open or refused; a client that never settles fails the test through the deadline below. */
  function client(port: number): Promise<Outcome> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      ws.once('open', () => resolve({ kind: 'open', ws }));
      ws.once('unexpected-response', (_req, res) => {
        resolve({
          kind: 'refused',
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
        });
        res.resume();
        ws.terminate();
      });
      ws.once('error', (err) =>
        resolve({ kind: 'closed', error: (err as NodeJS.ErrnoException).code ?? err.message }),
      );
    });
  }

  async function health(): Promise<number> {
    const t0 = performance.now();
    const r = await http({ port: server.port, path: '/api/health' });
    assert.is(r.status, 200, r.text);
    return performance.now() - t0;
  }

  test('300 WebSocket clients at nofile=128: capped and refused cleanly, health answers throughout, no spin, new clients welcome after', async () => {
    assert.match(
      server.output(),
      /max_connections=64 max_websockets=48/,
      'the gateway states its caps from the limit it runs with',
    );
    const gw = gatewayPid();

    // Health is polled the whole time the storm lasts.
    let storming = true;
    const latencies: number[] = [];
    const healthErrors: string[] = [];
    const poller = (async () => {
      while (storming) {
        try {
          latencies.push(await health());
        } catch (err) {
          healthErrors.push((err as Error).message);
        }
      }
    })();

    // The deadline is cleared once the storm settles: a pending timer kept this file's process
    // alive for its whole four minutes (SLACK 4) after the test had passed.
    let deadline: NodeJS.Timeout | undefined;
    const outcomes = await Promise.race([
      Promise.all(Array.from({ length: STORM }, () => client(server.port))),
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new Error('some storm clients neither opened nor were refused')),
          60_000 * SLACK,
        );
      }),
    ]).finally(() => clearTimeout(deadline));
    const open = outcomes.filter((o): o is Extract<Outcome, { kind: 'open' }> => o.kind === 'open');
    const refused = outcomes.filter(
      (o): o is Extract<Outcome, { kind: 'refused' }> => o.kind === 'refused',
    );
    const closed = outcomes.filter(
      (o): o is Extract<Outcome, { kind: 'closed' }> => o.kind === 'closed',
    );
    console.log(
      `  storm of ${STORM}: ${open.length} open, ${refused.length} refused with 503, ${closed.length} closed (${[...new Set(closed.map((c) => c.error))].join(', ')})`,
    );
    assert.ok(
      open.length > 0 && open.length <= 48,
      `open WebSockets stay within the cap: ${open.length}`,
    );
    for (const r of refused) {
      assert.is(r.status, 503);
      assert.is(r.retryAfter, '5');
    }
    assert.is(open.length + refused.length + closed.length, STORM);

    // With the cap full, fresh connections still get health; then the gateway's core stays idle.
    storming = false;
    await poller;
    for (let i = 0; i < 5; i++) latencies.push(await health());
    const t0 = cpuTicks(gw);
    const w0 = Date.now();
    await waitFor(() => Date.now() - w0 >= 3_000, 10_000, 'three seconds to pass');
    const idleTicks = cpuTicks(gw) - t0;
    console.log(
      `  health: ${latencies.length} checks, max ${Math.round(Math.max(...latencies))} ms; gateway CPU over 3 s idle: ${idleTicks * 10} ms`,
    );
    assert.equal(healthErrors, [], 'every health check answered 200');
    assert.ok(
      Math.max(...latencies) < HEALTH_BOUND_MS,
      `health answered within ${Math.round(HEALTH_BOUND_MS)} ms`,
    );
    // A busy loop burns the whole 3 s (300 ticks at 100 Hz); an idle gateway a few ticks.
    assert.ok(idleTicks < 60, `the gateway does not spin: ${idleTicks} ticks of CPU in 3 s idle`);

    // The storm ends; new clients connect as before.
    for (const o of open) o.ws.close();
    await waitFor(
      async () => {
        const fresh = await Promise.all(Array.from({ length: 20 }, () => client(server.port)));
        const ok = fresh.every((o) => o.kind === 'open');
        for (const o of fresh) if (o.kind === 'open') o.ws.close();
        return ok;
      },
      15_000,
      '20 new clients to connect after the storm',
    );
    assert.is((await http({ port: server.port, path: '/api/health' })).status, 200);
  });
}

test.run();
