import { z } from 'zod';
import { scrubSecrets } from '../audit.js';
import { indexStateSchema, type searchHitSchema, searchKinds } from '../protocol/answers/search.js';
import { makeSnippet, type Term } from '../search/snippet.js';
import type { Db } from './db.js';
import { stmt } from './util.js';

/**
 * The full-text index (migration 21): search_docs rows kept by triggers on every write, found
 * through search_fts. This module reads it, and fills it in the background for rows written
 * before it existed.
 */

export { indexStateSchema, searchKinds };
export type SearchKind = (typeof searchKinds)[number];

export interface SearchFilters {
  session_id?: string;
  exclude_session_id?: string;
  origin?: string;
  role?: string;
  kinds?: readonly SearchKind[];
  /** ISO times: created_at in [from, to). */
  from?: string;
  to?: string;
}

export type SearchHit = z.infer<typeof searchHitSchema>;

/**
 * A word in most messages matches hundreds of thousands of them, and ranking them all costs
 * seconds (BM25 is most of a search's time, about 7 µs a match here): the newest this many
 * matches (after the filters) are ranked, and the answer says so. Distinctive words (nearly every
 * real search) are ranked whole.
 */
export const CANDIDATES = 1000;

interface CandidateRow {
  matched: number;
  id: number;
  kind: SearchKind;
  ref: string;
  session_id: string | null;
  role: string | null;
  origin: string | null;
  created_at: string;
  score: number;
}

/**
 * Hits for an FTS5 query (built by parseSearchQuery, never raw user text), best first: BM25, then
 * newest. Items of trashed sessions are left out (they stay indexed, so a restore brings them back).
 */
export function searchIndex(
  db: Db,
  fts: string,
  /** The words looked for, to mark in each excerpt. */
  terms: Term[],
  filters: SearchFilters,
  page: { limit: number; offset: number },
): { hits: SearchHit[]; capped: boolean } {
  const args: Record<string, string | number> = { q: fts, limit: page.limit, offset: page.offset };
  const where = filterClauses(filters, args);
  const rows = stmt<[Record<string, string | number>], CandidateRow>(
    db,
    `SELECT *, count(*) OVER () AS matched FROM (
       SELECT d.id, d.kind, d.ref, d.session_id, d.role, d.origin, d.created_at,
         search_fts.rank AS score
       FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid
       LEFT JOIN sessions s ON s.id = d.session_id
       WHERE search_fts MATCH @q
         AND (d.session_id IS NULL OR (s.id IS NOT NULL AND s.trash_id IS NULL))
         ${where.map((w) => `AND ${w}`).join(' ')}
       ORDER BY search_fts.rowid DESC LIMIT ${CANDIDATES})
     ORDER BY score, created_at DESC, id DESC
     LIMIT @limit OFFSET @offset`,
  ).all(args);
  const matched = rows[0]?.matched ?? 0;
  const hits = toHits(db, rows, terms);
  return { hits, capped: matched >= CANDIDATES };
}

/** The filters as SQL over search_docs `d`, their values put in `args`. */
function filterClauses(filters: SearchFilters, args: Record<string, string | number>): string[] {
  const where: string[] = [];
  if (filters.session_id !== undefined) {
    where.push('d.session_id = @session');
    args.session = filters.session_id;
  }
  if (filters.exclude_session_id !== undefined) {
    where.push('d.session_id IS NOT @not_session');
    args.not_session = filters.exclude_session_id;
  }
  if (filters.origin !== undefined) {
    where.push('d.origin = @origin');
    args.origin = filters.origin;
  }
  if (filters.role !== undefined) {
    where.push('d.role = @role');
    args.role = filters.role;
  }
  if (filters.kinds !== undefined && filters.kinds.length < searchKinds.length) {
    // From the closed list above, so safe to spell out.
    where.push(`d.kind IN (${filters.kinds.map((k) => `'${k}'`).join(', ')})`);
  }
  if (filters.from !== undefined) {
    where.push('d.created_at >= @from');
    args.from = filters.from;
  }
  if (filters.to !== undefined) {
    where.push('d.created_at < @to');
    args.to = filters.to;
  }
  return where;
}

/** Result items for index rows: each with its bounded, marked excerpt. */
function toHits(db: Db, rows: Omit<CandidateRow, 'matched'>[], terms: Term[]): SearchHit[] {
  return rows.map((r) => {
    const extra = stmt<
      [number],
      { title: string; body: string; stitle: string | null; seq: number | null }
    >(
      db,
      `SELECT d.title, d.body,
         (SELECT title FROM sessions WHERE id = d.session_id) AS stitle,
         (SELECT seq FROM messages WHERE id = d.ref AND d.kind IN ('message', 'tool')) AS seq
       FROM search_docs d WHERE d.id = ?`,
    ).get(r.id);
    const fromBody = makeSnippet(extra?.body ?? '', terms);
    const { snippet, highlights } =
      fromBody.highlights.length > 0 || !extra?.title ? fromBody : makeSnippet(extra.title, terms);
    return {
      kind: r.kind,
      ref: r.ref,
      session_id: r.session_id,
      // A title made from a first message can hold what the index left out.
      session_title: extra?.stitle == null ? null : scrubSecrets(extra.stitle),
      name: r.kind === 'session' || r.kind === 'goal' ? null : (extra?.title ?? null),
      seq: extra?.seq ?? null,
      role: r.role,
      origin: r.origin,
      created_at: r.created_at,
      score: r.score,
      snippet,
      highlights,
    };
  });
}

/**
 * Message items (kind `message`) for these message ids, as the filters allow and in the given
 * order; the semantic side of a search finds messages by meaning, not by their words.
 */
export function messageHits(
  db: Db,
  ids: string[],
  terms: Term[],
  filters: SearchFilters,
): SearchHit[] {
  if (ids.length === 0 || (filters.kinds !== undefined && !filters.kinds.includes('message')))
    return [];
  const args: Record<string, string | number> = {};
  const where = filterClauses({ ...filters, kinds: undefined }, args);
  for (const [i, id] of ids.entries()) args[`m${i}`] = id;
  const rows = stmt<[Record<string, string | number>], Omit<CandidateRow, 'matched'>>(
    db,
    `SELECT d.id, d.kind, d.ref, d.session_id, d.role, d.origin, d.created_at, 0 AS score
     FROM search_docs d LEFT JOIN sessions s ON s.id = d.session_id
     WHERE d.kind = 'message' AND d.ref IN (${ids.map((_, i) => `@m${i}`).join(', ')})
       AND (d.session_id IS NULL OR (s.id IS NOT NULL AND s.trash_id IS NULL))
       ${where.map((w) => `AND ${w}`).join(' ')}`,
  ).all(args);
  const order = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => order.get(a.ref)! - order.get(b.ref)!);
  return toHits(db, rows, terms);
}

// ---- the background fill of rows from before the index ----

const TABLES = ['sessions', 'goals', 'artifacts', 'messages'] as const;
type Table = (typeof TABLES)[number];

const backfillSchema = z.object({
  tables: z.record(z.string(), z.object({ next: z.number(), upto: z.number() })),
  total: z.number(),
  done: z.number(),
});
type Backfill = z.infer<typeof backfillSchema>;

export type IndexState = z.infer<typeof indexStateSchema>;

function readBackfill(db: Db): Backfill | undefined {
  const raw = stmt<[], { value: string }>(
    db,
    "SELECT value FROM meta WHERE key = 'search_backfill'",
  ).get()?.value;
  if (raw === undefined) return undefined;
  try {
    return backfillSchema.parse(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/** Whether every row written before the index existed is in it yet, and how far the fill is. */
export function indexState(db: Db): IndexState {
  const b = readBackfill(db);
  if (!b) return { state: 'ready' };
  const done = Math.min(b.done, b.total);
  return {
    state: 'building',
    done,
    total: b.total,
    percent: b.total > 0 ? Math.floor((done * 100) / b.total) : 100,
  };
}

/** Messages picked by `where` (over messages' rowid), as both of their parts (words, tool calls). */
function messageFill(where: string, tail = ''): string[] {
  return (['message', 'tool'] as const).map(
    (
      part,
    ) => `INSERT OR IGNORE INTO search_docs (kind, ref, session_id, role, origin, created_at, body)
     SELECT '${part}', id, session_id, role,
       (SELECT origin FROM turns t WHERE t.session_id = m.session_id
         AND t.started_at <= m.created_at ORDER BY t.started_at DESC LIMIT 1),
       created_at, b
     FROM (SELECT id, session_id, role, created_at, svc_search_text('${part}', role, content) AS b
       FROM messages WHERE ${where} AND role IN ('user', 'assistant', 'tool') ${tail}) m
     WHERE b IS NOT NULL`,
  );
}

const NEW_FILL = messageFill('rowid > @from AND rowid <= @last');

/**
 * Indexes up to `batch` messages written since the index last looked (above the mark), in one
 * transaction; the number it took (0: none were waiting).
 */
export function indexNewMessages(db: Db, batch = 500): number {
  return db
    .transaction(() => {
      const from = stmt<[], { msg: number }>(db, 'SELECT msg FROM search_mark WHERE id = 1').get()
        ?.msg;
      if (from === undefined) return 0;
      const span = stmt<[number, number], { last: number | null; n: number }>(
        db,
        'SELECT max(rowid) AS last, count(*) AS n FROM (SELECT rowid FROM messages WHERE rowid > ? ORDER BY rowid LIMIT ?)',
      ).get(from, batch)!;
      if (span.last === null) return 0;
      for (const sql of NEW_FILL) stmt(db, sql).run({ from, last: span.last });
      stmt(db, 'UPDATE search_mark SET msg = ? WHERE id = 1').run(span.last);
      return span.n;
    })
    .immediate();
}

/** Whether messages wait for the index: two lookups, at the ends of two b-trees. */
export function newMessagesWaiting(db: Db): boolean {
  return (
    stmt(
      db,
      'SELECT 1 WHERE (SELECT coalesce(max(rowid), 0) FROM messages) > (SELECT msg FROM search_mark WHERE id = 1)',
    ).get() !== undefined
  );
}

/** Each table's rows as the triggers index them; `@from`/`@upto`/`@n` pick one batch by rowid. */
const FILL: Record<Table, string[]> = {
  sessions: [
    `INSERT OR IGNORE INTO search_docs (kind, ref, session_id, created_at, title)
     SELECT 'session', id, id, created_at, coalesce(svc_search_text('plain', NULL, title), '')
     FROM sessions WHERE rowid > @from AND rowid <= @upto ORDER BY rowid LIMIT @n`,
  ],
  goals: [
    `INSERT OR IGNORE INTO search_docs (kind, ref, session_id, created_at, body)
     SELECT 'goal', session_id, session_id, created_at, coalesce(svc_search_text('plain', NULL, objective), '')
     FROM goals WHERE rowid > @from AND rowid <= @upto ORDER BY rowid LIMIT @n`,
  ],
  artifacts: [
    `INSERT OR IGNORE INTO search_docs (kind, ref, session_id, created_at, title)
     SELECT 'artifact', id, session_id, created_at, coalesce(svc_search_text('plain', NULL, path), '')
     FROM artifacts WHERE rowid > @from AND rowid <= @upto ORDER BY rowid LIMIT @n`,
  ],
  messages: messageFill('rowid > @from AND rowid <= @upto', 'ORDER BY rowid LIMIT @n'),
};

/**
 * Indexes the next batch of rows from before the index (one short transaction), moving the mark
 * on; false once everything is in (the mark is then gone and the index reads as ready).
 */
export function backfillBatch(db: Db, batch = 250): boolean {
  return db
    .transaction(() => {
      const b = readBackfill(db);
      if (!b) return false;
      const table = TABLES.find((t) => {
        const s = b.tables[t];
        return s !== undefined && s.next < s.upto;
      });
      if (table === undefined) {
        stmt(db, "DELETE FROM meta WHERE key = 'search_backfill'").run();
        return false;
      }
      const s = b.tables[table]!;
      const span = stmt<[number, number, number], { last: number | null; n: number }>(
        db,
        `SELECT max(rowid) AS last, count(*) AS n FROM (SELECT rowid FROM ${table}
         WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?)`,
      ).get(s.next, s.upto, batch)!;
      for (const sql of FILL[table]) stmt(db, sql).run({ from: s.next, upto: s.upto, n: batch });
      s.next = span.last ?? s.upto;
      b.done += span.n;
      stmt(db, "UPDATE meta SET value = ?, updated_at = ? WHERE key = 'search_backfill'").run(
        JSON.stringify(b),
        new Date().toISOString(),
      );
      return true;
    })
    .immediate();
}
