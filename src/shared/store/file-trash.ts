import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, extname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import type { Paths } from '../paths.js';
import type { Db } from './db.js';
import { forgetFileReads } from './file-reads.js';
import { putInTrash, type TrashItem, type TrashKind, trashConflict } from './trash.js';

/** Files bigger than this are not hashed when trashed or compared on restore (too slow to do in one go). */
const HASH_LIMIT = 64 * 1024 * 1024;

/** What a file trash item keeps besides its bytes (in the blob folder, under the file's base name). */
const payloadSchema = z.object({
  path: z.string().refine(isAbsolute, 'path must be absolute'),
  /** Of the trashed content; null when too big to hash. */
  sha256: z.string().nullable(),
  size: z.number().int().nonnegative(),
  mode: z.number().int().nonnegative(),
  reason: z.enum(['overwrite', 'delete', 'restore']),
  /** Which tool (or route) put it here. */
  by: z.string(),
  session_id: z.string().nullable(),
  /** For an overwrite: the content that replaced it, so restoring over exactly that is an undo, not a conflict. */
  replaced_by_sha256: z.string().nullable(),
});
export type FileTrashPayload = z.infer<typeof payloadSchema>;

export function sha256Of(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The sha256 of a regular file, or null when it is too big to hash here. */
function hashFile(path: string, size: number): string | null {
  return size > HASH_LIMIT ? null : sha256Of(readFileSync(path));
}

interface TrashFileInput {
  path: string;
  by: string;
  sessionId: string | null;
}

/**
 * Puts a copy of a file's current content in the trash before it is overwritten. `sha256` is
 * the content being trashed (the caller has it); `replacedBySha256` is what will be written.
 */
export function trashFileCopy(
  db: Db,
  paths: Paths,
  input: TrashFileInput & {
    sha256: string;
    replacedBySha256: string | null;
    reason?: 'overwrite' | 'restore';
  },
): TrashItem {
  const st = statSync(input.path);
  // Stage the copy inside the trash folder so putInTrash's move is a rename on the same disk.
  const stage = join(paths.trashDir, `.incoming-${randomBytes(6).toString('hex')}`);
  mkdirSync(stage, { recursive: true, mode: 0o700 });
  try {
    const copy = join(stage, basename(input.path));
    copyFileSync(input.path, copy);
    const payload: FileTrashPayload = {
      path: input.path,
      sha256: input.sha256,
      size: st.size,
      mode: st.mode & 0o7777,
      reason: input.reason ?? 'overwrite',
      by: input.by,
      session_id: input.sessionId,
      replaced_by_sha256: input.replacedBySha256,
    };
    return putInTrash(db, paths, {
      kind: 'file',
      name: basename(input.path),
      original: input.path,
      payload,
      blobFrom: copy,
    });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Moves a regular file into the trash (a delete) and forgets every session's read of it. */
export function trashFileMove(db: Db, paths: Paths, input: TrashFileInput): TrashItem {
  const st = lstatSync(input.path);
  if (!st.isFile()) throw new Error(`${input.path} is not a regular file`);
  const payload: FileTrashPayload = {
    path: input.path,
    sha256: hashFile(input.path, st.size),
    size: st.size,
    mode: st.mode & 0o7777,
    reason: 'delete',
    by: input.by,
    session_id: input.sessionId,
    replaced_by_sha256: null,
  };
  return db
    .transaction(() => {
      const item = putInTrash(db, paths, {
        kind: 'file',
        name: basename(input.path),
        original: input.path,
        payload,
        blobFrom: input.path,
      });
      forgetFileReads(db, input.path);
      return item;
    })
    .immediate();
}

type Occupant = { kind: 'absent' } | { kind: 'file'; sha256: string | null } | { kind: 'other' };

function occupant(path: string): Occupant {
  let st;
  try {
    st = statSync(path);
  } catch {
    return existsSync(path) ? { kind: 'other' } : { kind: 'absent' };
  }
  return st.isFile() ? { kind: 'file', sha256: hashFile(path, st.size) } : { kind: 'other' };
}

/** `<stem>.restored-<stamp><ext>` beside the original, with a counter if even that is taken. */
function freeName(original: string): string {
  const ext = extname(original);
  const stem = original.slice(0, original.length - ext.length);
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\..*$/, '')
    .replace('T', '-');
  for (let i = 0; ; i++) {
    const candidate = `${stem}.restored-${stamp}${i ? `-${i}` : ''}${ext}`;
    if (!existsSync(candidate)) return candidate;
  }
}

function plainName(name: string): string {
  if (name === '.' || name === '..' || /[/\\\x00]/.test(name)) {
    throw new StoreError(
      'invalid',
      'new_name for a file must be a plain file name (no folders); it is restored in the original folder.',
    );
  }
  return name;
}

/** Copies the trashed bytes to `target` (temp file + rename, so a reader never sees half of it). */
function writeBack(blob: string, target: string, mode: number): void {
  mkdirSync(dirname(target), { recursive: true });
  const tmp = join(
    dirname(target),
    `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.restore`,
  );
  try {
    copyFileSync(blob, tmp);
    chmodSync(tmp, mode);
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Restore for kind `file`: writes the old content back to its path. When the path now holds
 * something else it is a 409, except when it holds exactly what the overwrite wrote (an undo:
 * that content goes to the trash first) or the same content already (nothing to do).
 * as_new restores beside it as `<name>.restored-<stamp>`; new_name under that name in the same folder.
 */
export const fileTrashKind: TrashKind = {
  restore({ db, paths, payload, blobDir, options }) {
    const p = payloadSchema.parse(payload);
    if (!blobDir)
      throw new StoreError(
        'conflict',
        'This file trash item has no content on disk; it cannot be restored.',
        { reason: 'no_blob' },
      );
    const blob = join(blobDir, basename(p.path));
    const asNew = options.as_new === true || options.new_name !== undefined;
    const target =
      options.new_name !== undefined
        ? join(dirname(p.path), plainName(options.new_name))
        : asNew
          ? freeName(p.path)
          : p.path;
    const now = occupant(target);
    let backedUp: TrashItem | undefined;
    if (now.kind === 'other') {
      throw trashConflict(
        `${target} is now something other than a file; restore it elsewhere with {"as_new": true} or {"new_name": "..."}.`,
        { path: target },
      );
    }
    if (now.kind === 'file') {
      const sha = now.sha256;
      if (sha !== null && sha === p.sha256) return { restored_to: target, unchanged: true };
      const isUndo = !asNew && sha !== null && sha === p.replaced_by_sha256;
      if (!isUndo || sha === null) {
        throw trashConflict(
          `${target} has changed since this version was trashed; restore it beside with {"as_new": true} or {"new_name": "..."}.`,
          { path: target },
        );
      }
      backedUp = trashFileCopy(db, paths, {
        path: target,
        by: 'restore',
        sessionId: null,
        sha256: sha,
        replacedBySha256: p.sha256,
        reason: 'restore',
      });
    }
    writeBack(blob, target, p.mode);
    return { restored_to: target, ...(backedUp ? { backed_up_as: backedUp.id } : {}) };
  },
};
