import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What of $SVC_HOME a backup holds: everything a person made or set, nothing svc rebuilds.
 * svc.db is taken through SQLite's online backup, never copied as a live file.
 */
const LEFT_OUT = new Set([
  'svc.db',
  'svc.db-wal',
  'svc.db-shm',
  'svc.db-journal',
  'logs', // svc's own diagnostics; large and rebuilt
  'run', // sockets and a pid file of the running server
  'versions', // installed releases; a restore runs the svc it is restored with
  'backups', // the default place of backups: never a backup of backups
  'browser/profile', // a running Chromium's profile cannot be copied consistently
  'uploads/.tmp', // uploads still arriving
]);

export interface Planned {
  /** Relative to the home, forward slashes. */
  rel: string;
  size: number;
}

/** Walks the home in a stable order; answers the files to take and what was left out, with why. */
export function planContents(
  home: string,
  opts: { uploads: boolean },
): { files: Planned[]; skipped: Array<{ path: string; why: string }> } {
  const files: Planned[] = [];
  const skipped: Array<{ path: string; why: string }> = [];
  const visit = (rel: string) => {
    if (LEFT_OUT.has(rel) || (!opts.uploads && rel === 'uploads')) return;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(join(home, rel));
    } catch {
      return; // gone since the folder was read
    }
    if (st.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(join(home, rel)).sort();
      } catch (err) {
        skipped.push({ path: rel, why: `unreadable folder: ${(err as Error).message}` });
        return;
      }
      for (const name of names) visit(rel === '' ? name : `${rel}/${name}`);
    } else if (st.isFile()) {
      // Atomic writers leave `.name.pid.tmp` only while writing; the renamed file is the real one.
      if (/(^|\/)\.[^/]+\.\d+\.tmp$/.test(rel)) return;
      files.push({ rel, size: st.size });
    } else {
      skipped.push({ path: rel, why: st.isSymbolicLink() ? 'a symbolic link' : 'not a file' });
    }
  };
  visit('');
  return { files, skipped };
}
