import { createRequire } from 'node:module';
import { z } from 'zod';
import type { Db } from './db.js';
import { stmt } from './util.js';

/**
 * The semantic side of search: one vector per message (user and assistant words), in a sqlite-vec
 * `vec0` table in svc.db, keyed by the message's rowid. The extension is loaded into a connection
 * only when an embeddings model is configured, so a home without one never loads it; no trigger
 * touches the table (a connection without the extension could not write it): a deleted message's
 * vector stays until the fill sweeps it, and search joins every neighbour back to a live message.
 */

const require = createRequire(import.meta.url);
const loaded = new WeakSet<Db>();

/** Loads sqlite-vec into this connection (once). Throws when the platform has no build of it. */
export function loadVectors(db: Db): void {
  if (loaded.has(db)) return;
  const vec = require('sqlite-vec') as { getLoadablePath: () => string };
  db.loadExtension(vec.getLoadablePath());
  loaded.add(db);
}

const markSchema = z.object({
  /** Which model made the vectors (provider, model, address): another one starts over. */
  model: z.string(),
  dims: z.number().int().positive().nullable(),
  /** The newest message rowid embedded (or looked at and skipped). */
  mark: z.number().int().min(0),
});
export type EmbedMark = z.infer<typeof markSchema>;

const KEY = 'search_embed';

export function readEmbedMark(db: Db): EmbedMark | undefined {
  const raw = stmt<[], { value: string }>(db, `SELECT value FROM meta WHERE key = '${KEY}'`).get()
    ?.value;
  if (raw === undefined) return undefined;
  const r = markSchema.safeParse(JSON.parse(raw));
  return r.success ? r.data : undefined;
}

function writeEmbedMark(db: Db, m: EmbedMark): void {
  stmt(
    db,
    `INSERT INTO meta (key, value, updated_at) VALUES ('${KEY}', ?, ?)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ).run(JSON.stringify(m), new Date().toISOString());
}

function hasTable(db: Db): boolean {
  return (
    stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'search_vec'").get() !==
    undefined
  );
}

/**
 * The mark for this model; vectors of another model (or none yet) are dropped and the fill
 * starts from the first message. Needs the extension loaded.
 */
export function embedMarkFor(db: Db, model: string): EmbedMark {
  const m = readEmbedMark(db);
  if (m && m.model === model) return m;
  return db
    .transaction(() => {
      if (hasTable(db)) db.exec('DROP TABLE search_vec');
      const fresh = { model, dims: null, mark: 0 };
      writeEmbedMark(db, fresh);
      return fresh;
    })
    .immediate();
}

export interface EmbedCandidate {
  rowid: number;
  text: string;
}

/** The next messages above the mark with words to embed, and the rowid the batch reaches. */
export function nextToEmbed(
  db: Db,
  mark: number,
  batch: number,
  maxChars: number,
): { items: EmbedCandidate[]; upto: number | null } {
  const rows = stmt<[number, number], { rowid: number; text: string | null }>(
    db,
    `SELECT rowid, CASE WHEN role IN ('user', 'assistant')
       THEN svc_search_text('message', role, content) END AS text
     FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  ).all(mark, batch);
  const items = rows
    .filter((r) => r.text !== null && r.text.trim() !== '')
    .map((r) => ({ rowid: r.rowid, text: r.text!.slice(0, maxChars) }));
  return { items, upto: rows.at(-1)?.rowid ?? null };
}

/**
 * Stores one batch's vectors and moves the mark to `upto`, in the caller's transaction (with its
 * usage record). The first batch fixes the table's dimensions; a model answering another size
 * later is an error the caller reports.
 */
export function storeVectors(
  db: Db,
  model: string,
  vectors: Array<{ rowid: number; vector: Float32Array }>,
  upto: number,
): void {
  const m = readEmbedMark(db);
  if (!m || m.model !== model) throw new Error('the embeddings model changed during a batch');
  let dims = m.dims;
  const size = vectors[0]?.vector.length;
  if (size !== undefined) {
    if (dims === null || !hasTable(db)) {
      dims = size;
      db.exec(
        `CREATE VIRTUAL TABLE IF NOT EXISTS search_vec USING vec0(embedding float[${dims}] distance_metric=cosine)`,
      );
    }
    for (const v of vectors) {
      if (v.vector.length !== dims)
        throw new Error(`the embeddings model answered ${v.vector.length} dimensions, not ${dims}`);
      stmt(db, 'DELETE FROM search_vec WHERE rowid = ?').run(BigInt(v.rowid));
      stmt(db, 'INSERT INTO search_vec (rowid, embedding) VALUES (?, ?)').run(
        BigInt(v.rowid),
        v.vector,
      );
    }
  }
  writeEmbedMark(db, { model, dims, mark: upto });
}

/** How many messages wait to be embedded: a cheap check at the end of a b-tree. */
export function messagesAbove(db: Db, mark: number): boolean {
  return stmt(db, 'SELECT 1 FROM messages WHERE rowid > ? LIMIT 1').get(mark) !== undefined;
}

/**
 * The `k` nearest messages to a vector (their ids and cosine similarity, best first), among
 * those embedded by `model`; none when nothing is embedded yet. Needs the extension loaded.
 */
export function nearestMessages(
  db: Db,
  model: string,
  vector: Float32Array,
  k: number,
): Array<{ id: string; similarity: number }> {
  const m = readEmbedMark(db);
  if (!m || m.model !== model || m.dims === null || !hasTable(db)) return [];
  if (vector.length !== m.dims) return [];
  return stmt<[Float32Array, number], { id: string; distance: number }>(
    db,
    `SELECT m.id, v.distance FROM (SELECT rowid, distance FROM search_vec
       WHERE embedding MATCH ? AND k = ?) v JOIN messages m ON m.rowid = v.rowid
     ORDER BY v.distance`,
  )
    .all(vector, k)
    .map((r) => ({ id: r.id, similarity: 1 - r.distance }));
}

/** Drops the vectors of messages deleted since (a bounded sweep per call). */
export function sweepVectors(db: Db, limit = 500): number {
  if (!hasTable(db)) return 0;
  return stmt(
    db,
    `DELETE FROM search_vec WHERE rowid IN (SELECT v.rowid FROM search_vec v
       WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.rowid = v.rowid) LIMIT ?)`,
  ).run(limit).changes;
}
