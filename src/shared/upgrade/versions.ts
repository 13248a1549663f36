import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, join, resolve } from 'node:path';

/*
 * The installed versions: $SVC_HOME/versions/<version>/ (each an unpacked release), `current`
 * (a symlink to the active one) and `previous` (the one before it, kept for --rollback).
 * bin/svc.js of every install follows `current`, so switching is one rename(2) of a new symlink
 * over `current`: a crash at any moment leaves either the old or the new link, never half.
 */

export interface Layout {
  dir: string;
  current: string;
  previous: string;
}

export function layout(home: string): Layout {
  const dir = join(home, 'versions');
  return { dir, current: join(dir, 'current'), previous: join(dir, 'previous') };
}

/** Where a link points, resolved; undefined when it does not exist or points nowhere. */
export function target(link: string): string | undefined {
  try {
    return realpathSync(link);
  } catch {
    return undefined;
  }
}

/** Points `link` at `to` atomically: a fresh symlink renamed over it, then the folder synced. */
export function pointAt(link: string, to: string): void {
  const tmp = `${link}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  const dir = resolve(link, '..');
  // inside versions/ the link is relative (the folder can move); an install elsewhere is absolute
  symlinkSync(resolve(to, '..') === dir ? basename(to) : resolve(to), tmp);
  renameSync(tmp, link);
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes `next` active and keeps `from` (what ran until now) as the previous version. */
export function activate(l: Layout, next: string, from: string): void {
  if (resolve(from) !== resolve(next)) pointAt(l.previous, from);
  pointAt(l.current, next);
}

/** Version folders neither link names (and leftovers of interrupted installs) are removed. */
export function pruneVersions(l: Layout): void {
  const keep = new Set(
    [target(l.current), target(l.previous)].filter((x): x is string => x !== undefined),
  );
  if (!existsSync(l.dir)) return;
  for (const name of readdirSync(l.dir)) {
    if (name === 'current' || name === 'previous') continue;
    const full = join(l.dir, name);
    if (!keep.has(target(full) ?? full)) rmSync(full, { recursive: true, force: true });
  }
}
