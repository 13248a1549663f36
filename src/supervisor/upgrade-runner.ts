import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { log } from '../shared/log.js';
import { upgradeProgressSchema, type UpgradeProgress } from '../shared/protocol/ipc.js';
import { isDevBuild } from '../shared/upgrade/semver.js';
import { packageRoot, version } from '../shared/version.js';

/**
 * POST /api/version/upgrade: runs `svc upgrade --yes --json` (the command line's code, not a copy)
 * in a process of its own, detached so that it outlives this supervisor, which it restarts; its
 * progress lines go to /ws (topic server, type upgrade) while this supervisor lives.
 */
export class UpgradeRunner {
  private proc: ChildProcess | undefined;

  constructor(
    private readonly home: string,
    private readonly publish: (p: UpgradeProgress) => void,
  ) {}

  get running(): boolean {
    return this.proc !== undefined;
  }

  start(): { accepted: boolean; reason: 'running' | 'dev_build' | null } {
    if (isDevBuild(version)) return { accepted: false, reason: 'dev_build' };
    if (this.proc) return { accepted: false, reason: 'running' };
    const launcher = process.argv[1] ?? join(packageRoot, 'bin', 'svc.js');
    const proc = spawn(process.execPath, [launcher, 'upgrade', '--yes', '--json'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SVC_HOME: this.home, SVC_DAEMONIZED: '' },
    });
    this.proc = proc;
    let ended = false;
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      let parsed;
      try {
        parsed = upgradeProgressSchema.safeParse(JSON.parse(line));
      } catch {
        return;
      }
      if (!parsed.success) return;
      if (parsed.data.stage === 'done' || parsed.data.stage === 'failed') ended = true;
      this.publish(parsed.data);
    });
    proc.on('error', () => {});
    proc.on('exit', (code) => {
      this.proc = undefined;
      if (!ended && code !== 0) {
        const why =
          stderr
            .trim()
            .split('\n')
            .pop()
            ?.replace(/^svc: /, '') || `svc upgrade ended with code ${code}`;
        log.warn('the upgrade failed', { error: why });
        this.publish({ stage: 'failed', message: why });
      }
    });
    proc.unref();
    return { accepted: true, reason: null };
  }
}
