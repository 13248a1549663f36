import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import type { Paths } from '../paths.js';
import type { Db } from './db.js';
import type { Page } from './sessions.js';
import { decodeCursor, encodeCursor, isoNow, newId, stmt } from './util.js';

/**
 * The trash: one table for every kind of deleted thing (sessions now; files, skills, recordings,
 * tasks later). A row keeps what restores the thing (`payload`, JSON) and where it came from
 * (`original`: a session id, a path, a skill name); a kind with bytes on disk keeps them in
 * $SVC_HOME/trash/<id>/. Each kind supplies its own restore (see TrashKind).
 */
export interface TrashItem {
  id: string;
  kind: string;
  /** What a person recognises: a session title, a file name. */
  name: string;
  /** Where it came from: a session id, an absolute path, a skill name. */
  original: string;
  size_bytes: number;
  deleted_at: string;
  has_blob: boolean;
}

/** The stored row: the item with its payload, and has_blob as SQLite's 0/1. */
type TrashRow = Omit<TrashItem, 'has_blob'> & { payload: string; blob: number };

export const TRASH_ID = /^t_[a-z0-9]{21}$/;
const COLS = 'id, kind, name, original, size_bytes, deleted_at, blob';

/** Picks the item's fields, so a row read with its payload never carries it into a view or event. */
function toItem(r: Omit<TrashRow, 'payload'>): TrashItem {
  return {
    id: r.id,
    kind: r.kind,
    name: r.name,
    original: r.original,
    size_bytes: r.size_bytes,
    deleted_at: r.deleted_at,
    has_blob: r.blob === 1,
  };
}

/** Where a trash item's bytes live (whether or not it has any). */
export function trashBlobDir(paths: Paths, id: string): string {
  return join(paths.trashDir, id);
}

export interface PutInTrash {
  kind: string;
  name: string;
  original: string;
  /** Everything needed to restore it (JSON-serialisable). */
  payload: unknown;
  /** A file or folder to move into $SVC_HOME/trash/<id>/<its basename>. */
  blobFrom?: string;
  /** Bytes the item holds elsewhere by reference (a trashed session's transcript stays in its table). */
  heldBytes?: number;
}

/**
 * Adds an item. Call it inside the same db.transaction that removes the thing from its place, so
 * either both happen or neither. A blob is moved first and moved back if the insert fails.
 */
export function putInTrash(db: Db, paths: Paths, input: PutInTrash): TrashItem {
  const id = newId('t');
  const payload = JSON.stringify(input.payload ?? null);
  let size = Buffer.byteLength(payload) + (input.heldBytes ?? 0);
  let blobPath: string | undefined;
  if (input.blobFrom !== undefined) {
    mkdirSync(trashBlobDir(paths, id), { recursive: true, mode: 0o700 });
    blobPath = join(trashBlobDir(paths, id), basename(input.blobFrom));
    moveBlob(input.blobFrom, blobPath);
    size += diskBytes(blobPath);
  }
  const row: TrashRow = {
    id,
    kind: input.kind,
    name: input.name,
    original: input.original,
    size_bytes: size,
    deleted_at: isoNow(),
    payload,
    blob: blobPath ? 1 : 0,
  };
  try {
    stmt(
      db,
      'INSERT INTO trash (id, kind, name, original, size_bytes, deleted_at, payload, blob) VALUES (@id, @kind, @name, @original, @size_bytes, @deleted_at, @payload, @blob)',
    ).run(row);
  } catch (err) {
    if (blobPath) {
      moveBlob(blobPath, input.blobFrom!);
      rmSync(trashBlobDir(paths, id), { recursive: true, force: true });
    }
    throw err;
  }
  return toItem(row);
}

/** Newest first, every item (for tests and small tools; the API pages with listTrashPage). */
export function listTrash(db: Db): TrashItem[] {
  return stmt<[], Omit<TrashRow, 'payload'>>(
    db,
    `SELECT ${COLS} FROM trash ORDER BY deleted_at DESC, id DESC`,
  )
    .all()
    .map(toItem);
}

export interface TrashCursor {
  deleted_at: string;
  id: string;
}

const trashCursorSchema = z.tuple([z.iso.datetime(), z.string().regex(TRASH_ID)]);

/** Decodes a `next_cursor` from listTrashPage; undefined when it is not one. */
export function parseTrashCursor(cursor: string): TrashCursor | undefined {
  const r = trashCursorSchema.safeParse(decodeCursor(cursor));
  return r.success ? { deleted_at: r.data[0], id: r.data[1] } : undefined;
}

/** Newest first, `limit` at a time, without payloads; keyset pages from the (deleted_at, id) index. */
export function listTrashPage(
  db: Db,
  opts: { limit: number; after?: TrashCursor },
): Page<TrashItem> {
  const rows = opts.after
    ? stmt<[string, string, number], Omit<TrashRow, 'payload'>>(
        db,
        `SELECT ${COLS} FROM trash WHERE (deleted_at, id) < (?, ?) ORDER BY deleted_at DESC, id DESC LIMIT ?`,
      ).all(opts.after.deleted_at, opts.after.id, opts.limit + 1)
    : stmt<[number], Omit<TrashRow, 'payload'>>(
        db,
        `SELECT ${COLS} FROM trash ORDER BY deleted_at DESC, id DESC LIMIT ?`,
      ).all(opts.limit + 1);
  const more = rows.length > opts.limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  return {
    items: rows.map(toItem),
    next_cursor: more && last ? encodeCursor([last.deleted_at, last.id]) : null,
  };
}

/** How many items and bytes the trash holds (from the covering index, not the rows). */
export function trashTotals(db: Db): { count: number; bytes: number } {
  const r = stmt<[], { count: number; bytes: number }>(
    db,
    'SELECT count(*) AS count, coalesce(sum(size_bytes), 0) AS bytes FROM trash INDEXED BY trash_by_age_size',
  ).get()!;
  return r;
}

export function getTrashItem(db: Db, id: string): TrashItem | undefined {
  const r = stmt<[string], Omit<TrashRow, 'payload'>>(
    db,
    `SELECT ${COLS} FROM trash WHERE id = ?`,
  ).get(id);
  return r && toItem(r);
}

export interface RestoreOptions {
  /** Restore beside whatever now holds the original place, under a new id. */
  as_new?: boolean;
  /** Restore under this name (implies as_new for kinds whose name is their place). */
  new_name?: string;
}

export interface RestoreContext {
  db: Db;
  paths: Paths;
  item: TrashItem;
  /** The payload given to putInTrash, parsed from JSON (validate it). */
  payload: unknown;
  /** The item's blob folder, or null when it has none. */
  blobDir: string | null;
  options: RestoreOptions;
}

/** What a kind does on restore; `restored_to` names the place it went back to (an id, a path). */
export interface TrashKind {
  /** Runs inside a transaction; throw trashConflict() when the original place is taken. */
  restore(ctx: RestoreContext): { restored_to: string } & Record<string, unknown>;
}

export type TrashKinds = Readonly<Record<string, TrashKind>>;

/** The 409 a kind throws when its original place is taken and no option says where else to go. */
export function trashConflict(message: string, details: Record<string, unknown>): StoreError {
  return new StoreError('conflict', message, {
    reason: 'original_taken',
    options: ['as_new', 'new_name'],
    ...details,
  });
}

/** Puts an item back through its kind and removes it from the trash, in one transaction. */
export function restoreFromTrash(
  db: Db,
  paths: Paths,
  kinds: TrashKinds,
  id: string,
  options: RestoreOptions,
): { item: TrashItem; result: { restored_to: string } & Record<string, unknown> } {
  const result = db
    .transaction(() => {
      const row = stmt<[string], TrashRow>(db, 'SELECT * FROM trash WHERE id = ?').get(id);
      if (!row) throw notInTrash(id);
      const kind = kinds[row.kind];
      if (!kind)
        throw new StoreError(
          'conflict',
          `This svc does not know how to restore a trash item of kind "${row.kind}"; upgrade svc or delete the item.`,
          { reason: 'unknown_kind', kind: row.kind },
        );
      const item = toItem(row);
      const r = kind.restore({
        db,
        paths,
        item,
        payload: JSON.parse(row.payload) as unknown,
        blobDir: row.blob === 1 ? trashBlobDir(paths, id) : null,
        options,
      });
      stmt(db, 'DELETE FROM trash WHERE id = ?').run(id);
      return { item, result: r };
    })
    .immediate();
  if (result.item.has_blob) rmSync(trashBlobDir(paths, id), { recursive: true, force: true });
  return result;
}

export function notInTrash(id: string): StoreError {
  return new StoreError(
    'not_found',
    `There is no trash item ${JSON.stringify(id)}; it may have been restored, deleted or expired. GET /api/trash lists the trash.`,
  );
}

/** Deletes one item for good; false when there was none. */
export function deleteFromTrash(db: Db, paths: Paths, id: string): boolean {
  const gone = stmt(db, 'DELETE FROM trash WHERE id = ?').run(id).changes > 0;
  if (gone) rmSync(trashBlobDir(paths, id), { recursive: true, force: true });
  return gone;
}

/** Deletes everything; answers how many items went. */
export function emptyTrash(db: Db, paths: Paths): number {
  const ids = db
    .transaction(() => {
      const withBlobs = stmt<[], { id: string }>(db, 'SELECT id FROM trash WHERE blob = 1')
        .all()
        .map((r) => r.id);
      return { withBlobs, n: stmt(db, 'DELETE FROM trash').run().changes };
    })
    .immediate();
  for (const id of ids.withBlobs) rmSync(trashBlobDir(paths, id), { recursive: true, force: true });
  return ids.n;
}

/** When an item leaves the trash by itself. */
export function trashExpiresAt(item: Pick<TrashItem, 'deleted_at'>, retentionDays: number): string {
  return new Date(Date.parse(item.deleted_at) + retentionDays * 86_400_000).toISOString();
}

/** An item as the API and events show it. */
export function trashView(
  item: TrashItem,
  retentionDays: number,
): Omit<TrashItem, 'has_blob'> & { expires_at: string } {
  const { has_blob: _, ...rest } = item;
  return { ...rest, expires_at: trashExpiresAt(item, retentionDays) };
}

/**
 * Retention: deletes items older than `retention_days`, then the oldest until the total fits in
 * `max_bytes`, then blob folders that no row names (left by a crash; only when over an hour old,
 * so an insert in flight elsewhere is never raced). Run at start and daily.
 */
export function enforceTrashRetention(
  db: Db,
  paths: Paths,
  limits: { retention_days: number; max_bytes: number },
  now: Date = new Date(),
): { removed: TrashItem[]; freed_bytes: number } {
  const cutoff = new Date(now.getTime() - limits.retention_days * 86_400_000).toISOString();
  const removed: TrashItem[] = [];
  // Oldest first, a bounded batch per transaction, read from the (deleted_at, id, size) index:
  // a trash of 50,000 items is never read whole, and other writers get in between batches.
  const oldest = stmt<[number], Omit<TrashRow, 'payload'>>(
    db,
    `SELECT ${COLS} FROM trash INDEXED BY trash_by_age_size ORDER BY deleted_at ASC, id ASC LIMIT ?`,
  );
  const del = stmt(db, 'DELETE FROM trash WHERE id = ?');
  for (;;) {
    const batch = db
      .transaction(() => {
        let total = trashTotals(db).bytes;
        const out: TrashItem[] = [];
        for (const item of oldest.all(RETENTION_BATCH).map(toItem)) {
          if (item.deleted_at >= cutoff && total <= limits.max_bytes) break;
          del.run(item.id);
          out.push(item);
          total -= item.size_bytes;
        }
        return out;
      })
      .immediate();
    for (const item of batch)
      if (item.has_blob) rmSync(trashBlobDir(paths, item.id), { recursive: true, force: true });
    removed.push(...batch);
    if (batch.length < RETENTION_BATCH) break;
  }
  removeOrphanBlobs(db, paths, now);
  return { removed, freed_bytes: removed.reduce((s, i) => s + i.size_bytes, 0) };
}

/** Items retention looks at (and may delete) per transaction. */
const RETENTION_BATCH = 500;

function removeOrphanBlobs(db: Db, paths: Paths, now: Date): void {
  if (!existsSync(paths.trashDir)) return;
  const has = stmt<[string], { id: string }>(db, 'SELECT id FROM trash WHERE id = ?');
  for (const name of readdirSync(paths.trashDir)) {
    if (!TRASH_ID.test(name) || has.get(name)) continue;
    const dir = join(paths.trashDir, name);
    if (now.getTime() - statSync(dir).mtimeMs > 3_600_000)
      rmSync(dir, { recursive: true, force: true });
  }
}

/** Moves a file or folder, across file systems too (copy, then remove). */
export function moveBlob(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    cpSync(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
    rmSync(from, { recursive: true, force: true });
  }
}

/** Bytes on disk under a path (symlinks counted as themselves, not followed). */
function diskBytes(p: string): number {
  const st = lstatSync(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const name of readdirSync(p)) n += diskBytes(join(p, name));
  return n;
}
