import { existsSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { searchAll } from '../src/shared/search/run.js';
import { indexNewMessages } from '../src/shared/store/search.js';
import { openAndMigrate, type Db } from '../src/shared/store/db.js';
import { appendMessage, insertMessageRow } from '../src/shared/store/messages.js';
import { insertSessionRow } from '../src/shared/store/sessions.js';
import { endTurnRow, startTurnRow } from '../src/shared/store/turns.js';
import { newId } from '../src/shared/store/util.js';
import { emit, envInt, machine, median, note, removeLater, round } from './lib.js';

/**
 * Issue 36's bars for the search index, in one process on a real svc.db:
 *
 *   search  p95 of GET /api/search's work (searchAll: parse, FTS5 match, BM25, snippets) over a
 *           mix of queries at 1,000,000 messages (target ≤ 50 ms);
 *   write   a turn's store writes (turn row, user message, assistant tool call, a 2 KB tool
 *           output, the reply, the turn's end) with the index's triggers against the same writes
 *           with them dropped, alternating blocks in the same store (target ≤ 1.10); and the
 *           later batch that puts the new messages' words in the index, per turn;
 *   size    the index's share of svc.db (search_docs + search_fts), and per message.
 *
 *   BENCH_SEARCH_MESSAGES=1000000 BENCH_SEARCH_QUERIES=300 BENCH_SEARCH_TURNS=300
 */

const MESSAGES = envInt('BENCH_SEARCH_MESSAGES', 1_000_000);
const QUERIES = envInt('BENCH_SEARCH_QUERIES', 300);
const TURNS = envInt('BENCH_SEARCH_TURNS', 300);
const PER_SESSION = 50;

// A deterministic generator, so runs compare.
let seed = 0x9e3779b9;
function rand(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x100000000;
}

/** 40,000 made-up words, drawn with Zipf's law (s = 1) as natural text is. */
const SYLLABLES =
  'ka lo mi nu re sa ti vo ze pa do fi gu he ja ke li ma ne po ru se ta ve wi xo yu zo'.split(' ');
const VOCAB: string[] = [];
const seen = new Set<string>();
while (VOCAB.length < 40_000) {
  let w = '';
  const n = 2 + Math.floor(rand() * 3);
  for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
  if (!seen.has(w)) {
    seen.add(w);
    VOCAB.push(w);
  }
}
const CUM: number[] = [];
let total = 0;
for (let i = 0; i < VOCAB.length; i++) CUM.push((total += 1 / (i + 1)));
function word(): string {
  const x = rand() * total;
  let lo = 0;
  let hi = CUM.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUM[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo]!;
}
const sentence = (n: number) => Array.from({ length: n }, word).join(' ');

/** Sessions of 50 messages: user and assistant text, a tool call and its output now and then. */
function seed1(db: Db): void {
  const sessions = Math.ceil(MESSAGES / PER_SESSION);
  const t0 = Date.now() - MESSAGES * 60_000;
  let made = 0;
  const started = Date.now();
  for (let s = 0; s < sessions; s += 200) {
    db.transaction(() => {
      for (let k = s; k < Math.min(sessions, s + 200); k++) {
        const id = newId('s', t0 + k * PER_SESSION * 60_000);
        const at = new Date(t0 + k * PER_SESSION * 60_000).toISOString();
        insertSessionRow(db, {
          id,
          title: sentence(5),
          model_id: null,
          reasoning_effort: 'medium',
          show_reasoning: 1,
          permission_mode: 'interactive',
          working_dir: null,
          created_at: at,
          updated_at: at,
          message_count: PER_SESSION,
        });
        for (let seq = 1; seq <= PER_SESSION && made < MESSAGES; seq++, made++) {
          const role = seq % 5 === 3 ? 'tool' : seq % 2 === 1 ? 'user' : 'assistant';
          const content =
            role === 'tool'
              ? { tool_call_id: 'c', name: 'terminal', output: sentence(120) }
              : role === 'user'
                ? { text: sentence(25) }
                : { text: sentence(60), stop_reason: 'end_turn', model: 'm' };
          insertMessageRow(db, {
            id: newId('m', t0 + (k * PER_SESSION + seq) * 60_000),
            session_id: id,
            seq,
            role,
            content: JSON.stringify(content),
            created_at: new Date(t0 + (k * PER_SESSION + seq) * 60_000).toISOString(),
          });
        }
      }
    })();
    if (s % 4000 === 0)
      note(`seeded ${made} of ${MESSAGES} messages (${round((Date.now() - started) / 1000, 0)} s)`);
  }
}

const SEARCH_TRIGGERS = [
  // (a new message has none: the index takes what lies above its mark later, in batches)
  'messages_search_drop',
  'messages_search_move',
  'sessions_search_add',
  'sessions_search_title',
  'sessions_search_drop',
];

/** One turn's writes, as the agent makes them. */
function turn(db: Db, sessionId: string): void {
  const turnId = newId('turn');
  const ref = { id: turnId, session_id: sessionId, origin: 'http' };
  startTurnRow(db, ref);
  appendMessage(db, sessionId, { role: 'user', content: { text: sentence(25) } });
  appendMessage(db, sessionId, {
    role: 'assistant',
    content: {
      text: '',
      tool_calls: [
        { id: 'c1', name: 'terminal', arguments: JSON.stringify({ command: sentence(6) }) },
      ],
      stop_reason: 'tool_use',
      model: 'm',
    },
  });
  appendMessage(db, sessionId, {
    role: 'tool',
    content: { tool_call_id: 'c1', name: 'terminal', output: sentence(300) },
  });
  appendMessage(db, sessionId, {
    role: 'assistant',
    content: { text: sentence(60), stop_reason: 'end_turn', model: 'm' },
  });
  endTurnRow(db, ref, 'completed', { reply: 'x', stop_reason: 'end_turn' });
}

function p95(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))]!;
}

async function main(): Promise<void> {
  // BENCH_SEARCH_KEEP=<folder>: keep the seeded store there and reuse it on the next run (a
  // million messages take minutes to make).
  const keep = process.env.BENCH_SEARCH_KEEP;
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'svc-bench-search-'));
  if (!keep) removeLater(dir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'svc.db');
  const reuse = keep !== undefined && existsSync(file);
  const { db } = openAndMigrate(file);
  let seedS = 0;
  let indexS = 0;
  if (!reuse) {
    const t = Date.now();
    seed1(db);
    seedS = (Date.now() - t) / 1000;
    note(`seeded ${MESSAGES} messages in ${round(seedS, 1)} s; indexing them`);
    const t1 = Date.now();
    while (indexNewMessages(db, 5000) > 0);
    indexS = (Date.now() - t1) / 1000;
    note(`indexed in ${round(indexS, 1)} s`);
  } else note(`reusing ${file}`);
  db.pragma('wal_checkpoint(TRUNCATE)');

  // Size: the index's pages against the whole file.
  const pages = db
    .prepare(
      "SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name LIKE 'search_%' OR name LIKE 'sqlite_autoindex_search%' GROUP BY name",
    )
    .all() as Array<{ name: string; bytes: number }>;
  const indexBytes = pages.reduce((s, p) => s + p.bytes, 0);
  const fileBytes = statSync(file).size;
  const docs = (db.prepare('SELECT count(*) AS n FROM search_docs').get() as { n: number }).n;

  // Queries a person types: rare, middling and common words, two words, a phrase, a prefix,
  // an exclusion, and the same with a filter.
  const pick = (from: number, to: number) => VOCAB[from + Math.floor(rand() * (to - from))]!;
  const kinds: Array<[string, () => string]> = [
    ['rare word', () => pick(20_000, 40_000)],
    ['middling word', () => pick(500, 5_000)],
    ['common word', () => pick(10, 100)],
    ['two words', () => `${pick(100, 2_000)} ${pick(100, 2_000)}`],
    ['phrase', () => `"${pick(50, 500)} ${pick(50, 500)}"`],
    ['prefix', () => `${pick(1_000, 10_000).slice(0, 5)}*`],
    ['exclude', () => `${pick(200, 3_000)} -${pick(10, 200)}`],
    ['word, role=user', () => pick(200, 5_000)],
  ];
  const times: number[] = [];
  const byKind: Record<string, number[]> = {};
  let hits = 0;
  for (let i = 0; i < QUERIES; i++) {
    const [name, make] = kinds[i % kinds.length]!;
    const q = make();
    const t0 = performance.now();
    const r = searchAll(db, { q, ...(name.includes('role') ? { role: 'user' } : {}) });
    const ms = performance.now() - t0;
    hits += r.items.length;
    times.push(ms);
    (byKind[name] ??= []).push(ms);
  }
  const searchP95 = p95(times);
  emit({
    bench: 'search',
    part: 'search',
    messages: MESSAGES,
    docs,
    queries: QUERIES,
    p50_ms: round(median(times), 2),
    p95_ms: round(searchP95, 2),
    max_ms: round(Math.max(...times), 2),
    mean_hits: round(hits / QUERIES, 1),
    by_kind_p95_ms: Object.fromEntries(
      Object.entries(byKind).map(([k, v]) => [k, round(p95(v), 2)]),
    ),
    target_ms: 50,
    ok: searchP95 <= 50,
  });

  // Writes: the same turns with and without the index's triggers, in alternating blocks.
  const triggerSql = new Map(
    (
      db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as Array<{
        name: string;
        sql: string;
      }>
    )
      .filter((r) => SEARCH_TRIGGERS.includes(r.name))
      .map((r) => [r.name, r.sql]),
  );
  const session = (
    db.prepare('SELECT id FROM sessions ORDER BY rowid DESC LIMIT 1').get() as {
      id: string;
    }
  ).id;
  const withIdx: number[] = [];
  const without: number[] = [];
  let drainMs = 0;
  const block = Math.max(10, Math.floor(TURNS / 10));
  for (let b = 0; b < 10; b++) {
    for (const on of b % 2 === 0 ? [true, false] : [false, true]) {
      db.transaction(() => {
        for (const [name, sql] of triggerSql) {
          db.exec(`DROP TRIGGER IF EXISTS ${name}`);
          if (on) db.exec(sql);
        }
      })();
      for (let i = 0; i < block; i++) {
        const t0 = performance.now();
        turn(db, session);
        (on ? withIdx : without).push(performance.now() - t0);
      }
      if (on) {
        // The supervisor's later step: the new messages' words into the index, in one batch.
        const t0 = performance.now();
        while (indexNewMessages(db) > 0);
        drainMs += performance.now() - t0;
      }
    }
  }
  const ratio = median(withIdx) / median(without);
  const drainPerTurn = drainMs / withIdx.length;
  emit({
    bench: 'search',
    part: 'write',
    turns: withIdx.length,
    with_index_median_us: round(median(withIdx) * 1000, 0),
    without_index_median_us: round(median(without) * 1000, 0),
    ratio: round(ratio, 3),
    target_ratio: 1.1,
    ok: ratio <= 1.1,
    // Off the turn's path (the supervisor, or the next search), but paid by the machine.
    background_index_us_per_turn: round(drainPerTurn * 1000, 0),
    ratio_with_background: round((median(withIdx) + drainPerTurn) / median(without), 3),
  });
  emit({
    bench: 'search',
    part: 'size',
    db_bytes: fileBytes,
    index_bytes: indexBytes,
    index_share: round(indexBytes / fileBytes, 3),
    index_bytes_per_message: round(indexBytes / MESSAGES, 0),
    tables: Object.fromEntries(pages.map((p) => [p.name, p.bytes])),
    seed_seconds: round(seedS, 1),
    index_build_seconds: round(indexS, 1),
  });
  emit({ bench: 'search', part: 'machine', ...machine() });
  db.close();
}

await main();
