import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Full outputs of tool calls live in $SVC_HOME/tool-output/<session id>/: they go to the trash
 * with their session and are gone when it is emptied, and all of them together stay under a cap.
 */
export function toolOutputDir(home: string, sessionId?: string): string {
  const root = join(home, 'tool-output');
  return sessionId === undefined ? root : join(root, safeName(sessionId));
}

export function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 120) || 'output';
}

/** Removes the oldest output files under `root` (tool-output; by last write) until all of them fit in `capBytes`; `keep` is never removed. */
export function enforceToolOutputCap(
  root: string,
  capBytes: number,
  keep?: string,
): { removed: number; freed_bytes: number } {
  if (!existsSync(root)) return { removed: 0, freed_bytes: 0 };
  const files: Array<{ path: string; size: number; mtime: number }> = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      try {
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) {
          const st = statSync(p);
          files.push({ path: p, size: st.size, mtime: st.mtimeMs });
        }
      } catch {
        // removed meanwhile
      }
    }
  };
  walk(root);
  let total = files.reduce((s, f) => s + f.size, 0);
  let removed = 0;
  let freed = 0;
  for (const f of files.sort((a, b) => a.mtime - b.mtime)) {
    if (total <= capBytes) break;
    if (f.path === keep) continue;
    rmSync(f.path, { force: true });
    total -= f.size;
    freed += f.size;
    removed++;
  }
  return { removed, freed_bytes: freed };
}
