import { realpathSync, statSync } from 'node:fs';
import type { Paths } from '../../../../shared/paths.js';
import { displayPath } from '../files/file-path.js';
import type { ToolContext } from '../registry.js';
import { keyFolders } from '../files/private-key.js';

/** Caps shared by glob and grep. */
export const SEARCH_LIMITS = {
  maxFiles: 50_000,
  defaultResults: 200,
  maxResults: 2_000,
  maxLineChars: 500,
  maxFileBytes: 5 * 1024 * 1024,
  /** The walk stops itself after this and reports what it found... */
  timeMs: 20_000,
  /** ...and is killed this much later if a pathological pattern keeps it busy. */
  graceMs: 5_000,
};

/** svc's own files (keys, config, database, trash) and key folders (~/.ssh, ~/.gnupg): a search never reads or lists them. */
export function searchSkips(paths: Paths): string[] {
  const list = [
    paths.accessKey,
    paths.serveEnv,
    paths.config,
    paths.db,
    `${paths.db}-wal`,
    `${paths.db}-shm`,
    paths.runDir,
    paths.trashDir,
    ...keyFolders(),
  ];
  const out = new Set(list);
  for (const p of list) {
    try {
      out.add(realpathSync(p));
    } catch {
      // does not exist (yet)
    }
  }
  return [...out];
}

/** An error result when `root` is not a folder (or, for grep, a file) to search. */
export function checkRoot(ctx: ToolContext, root: string, allowFile: boolean): string | null {
  try {
    const st = statSync(root);
    if (st.isDirectory() || (allowFile && st.isFile())) return null;
    return `${displayPath(ctx, root)} is not a folder${allowFile ? ' or a file' : ''}.`;
  } catch {
    return `${displayPath(ctx, root)} does not exist.`;
  }
}

/**
 * Runs a search with the turn's signal plus a hard time limit. A turn interrupt is rethrown;
 * the time limit becomes an error result the model can act on.
 */
export async function withSearchDeadline<T>(
  ctx: ToolContext,
  what: string,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T | { output: string; isError: true }> {
  const timeout = AbortSignal.timeout(SEARCH_LIMITS.timeMs + SEARCH_LIMITS.graceMs);
  try {
    return await run(AbortSignal.any([ctx.signal, timeout]));
  } catch (err) {
    if (ctx.signal.aborted || !timeout.aborted) throw err;
    return {
      output: `${what} took too long and was stopped (the pattern may be too expensive); narrow the path or simplify the pattern.`,
      isError: true,
    };
  }
}

export function stopNote(stopped: 'files' | 'time' | null, scanned: number): string[] {
  if (stopped === 'files')
    return [
      `[stopped after scanning ${scanned} files: results are incomplete; search a narrower path]`,
    ];
  if (stopped === 'time')
    return [
      `[stopped after ${SEARCH_LIMITS.timeMs / 1000} s (${scanned} files scanned): results are incomplete; search a narrower path]`,
    ];
  return [];
}
