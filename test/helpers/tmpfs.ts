import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';

/**
 * A tmpfs of a test's own (a read-only or a full disk, for real). Mounting needs root (CI runs
 * as root); `tmpfsUnavailable()` says why not otherwise, so the tests that need one skip.
 */
export function mountTmpfs(options: string): string {
  const dir = mkdtempSync('/var/tmp/svc-test-tmpfs-');
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs failed: ${r.error?.message ?? r.stderr.trim()}`);
  }
  return dir;
}

export function unmount(dir: string): void {
  spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Why this machine cannot mount a tmpfs (tried once), or undefined when it can. */
export function tmpfsUnavailable(): string | undefined {
  try {
    unmount(mountTmpfs('size=1m'));
    return undefined;
  } catch (err) {
    return `${(err as Error).message} (mounting needs root)`;
  }
}
