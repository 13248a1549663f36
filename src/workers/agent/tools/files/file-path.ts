import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Paths } from '../../../../shared/paths.js';
import type { ToolContext } from '../registry.js';

/** Where relative paths start: the session's working folder, else the user's home. */
export function baseDir(ctx: Pick<ToolContext, 'workingDir'>): string {
  return ctx.workingDir ?? homedir();
}

/** An absolute, normalised path from what the model wrote (`~` and `~/…` mean the home folder). */
export function resolveToolPath(ctx: Pick<ToolContext, 'workingDir'>, p: string): string {
  if (p === '~') return homedir();
  if (p.startsWith('~/')) return join(homedir(), p.slice(2));
  return isAbsolute(p) ? resolve(p) : resolve(baseDir(ctx), p);
}

/** How a path is shown to the model: relative to the base folder when inside it, else absolute. */
export function displayPath(ctx: Pick<ToolContext, 'workingDir'>, abs: string): string {
  const rel = relative(baseDir(ctx), abs);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

/** The real path of `p`, resolving symlinks in the part that exists (the rest may not exist yet). */
export function realish(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : join(realish(parent), basename(p));
  }
}

function inside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * svc's own secrets and state are off limits to the file tools whatever the permission rules say:
 * reading the access key or config would leak secrets to the provider, and writing the database,
 * the trash or the run folder would corrupt svc. Returns the refusal, or null when allowed.
 */
export function svcPrivatePath(paths: Paths, abs: string, access: 'read' | 'write'): string | null {
  const real = realish(abs);
  const secret = [
    paths.accessKey,
    paths.serveEnv,
    paths.config,
    paths.db,
    `${paths.db}-wal`,
    `${paths.db}-shm`,
    paths.runDir,
    paths.trashDir,
  ];
  const rules = [paths.permissions]; // readable, so the agent can explain a refusal; never writable
  const stateOnly = [paths.logsDir, paths.uploadsDir];
  const hits = (list: string[]) => list.some((p) => inside(real, realish(p)));
  if (hits(secret) || (access === 'write' && (hits(stateOnly) || hits(rules)))) {
    return `${abs} belongs to svc itself (its keys, configuration, database or internal folders); the file tools do not ${access} it.`;
  }
  return null;
}
