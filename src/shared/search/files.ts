import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Paths } from '../paths.js';
import { listSkills } from '../skills/catalog.js';
import type { Db } from '../store/db.js';
import { stmt } from '../store/util.js';
import { loadWorkflows } from '../workflows/catalog.js';
import { clean, TEXT_CAP } from './text.js';

/**
 * Memory notes, skills and workflows live in files the user may edit with any editor, so no
 * trigger sees them change: before a search the index is brought in line with the disk (a stat
 * per note, the skill and workflow catalogues), at most every few seconds per process.
 */

const EVERY_MS = 5000;
const MEMORY_READ_MAX = 256 * 1024;
/** Their refs sort together (`file:…`), so the index finds them without a scan. */
const PREFIX = 'file:';

interface Wanted {
  kind: 'memory' | 'skill' | 'workflow';
  ref: string;
  title: string;
  stamp: string;
  created_at: string;
  body: () => string;
}

function memoryNotes(dir: string): Wanted[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: Wanted[] = [];
  for (const name of names) {
    if (!name.endsWith('.md') || name.startsWith('.')) continue;
    const file = join(dir, name);
    try {
      const st = statSync(file);
      if (!st.isFile()) continue;
      out.push({
        kind: 'memory',
        ref: `${PREFIX}memory/${name}`,
        title: name.slice(0, -3),
        stamp: `${st.mtimeMs}:${st.size}`,
        created_at: st.mtime.toISOString(),
        body: () => readFileSync(file, 'utf8').slice(0, MEMORY_READ_MAX),
      });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

function wanted(db: Db, paths: Paths): Wanted[] {
  const now = new Date(0).toISOString();
  return [
    ...memoryNotes(paths.memoryDir),
    ...listSkills(db, paths).map((s) => ({
      kind: 'skill' as const,
      ref: `${PREFIX}skill/${s.name}`,
      title: s.name,
      stamp: s.description,
      created_at: now,
      body: () => s.description,
    })),
    ...loadWorkflows(paths).map((w) => ({
      kind: 'workflow' as const,
      ref: `${PREFIX}workflow/${w.name}`,
      title: w.name,
      stamp: w.workflow?.description ?? '',
      created_at: now,
      body: () => w.workflow?.description ?? '',
    })),
  ];
}

const lastSync = new WeakMap<Db, number>();

/** Brings the index's memory, skill and workflow entries in line with the disk (throttled). */
export function syncFileDocs(db: Db, paths: Paths, force = false): void {
  const now = Date.now();
  if (!force && now - (lastSync.get(db) ?? 0) < EVERY_MS) return;
  lastSync.set(db, now);
  const want = wanted(db, paths);
  const have = new Map(
    stmt<[string, string], { id: number; ref: string; stamp: string | null }>(
      db,
      'SELECT id, ref, stamp FROM search_docs WHERE ref >= ? AND ref < ?',
    )
      .all(PREFIX, 'file;')
      .map((r) => [r.ref, r]),
  );
  const changed = want.filter((w) => have.get(w.ref)?.stamp !== w.stamp);
  const keep = new Set(want.map((w) => w.ref));
  const gone = [...have.values()].filter((h) => !keep.has(h.ref));
  if (changed.length === 0 && gone.length === 0) return;
  const rows = changed.map((w) => {
    let body = '';
    try {
      body = clean(w.body(), TEXT_CAP) ?? '';
    } catch {
      // unreadable now: indexed by its name alone, read again when it changes
    }
    return { ...w, body, title: clean(w.title, 200) ?? '' };
  });
  db.transaction(() => {
    for (const g of gone) stmt(db, 'DELETE FROM search_docs WHERE id = ?').run(g.id);
    for (const r of rows)
      stmt(
        db,
        `INSERT INTO search_docs (kind, ref, created_at, title, body, stamp)
         VALUES (@kind, @ref, @created_at, @title, @body, @stamp)
         ON CONFLICT (ref, kind) DO UPDATE SET title = excluded.title, body = excluded.body,
           stamp = excluded.stamp, created_at = excluded.created_at`,
      ).run({
        kind: r.kind,
        ref: r.ref,
        created_at: r.created_at,
        title: r.title,
        body: r.body,
        stamp: r.stamp,
      });
  }).immediate();
}
