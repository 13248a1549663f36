import { existsSync, type FSWatcher, readFileSync, watch } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join, relative, sep } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { askControl } from '../../src/supervisor/control-socket.js';
import { http, removeHome, runCli, startServer, tmpHome, waitFor } from '../helpers/server.js';

/*
 * A gateway that served and then crashed is back at once, however often it happens; one that
 * cannot start backs off, and `svc status` says so (down, why, next try) instead of "running".
 * Through crashes and a restart the status lists the gateway the whole time (starting, then running).
 */

interface Row {
  role: string;
  pid: number;
  state: string;
  restarts: number;
  last_exit: string | null;
  next_try_at?: string | null;
}

async function statusJson(
  home: string,
): Promise<{ running: boolean; serving: boolean; state: string; processes: Row[] }> {
  const r = await runCli(['status', '--json'], { SVC_HOME: home });
  assert.is(r.code, 0, `svc status --json failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const gatewayRow = async (home: string) =>
  (await statusJson(home)).processes.find((p) => p.role === 'gateway');

/**
 * Asks the supervisor for its status over and over (its control socket, which answers while no
 * gateway serves) until stopped: every answer's gateway rows, and the answers that had none.
 */
function watchGatewayRows(home: string) {
  const socket = resolvePaths({ SVC_HOME: home }).controlSocket;
  const seen: Row[][] = [];
  const missing: unknown[] = [];
  let polling = true;
  let watcher: FSWatcher | undefined;
  let woken: (() => void) | undefined;
  // Started before svc: it waits for the socket by watching its folders, then asks at once.
  const appeared = async () => {
    while (polling && !existsSync(socket)) {
      let dir = dirname(socket);
      while (!existsSync(dir)) dir = dirname(dir);
      const next = join(dir, relative(dir, socket).split(sep)[0]!);
      await new Promise<void>((resolve) => {
        woken = resolve;
        watcher = watch(dir, () => resolve());
        if (existsSync(next)) resolve();
      });
      watcher?.close();
    }
  };
  const done = (async () => {
    await appeared();
    while (polling) {
      const s = (await askControl(socket, { cmd: 'status' }).catch(() => undefined)) as
        | { state: string; processes: Row[] }
        | undefined;
      if (!s) continue;
      const rows = s.processes.filter((p) => p.role === 'gateway');
      if (rows.length === 0)
        missing.push({ state: s.state, roles: s.processes.map((p) => p.role) });
      else seen.push(rows);
    }
  })();
  return {
    seen,
    missing,
    stop: async () => {
      polling = false;
      woken?.();
      await done;
    },
  };
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** A plain listener (no SO_REUSEPORT) on the port, which a new gateway then cannot share. */
function bindPort(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen({ host: '127.0.0.1', port }, () => resolve(srv));
  });
}

test('a gateway that served and crashed is back at once, six times running: no crash-loop pause; status lists it throughout, and through a restart', async () => {
  const server = await startServer();
  const watch = watchGatewayRows(server.home);
  try {
    // Status over HTTP, not the CLI, keeps the crashes close together (five in a minute was the pause).
    const apiRow = async () =>
      (
        (await http({ port: server.port, path: '/api/status' })).json() as { processes: Row[] }
      ).processes.find((p) => p.role === 'gateway');
    for (let i = 1; i <= 6; i++) {
      const before = await apiRow();
      assert.ok(
        before && before.pid > 0 && before.state === 'running',
        `crash ${i}: a running gateway`,
      );
      process.kill(before.pid, 'SIGKILL');
      // Backing off would leave the port refusing for 60 s after the fifth crash; at once means one start.
      // The new gateway answers a moment before the supervisor has its reply to child.start and lists
      // it, so the wait ends on the listing too (CI's Node 24 pass once read the status in between).
      const after = await waitFor(
        async () => {
          if (!gone(before.pid)) return undefined;
          if ((await http({ port: server.port, path: '/api/health' })).status !== 200)
            return undefined;
          const row = await apiRow();
          return row?.state === 'running' && row.pid !== before.pid ? row : undefined;
        },
        20_000,
        `the gateway back after crash ${i}`,
      );
      assert.is(after?.restarts, i, `crash ${i}: restarts counted`);
      assert.match(after?.last_exit ?? '', /killed by SIGKILL/);
    }
    assert.is((await statusJson(server.home)).state, 'running');
    const starts = watch.seen.filter((rows) => rows.some((r) => r.state === 'starting'));
    assert.ok(starts.length > 0, 'the polls saw a gateway starting');

    // A restart: the new gateway is listed as starting, with its pid, beside the one still serving.
    const first = (await gatewayRow(server.home))!;
    const restart = await http({ port: server.port, method: 'POST', path: '/api/restart' });
    assert.is(restart.status, 202, restart.text);
    await waitFor(
      async () => {
        const s = await statusJson(server.home);
        const row = s.processes.find((p) => p.role === 'gateway');
        return s.state === 'running' && row?.state === 'running' && row.pid !== first.pid;
      },
      20_000,
      'the restarted gateway running',
    );
    await watch.stop();
    assert.equal(watch.missing, [], 'every status listed the gateway');
    assert.ok(
      watch.seen.some(
        (rows) =>
          rows.length === 2 &&
          rows[0]!.pid === first.pid &&
          rows[0]!.state === 'running' &&
          rows[1]!.state === 'starting' &&
          rows[1]!.pid > 0,
      ),
      'the polls saw the new gateway starting beside the serving one',
    );
  } finally {
    await watch.stop();
    await server.stop();
    removeHome(server.home);
  }
});

test('a gateway that cannot start: svc status says it is down, why, and when it is tried again (and lists it from the first status on)', async () => {
  // From svc's first answer on (its socket is up before the gateway), the gateway is listed.
  const home = tmpHome();
  const watch = watchGatewayRows(home);
  const server = await startServer({ home }).catch(async (err) => {
    await watch.stop();
    throw err;
  });
  await watch.stop();
  assert.equal(watch.missing, [], 'every status during the start listed the gateway');
  assert.ok(watch.seen.length > 0, 'svc was asked during its start');
  let blocker: Server | undefined;
  const supervisor = server.proc.pid!;
  try {
    const gw = (await gatewayRow(server.home))!;
    // Hold the supervisor still while the port is taken, so the new gateway cannot bind it.
    process.kill(supervisor, 'SIGSTOP');
    try {
      process.kill(gw.pid, 'SIGKILL');
      await waitFor(() => gone(gw.pid), 10_000, 'the gateway to die');
      blocker = await waitFor(
        () => bindPort(server.port),
        10_000,
        `port ${server.port} to be free`,
      );
    } finally {
      process.kill(supervisor, 'SIGCONT');
    }
    const down = await waitFor(
      async () => {
        const s = await statusJson(server.home);
        const row = s.processes.find((p) => p.role === 'gateway');
        return row && (row.state === 'backoff' || row.state === 'crash_loop')
          ? { s, row }
          : undefined;
      },
      30_000,
      'the gateway row to show it backing off',
    );
    assert.is(down.s.state, 'degraded');
    assert.is(down.s.serving, false);
    assert.is(down.row.pid, -1);
    assert.match(down.row.last_exit ?? '', /did not start: .*cannot listen/);
    assert.ok(
      down.row.next_try_at && !Number.isNaN(Date.parse(down.row.next_try_at)),
      'a next try time',
    );
    assert.not.ok(
      down.s.processes.some((p) => p.pid === -1 && p.state === 'running'),
      'nothing "running" without a process',
    );
    // Failing again and again, it pauses for the crash-loop time, and the text says so.
    const text = await waitFor(
      async () => {
        const r = await runCli(['status'], { SVC_HOME: server.home });
        return /keeps failing to start/.test(r.stdout) ? r.stdout : undefined;
      },
      60_000,
      'status to report the crash-loop pause',
    );
    assert.match(text, /NOT serving: the gateway is down/);
    assert.match(text, /next try at \S+ \(in \d+ s\)/);
    assert.not.match(text.split('\n')[0]!, /listening on/);
    const row = (await gatewayRow(server.home))!;
    assert.is(row.state, 'crash_loop');
    assert.ok(Date.parse(row.next_try_at!) - Date.now() > 30_000, 'the pause is long');
  } finally {
    blocker?.close();
    await server.stop();
    removeHome(server.home);
  }
});

test.run();
