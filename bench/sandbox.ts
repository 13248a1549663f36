import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvePaths } from '../src/shared/paths.js';
import { bwrapPath, probeArgs, sandboxStatus } from '../src/shared/sandbox/status.js';
import { prepareLaunch } from '../src/workers/agent/sandbox/index.js';
import type { ToolContext } from '../src/workers/agent/tools/registry.js';
import { OutputLog } from '../src/workers/agent/tools/shell/output-log.js';
import { spawnShell } from '../src/workers/agent/tools/shell/shell-process.js';
import { terminalTool } from '../src/workers/agent/tools/shell/terminal.js';
import { emit, envInt, machine, median, note, round } from './lib.js';

/**
 * The sandbox's start cost: the terminal tool running `true`, as the agent runs it (execa, a
 * process group, output capture), with the sandbox (bubblewrap: mounts, pid/ipc namespaces,
 * network per session) and without it, interleaved so machine load hits both alike.
 *
 *   plain      terminal tool, no sandbox (the baseline, as before issue 21)
 *   sandboxed  terminal tool in the sandbox, network on: since issue 38 its own network
 *              namespace, the seccomp program, the relay (a node process) and the proxy
 *   net_off    terminal tool in the sandbox, network off (namespace and seccomp, no relay)
 *   old_on     network on as before issue 38: the same mounts in the host's network, no
 *              seccomp, no relay (the launch the tool made then, started the same way)
 *
 * and, to show where the time goes, bare spawns without the tool around them:
 *
 *   raw_bash   spawn `/bin/bash -c true`
 *   raw_bwrap  spawn `bwrap <the same isolation flags> /bin/true`
 *
 * BENCH_SANDBOX_RUNS (default 60) calls of each. Goal: sandboxed p50 − plain p50 ≤ 15 ms.
 */

const GOAL_MS = 15;
const runs = envInt('BENCH_SANDBOX_RUNS', 60);

const home = mkdtempSync(join(tmpdir(), 'svc-bench-sandbox-'));
const work = mkdtempSync(join(tmpdir(), 'svc-bench-sandbox-work-'));
const paths = resolvePaths({ SVC_HOME: home });

const status = await sandboxStatus(true);
if (status.state !== 'on') {
  emit({ kind: 'ratios', bench: 'sandbox', error: status.message });
  process.exit(1);
}

const plainTool = terminalTool();
const sandboxTool = terminalTool({ sandbox: { enabled: () => true } });
let n = 0;
// No database: the session's network comes from permissions.yml (none here: on), or `offPaths`.
const ctx = (p = paths): ToolContext => ({
  sessionId: 's_bench',
  turnId: 't',
  callId: `c${++n}`,
  workingDir: work,
  signal: new AbortController().signal,
  db: null as unknown as ToolContext['db'],
  paths: p,
  emit: () => {},
});
const offHome = mkdtempSync(join(tmpdir(), 'svc-bench-sandbox-off-'));
const offPaths = resolvePaths({ SVC_HOME: offHome });
writeFileSync(offPaths.permissions, 'sandbox:\n  network: off\n');

function spawnMs(file: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn(file, args, { stdio: 'ignore' });
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

/** The launch of network `on` before issue 38: today's off launch without its namespace and filter. */
async function oldOn(): Promise<number> {
  const t0 = performance.now();
  const launch = await prepareLaunch({ enabled: () => true }, ctx(offPaths), work, {}, undefined);
  if (launch.kind !== 'sandboxed') throw new Error(`old_on: ${launch.kind}`);
  const prefix = launch.prefix.filter(
    (a, i, all) => a !== '--unshare-net' && a !== '--seccomp' && all[i - 1] !== '--seccomp',
  );
  const log = new OutputLog(() => join(home, 'old-on.log'));
  const run = spawnShell({
    command: 'true',
    cwd: work,
    env: launch.env,
    log,
    prefix,
    contained: true,
  });
  const exit = await run.done;
  log.close();
  launch.close();
  const ms = performance.now() - t0;
  if (exit.exitCode !== 0) throw new Error(`old_on: exit ${exit.exitCode}`);
  return ms;
}

async function once(kind: Kind): Promise<number> {
  if (kind === 'old_on') return oldOn();
  if (kind === 'raw_bash') return spawnMs('/bin/bash', ['-c', 'true']);
  if (kind === 'raw_bwrap') return spawnMs(bwrapPath(), probeArgs(process.getuid?.() === 0));
  const t0 = performance.now();
  const r = await (kind === 'plain' ? plainTool : sandboxTool).run(
    { command: 'true' },
    kind === 'net_off' ? ctx(offPaths) : ctx(),
  );
  const ms = performance.now() - t0;
  if (r.output !== '(no output)\n[exit code 0]')
    throw new Error(`${kind}: unexpected output ${JSON.stringify(r.output)}`);
  return ms;
}

const kinds = ['plain', 'sandboxed', 'net_off', 'old_on', 'raw_bash', 'raw_bwrap'] as const;
type Kind = (typeof kinds)[number];
const times: Record<Kind, number[]> = {
  plain: [],
  sandboxed: [],
  net_off: [],
  old_on: [],
  raw_bash: [],
  raw_bwrap: [],
};
for (const k of kinds) await once(k); // warm-up: module loading, the probe, page cache
note(`sandbox: ${runs} runs of each (${status.engine})`);
for (let i = 0; i < runs; i++) {
  const order = i % 2 === 0 ? kinds : [...kinds].reverse();
  for (const k of order) times[k].push(await once(k));
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
for (const k of kinds)
  emit({
    kind: 'result',
    bench: 'sandbox',
    target: k,
    runs,
    p50_ms: round(median(times[k])),
    p90_ms: round(pct(times[k], 90)),
    max_ms: round(Math.max(...times[k])),
  });
const added = median(times.sandboxed) - median(times.plain);
const overOld = median(times.sandboxed) - median(times.old_on);
const addedOff = median(times.net_off) - median(times.plain);
emit({
  kind: 'ratios',
  bench: 'sandbox',
  engine: status.engine,
  machine: machine(),
  sandboxed_over_plain_p50: round(median(times.sandboxed) / median(times.plain)),
  added_p50_ms: round(added),
  added_p50_ms_network_off: round(addedOff),
  on_over_old_on_p50: round(median(times.sandboxed) / median(times.old_on)),
  on_added_over_old_on_p50_ms: round(overOld),
  off_added_over_old_on_p50_ms: round(median(times.net_off) - median(times.old_on)),
  raw_bwrap_over_bash_p50_ms: round(median(times.raw_bwrap) - median(times.raw_bash)),
  goal_added_p50_ms: GOAL_MS,
  pass: added <= GOAL_MS,
});
rmSync(home, { recursive: true, force: true });
rmSync(offHome, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });
