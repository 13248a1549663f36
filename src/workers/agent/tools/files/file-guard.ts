import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { getFileRead, recordFileRead } from '../../../../shared/store/file-reads.js';
import { sha256Of, trashFileCopy } from '../../../../shared/store/file-trash.js';
import type { ToolContext } from '../registry.js';
import { loadTextFile, type TextFile } from './text-file.js';

export type WriteCheck = { ok: true; existing: TextFile | null } | { ok: false; message: string };

/**
 * Read-before-write: a file that exists may only be replaced when this session has read it and
 * it is byte-for-byte what was read, so the agent never clobbers content it has not seen.
 */
export function checkWritable(ctx: ToolContext, abs: string, shown: string): WriteCheck {
  const loaded = loadTextFile(abs, shown);
  if (!loaded.ok)
    return loaded.missing ? { ok: true, existing: null } : { ok: false, message: loaded.message };
  const seen = getFileRead(ctx.db, ctx.sessionId, abs);
  if (!seen)
    return {
      ok: false,
      message: `${shown} already exists and has not been read in this session. Read it with read_file first, then write.`,
    };
  if (seen.sha256 !== loaded.file.sha256) {
    return {
      ok: false,
      message: `${shown} has changed since you last read it (${seen.read_at}). Read it again with read_file before writing, so those changes are not lost.`,
    };
  }
  return { ok: true, existing: loaded.file };
}

export interface Committed {
  size: number;
  unchanged: boolean;
  /** The trash item holding the previous content, when there was one. */
  trashId: string | null;
}

/**
 * Writes `content` to `abs`: the previous content goes to the trash first, then a temp file
 * beside the target is renamed over it (a reader never sees half a file; a symlink keeps
 * pointing where it did because the real target is replaced). The session's read record is
 * updated, since the agent knows what it just wrote.
 */
export function commitWrite(
  ctx: ToolContext,
  abs: string,
  existing: TextFile | null,
  content: string,
  by: string,
): Committed {
  const buf = Buffer.from(content, 'utf8');
  const sha = sha256Of(buf);
  let trashId: string | null = null;
  let target = abs;
  if (existing) {
    target = realpathSync(abs);
    if (existing.sha256 === sha) {
      remember(ctx, abs, sha);
      return { size: buf.length, unchanged: true, trashId: null };
    }
    trashId = trashFileCopy(ctx.db, ctx.paths, {
      path: target,
      by,
      sessionId: ctx.sessionId,
      sha256: existing.sha256,
      replacedBySha256: sha,
    }).id;
  } else {
    mkdirSync(dirname(abs), { recursive: true });
  }
  const tmp = join(
    dirname(target),
    `.${basename(target)}.${randomBytes(4).toString('hex')}.svc-tmp`,
  );
  try {
    const fd = openSync(tmp, 'wx', existing ? existing.mode : 0o666);
    try {
      writeSync(fd, buf);
    } finally {
      closeSync(fd);
    }
    if (existing) chmodSync(tmp, existing.mode); // the umask must not narrow an existing file's mode
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  remember(ctx, abs, sha);
  return { size: buf.length, unchanged: false, trashId };
}

function remember(ctx: ToolContext, abs: string, sha256: string): void {
  const st = statSync(abs);
  recordFileRead(ctx.db, {
    session_id: ctx.sessionId,
    path: abs,
    sha256,
    size: st.size,
    mtime_ms: st.mtimeMs,
  });
}
