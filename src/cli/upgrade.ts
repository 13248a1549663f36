import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { loadConfig } from '../shared/config/load.js';
import { loadServeEnv } from '../shared/config/serve-env.js';
import type { Paths } from '../shared/paths.js';
import { statusSchema, type UpgradeProgress } from '../shared/protocol/ipc.js';
import { mib, UpgradeError } from '../shared/upgrade/fetch.js';
import { installRelease, rollback } from '../shared/upgrade/install.js';
import {
  readRelaunch,
  relaunchFile,
  startFromRecord,
  writeRelaunch,
  type Relaunch,
} from '../shared/upgrade/relaunch.js';
import { fetchRelease, notesHead, releasesUrl } from '../shared/upgrade/releases.js';
import { isDevBuild, isNewer, tagVersion } from '../shared/upgrade/semver.js';
import { version as current } from '../shared/version.js';
import { askControl } from '../supervisor/control-socket.js';
import { UsageError } from './argv.js';
import { alive } from './daemon.js';

/** `svc upgrade`: --check, install (--yes, --version X) or --rollback; returns the exit code. */

export interface UpgradeFlags {
  check: boolean;
  yes: boolean;
  version?: string;
  rollback: boolean;
  json: boolean;
}

type Say = (p: UpgradeProgress) => void;

export async function upgrade(paths: Paths, flags: UpgradeFlags): Promise<number> {
  if ([flags.check, flags.rollback, flags.version !== undefined].filter(Boolean).length > 1)
    throw new UsageError('--check, --rollback and --version go one at a time');
  // the upgrade run for the Web UI outlives the supervisor that reads its output
  process.stdout.on('error', () => {});
  const say = sayer(flags.json);
  if (flags.rollback) {
    const r = rollback(paths.home);
    say({
      stage: 'installing',
      message: `svc ${r.to} is the active version again (${r.from} is kept as the previous one)`,
    });
    return restartInto(paths, r.to, say, false);
  }
  loadServeEnv(paths.serveEnv);
  const base = releasesUrl(loadConfig(paths.config));
  say({
    stage: 'checking',
    message: `looking for ${flags.version ? `release ${flags.version}` : 'the latest release'} at ${base}`,
  });
  const release = await fetchRelease(base, flags.version);
  const latest = tagVersion(release.tag_name);
  const dev = isDevBuild(current);
  if (flags.check) {
    if (flags.json)
      console.log(
        JSON.stringify({
          current,
          latest,
          update_available: !dev && isNewer(latest, current),
          dev_build: dev,
          release_url: release.html_url ?? null,
          notes: notesHead(release.body),
        }),
      );
    else
      console.log(
        `current: ${current}\nlatest:  ${latest}\n${dev ? 'this is a development build, which is never upgraded' : isNewer(latest, current) ? `update available: "svc upgrade" installs ${latest}` : 'up to date'}`,
      );
    return 0;
  }
  if (dev)
    throw new UpgradeError(
      `svc ${current} is a development build, which is never upgraded; install a release instead`,
    );
  if (latest === current) {
    say({ stage: 'done', version: current, message: `svc ${current} is up to date` });
    return 0;
  }
  if (flags.version === undefined && !isNewer(latest, current)) {
    say({
      stage: 'done',
      version: current,
      message: `svc ${current} is up to date (the latest release is ${latest})`,
    });
    return 0;
  }
  if (!flags.json) {
    console.log(`svc ${current} → ${latest}${release.html_url ? ` (${release.html_url})` : ''}`);
    for (const line of notesHead(release.body)) console.log(`  ${line}`);
  }
  if (!flags.yes) {
    if (!process.stdin.isTTY)
      throw new UsageError(
        'confirmation needed: run "svc upgrade --yes" to install without asking',
      );
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await rl.question(`Install svc ${latest}? [y/N] `);
    rl.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      console.log('nothing was changed');
      return 0;
    }
  }
  const installed = await installRelease(paths.home, release, say);
  say({
    stage: 'installing',
    version: installed.version,
    message: `svc ${installed.version} is the active version (in ${installed.root}); ${current} is kept for "svc upgrade --rollback"`,
  });
  return restartInto(paths, installed.version, say, true);
}

/** Restarts a running svc into the active version; an upgrade that does not come up is rolled back. */
async function restartInto(
  paths: Paths,
  want: string,
  say: Say,
  rollBackOnFailure: boolean,
): Promise<number> {
  const status = await askControl(paths.controlSocket, { cmd: 'status' }, 3000).then(
    (s) => statusSchema.parse(s),
    () => undefined,
  );
  if (!status) {
    say({ stage: 'done', version: want, message: `svc ${want} starts with the next "svc serve"` });
    return 0;
  }
  say({
    stage: 'restarting',
    version: want,
    message: `restarting svc (through the drain) into ${want}`,
  });
  rmSync(relaunchFile(paths), { force: true });
  const reply = z
    .object({ accepted: z.boolean() })
    .parse(await askControl(paths.controlSocket, { cmd: 'replace' }, 5000));
  if (!reply.accepted)
    throw new UpgradeError(
      `svc is ${status.state} and cannot restart now; ${want} starts with the next "svc serve"`,
    );
  const came = await waitForVersion(paths, status.url, want);
  if (came === true) {
    say({ stage: 'done', version: want, message: `svc ${want} is running` });
    return 0;
  }
  if (!rollBackOnFailure)
    throw new UpgradeError(
      `svc ${want} did not answer /api/health after the restart (${came}); see "svc logs"`,
    );
  const back = rollback(paths.home);
  await stopWhatRuns(paths);
  const record = readRelaunch(paths);
  // Under a service manager (no pid recorded) the manager starts it; otherwise we do, in the background.
  if (record?.pid !== undefined)
    writeRelaunch(paths, {
      ...record,
      daemonized: true,
      pid: startFromRecord(paths, record, true),
    });
  const again = await waitForVersion(paths, status.url, back.to);
  const how =
    again === true
      ? `svc ${back.to} runs again`
      : `svc ${back.to} is active again but did not answer either (${again}); see "svc logs"`;
  throw new UpgradeError(
    `svc ${want} did not answer /api/health after the restart (${came}), so svc rolled back by itself: ${how}`,
  );
}

/** Longer than a relaunch may wait for its port (75 s, supervisor/port-check.ts) plus a start. */
const HEALTH_WAIT_MS = (): number => Number(process.env.SVC_UPGRADE_HEALTH_TIMEOUT_S ?? 100) * 1000;

/** Polls the restarted svc until it answers /api/health as `want`; a reason string when it does not. */
async function waitForVersion(
  paths: Paths,
  url: string | null,
  want: string,
): Promise<true | string> {
  if (url === null) return 'svc had no address to check';
  const until = Date.now() + HEALTH_WAIT_MS();
  let deadSince: number | undefined;
  while (Date.now() < until) {
    const got = await fetch(new URL('api/version', url), { signal: AbortSignal.timeout(2000) })
      .then(async (r) =>
        r.ok ? z.object({ version: z.string() }).parse(await r.json()).version : undefined,
      )
      .catch(() => undefined);
    if (got === want) {
      const health = await fetch(new URL('api/health', url), {
        signal: AbortSignal.timeout(2000),
      }).then(
        (r) => r.status,
        () => 0,
      );
      if (health === 200) return true;
    }
    // the process started for it exited and nothing answers: give it a moment more, not the whole wait
    const record = readRelaunch(paths);
    if (record?.pid !== undefined && !alive(record.pid)) deadSince ??= Date.now();
    if (deadSince !== undefined && Date.now() - deadSince > 2000)
      return `it exited (see ${paths.serveLog} and "svc logs")`;
    await new Promise((r) => setTimeout(r, 200));
  }
  return `nothing answered within ${HEALTH_WAIT_MS() / 1000} s`;
}

async function stopWhatRuns(paths: Paths): Promise<void> {
  await askControl(paths.controlSocket, { cmd: 'stop' }, 3000).catch(() => undefined);
  const record: Relaunch | undefined = readRelaunch(paths);
  const pid = record?.pid;
  if (pid === undefined) return;
  const until = Date.now() + 15_000;
  if (alive(pid)) process.kill(pid, 'SIGTERM');
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/** Human lines with a progress bar on a terminal, or one JSON object a line (--json, the Web UI's run). */
function sayer(json: boolean): Say {
  let lastPct = -1;
  return (p) => {
    if (json) return void console.log(JSON.stringify(p));
    if (p.stage === 'downloading' && p.bytes !== undefined && p.total) {
      const pct = Math.floor((p.bytes / p.total) * 100);
      if (process.stderr.isTTY) {
        const bar = '#'.repeat(Math.floor(pct / 4)).padEnd(25, ' ');
        process.stderr.write(
          `\r[${bar}] ${String(pct).padStart(3)}% ${mib(p.bytes)} / ${mib(p.total)}${pct === 100 ? '\n' : ''}`,
        );
      } else if (pct >= lastPct + 25 || pct === 100) {
        console.log(`downloaded ${pct}% (${mib(p.bytes)} of ${mib(p.total)})`);
      }
      lastPct = pct;
      if (p.message) console.log(p.message);
      return;
    }
    if (p.message) console.log(p.message);
  };
}
