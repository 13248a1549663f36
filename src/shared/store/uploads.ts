import { realpathSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import type { z } from 'zod';
import type { Paths } from '../paths.js';
import type { uploadRowSchema } from '../protocol/answers/uploads.js';
import type { Db } from './db.js';
import { stmt } from './util.js';

export type Upload = z.infer<typeof uploadRowSchema>;

const COLS = 'name, original_name, mime, size, sha256, created_at';

export function insertUpload(db: Db, u: Upload): void {
  stmt(
    db,
    `INSERT INTO uploads (${COLS}) VALUES (@name, @original_name, @mime, @size, @sha256, @created_at)`,
  ).run(u);
}

export function getUpload(db: Db, name: string): Upload | undefined {
  return stmt<[string], Upload>(db, `SELECT ${COLS} FROM uploads WHERE name = ?`).get(name);
}

/**
 * A name that can only denote a file directly inside the uploads folder: no separators, no NUL
 * or control characters, no leading dot (so never `.`, `..` or `.tmp`), at most 255 bytes.
 */
export function isSafeUploadName(name: string): boolean {
  return (
    name.length > 0 &&
    Buffer.byteLength(name) <= 255 &&
    !name.startsWith('.') &&
    !/[/\\\x00-\x1f\x7f]/.test(name)
  );
}

/**
 * The file behind an upload name, for serving it or handing it to the agent: only a name that
 * is on record and whose real path (symlinks resolved) lies inside the uploads folder.
 */
export function resolveUpload(
  db: Db,
  paths: Pick<Paths, 'uploadsDir'>,
  name: string,
): { path: string; mime: string; size: number; original_name: string } | undefined {
  if (!isSafeUploadName(name)) return undefined;
  const row = getUpload(db, name);
  if (!row) return undefined;
  try {
    const dir = realpathSync(paths.uploadsDir);
    const file = realpathSync(resolve(dir, name));
    if (!file.startsWith(dir + sep) || !statSync(file).isFile()) return undefined;
    return { path: file, mime: row.mime, size: row.size, original_name: row.original_name };
  } catch {
    return undefined; // the file is gone (or the folder never existed)
  }
}

/** An upload attached to a turn, as the agent is handed it and the user message stores it. */
export interface ResolvedAttachment {
  name: string;
  original_name: string;
  mime: string;
  size: number;
  path: string;
}

/**
 * The uploads a turn attaches, resolved once where the turn comes in (the agent takes them as
 * they are); `missing` names the first that is not an upload on record.
 */
export function resolveAttachments(
  db: Db,
  paths: Pick<Paths, 'uploadsDir'>,
  names: readonly string[],
): { attachments: ResolvedAttachment[] } | { missing: string } {
  const attachments: ResolvedAttachment[] = [];
  for (const name of names) {
    const u = resolveUpload(db, paths, name);
    if (!u) return { missing: name };
    attachments.push({
      name,
      original_name: u.original_name,
      mime: u.mime,
      size: u.size,
      path: u.path,
    });
  }
  return { attachments };
}
