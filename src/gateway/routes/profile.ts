import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../shared/errors.js';
import { memoriesView, profileFile } from '../../shared/protocol/answers/profile.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';

/** How much of a profile file or the memory index an answer carries. */
export const PROFILE_CAP = 256 * 1024;
const MAX_LISTED = 1000;
const INDEX_FILE = 'MEMORY.md';

interface FileText {
  exists: boolean;
  content: string;
  size: number;
  updated_at: string | null;
  truncated: boolean;
}

/** A text file's first PROFILE_CAP bytes (cut on a character boundary); a missing file is empty. */
function readCapped(file: string): FileText {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { exists: false, content: '', size: 0, updated_at: null, truncated: false };
    throw new ApiError(
      'internal',
      `${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`,
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ApiError('internal', `${file} is not a regular file.`);
    const buf = Buffer.alloc(Math.min(st.size, PROFILE_CAP));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const truncated = st.size > n;
    let content = buf.subarray(0, n).toString('utf8');
    // A cut through a multi-byte character decodes as U+FFFD at the very end; drop it.
    if (truncated) content = content.replace(/\uFFFD+$/, '');
    return { exists: true, content, size: st.size, updated_at: st.mtime.toISOString(), truncated };
  } finally {
    closeSync(fd);
  }
}

function memoryFiles(
  dir: string,
): Array<{ name: string; file: string; size: number; updated_at: string }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const files: Array<{ name: string; file: string; size: number; updated_at: string }> = [];
  for (const file of names.filter((n) => n.endsWith('.md') && n !== INDEX_FILE).sort()) {
    try {
      const st = statSync(join(dir, file));
      if (st.isFile())
        files.push({
          name: file.slice(0, -3),
          file,
          size: st.size,
          updated_at: st.mtime.toISOString(),
        });
    } catch {
      // Removed between the listing and the stat.
    }
    if (files.length >= MAX_LISTED) break;
  }
  return files;
}

/** The user's profile files (soul.md, user.md) and the memory notes, read-only. */
export function profileRoutes(deps: Deps): Route[] {
  const profile = (name: 'soul' | 'user') =>
    route({
      method: 'GET',
      path: `/api/profile/${name}`,
      summary: `${name}.md: {name, path, exists, content, size, updated_at, truncated}; content holds at most ${PROFILE_CAP / 1024} KiB. A missing file answers exists false and empty content.`,
      response: profileFile,
      handler: () => {
        const path = deps.paths[name];
        return { body: { name, path, ...readCapped(path) } };
      },
    });
  return [
    profile('soul'),
    profile('user'),
    route({
      method: 'GET',
      path: '/api/memories',
      summary: `The memory index and notes: {index (MEMORY.md text, or ""), index_truncated, files: [{name, file, size, updated_at}]} (notes sorted by name, at most ${MAX_LISTED}).`,
      response: memoriesView,
      handler: () => {
        const index = readCapped(join(deps.paths.memoryDir, INDEX_FILE));
        return {
          body: {
            index: index.content,
            index_truncated: index.truncated,
            files: memoryFiles(deps.paths.memoryDir),
          },
        };
      },
    }),
  ];
}
