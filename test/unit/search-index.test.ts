import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { syncFileDocs } from '../../src/shared/search/files.js';
import { searchAll } from '../../src/shared/search/run.js';
import { resolvePaths } from '../../src/shared/paths.js';
import { parseSearchQuery } from '../../src/shared/search/query.js';
import { makeSnippet, queryTerms } from '../../src/shared/search/snippet.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { appendMessage } from '../../src/shared/store/messages.js';
import { migrate, migrations } from '../../src/shared/store/migrations.js';
import {
  backfillBatch,
  indexNewMessages,
  indexState,
  newMessagesWaiting,
} from '../../src/shared/store/search.js';
import { createSession, updateSession } from '../../src/shared/store/sessions.js';
import { formatStatus } from '../../src/cli/status.js';
import { ApiError } from '../../src/shared/errors.js';

/**
 * The search index at the store: the query syntax a person types, secrets left out, and a home
 * from before the index (migration 21) filled in the background while searches say so.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-search-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const refs = (db: Db, q: string, extra: Record<string, unknown> = {}) =>
  searchAll(db, { q, ...extra }).items.map((h) => h.ref);

test('query syntax: words, "phrases", -exclude, prefix*; operators and stray syntax are plain words', () => {
  const fts = (q: string) => {
    const r = parseSearchQuery(q);
    return r.ok ? r.query.fts : `!${r.message}`;
  };
  assert.is(fts('nginx config'), '"nginx" AND "config"');
  assert.is(fts('"reverse proxy" -apache'), '("reverse proxy") NOT ("apache")');
  assert.is(fts('ngin*'), '"ngin"*');
  assert.is(fts('nginx.conf'), '"nginx conf"');
  assert.is(fts('a NEAR(b c) OR title:x'), '"a" AND "NEAR b" AND "c" AND "OR" AND "title x"');
  assert.is(fts('"unbalanced quote'), '"unbalanced" AND "quote"');
  assert.is(fts('say "hi"" there'), '"say" AND "hi" AND "there"');
  assert.ok(fts('-only').startsWith('!q only excludes'));
  assert.ok(fts('🎉 ***').startsWith('!q has no words'));
  assert.ok(fts('x'.repeat(501)).startsWith('!q is 501 characters'));
});

/** Inputs that break naive FTS5 use; each must answer results or a 400, nothing else. */
const HOSTILE = [
  'AND',
  'OR OR',
  'NOT x',
  'NEAR(',
  'NEAR(a b, 2)',
  'a NEAR/3 b',
  '"',
  '""',
  '"""',
  '-"',
  '- -',
  '*',
  '"*"*',
  'a**',
  '*a',
  '^a',
  'title:x',
  '{title body}:x',
  'body : x',
  '(a',
  'a)',
  'a:',
  "'; DROP TABLE messages; --",
  '\u0000',
  'nul\u0000byte',
  '\u0300\u0301',
  'e\u0301',
  'नमस्ते',
  '東京タワー',
  '🎉🔥',
  'emoji🎉inside',
  '\ud800',
  'x'.repeat(500),
  'a '.repeat(40),
  `${'-a '.repeat(10)}b`,
];

test('excerpts: the window with the most matches, marks as the index compares words', () => {
  const terms = queryTerms([
    { words: ['cafe'], prefix: false },
    { words: ['ngin'], prefix: true },
  ]);
  const filler = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  const { snippet, highlights } = makeSnippet(
    `${filler} Café\n\n  near the NGINX box ${filler}`,
    terms,
  );
  assert.equal(
    highlights.map(([a, b]) => snippet.slice(a, b)),
    ['Café', 'NGINX'],
  );
  assert.ok(snippet.startsWith('…') && snippet.endsWith('…'), snippet);
  assert.ok(snippet.length <= 322);
  const blob = makeSnippet(`${'x'.repeat(5000)} cafe`, terms);
  assert.ok(blob.snippet.length <= 322, 'one huge token is cut');
  assert.equal(
    blob.highlights.map(([a, b]) => blob.snippet.slice(a, b)),
    ['cafe'],
  );
});

test('hostile queries answer results or a 400, never anything else', () => {
  const db = openDb(join(dir, 'hostile.db'));
  migrate(db);
  const s = createSession(db, { title: 'tokyo' });
  appendMessage(db, s.id, { role: 'user', content: { text: 'a b 東京タワー नमस्ते é' } });
  for (const q of HOSTILE) {
    try {
      searchAll(db, { q });
    } catch (err) {
      assert.instance(err, ApiError, `${JSON.stringify(q)}: ${(err as Error).message}`);
      assert.is((err as ApiError).status, 400, JSON.stringify(q));
    }
  }
  assert.is(searchAll(db, { q: '東京タワー' }).items.length, 1);
  assert.is(searchAll(db, { q: 'नमस्ते' }).items.length, 1);
  assert.is(searchAll(db, { q: 'E' }).items.length, 1, 'diacritics folded');
  db.close();
});

test('messages, titles and goals are found; secrets are not indexed; edits and deletes follow', () => {
  const db = openDb(join(dir, 'live.db'));
  migrate(db);
  const s = createSession(db, { title: 'Fixing the nginx config' });
  const m1 = appendMessage(db, s.id, {
    role: 'user',
    content: {
      text: 'The upstream keeps timing out. My key is sk-abcdefghijklmnopqrstuvwxyz123456',
    },
  });
  const m2 = appendMessage(db, s.id, {
    role: 'assistant',
    content: {
      text: 'Raise proxy_read_timeout.',
      tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"/etc/nginx/nginx.conf"}' }],
    },
  });
  const m3 = appendMessage(db, s.id, {
    role: 'tool',
    content: { tool_call_id: 'c1', name: 'read_file', output: 'worker_processes auto;' },
  });
  // A message's own transaction writes nothing for the index; the next search indexes it first.
  assert.equal(db.prepare('SELECT count(*) AS n FROM search_docs').get(), { n: 1 }, 'the title');
  assert.ok(newMessagesWaiting(db));
  assert.equal(refs(db, 'nginx'), [s.id, m2.id]);
  assert.not.ok(newMessagesWaiting(db));
  // The newest message deleted after it was indexed: SQLite gives the next one its rowid, and
  // the mark came down so that one is indexed too.
  const gone = appendMessage(db, s.id, { role: 'user', content: { text: 'ephemeral' } });
  assert.equal(refs(db, 'ephemeral'), [gone.id]);
  const rowid = (id: string) =>
    (db.prepare('SELECT rowid AS r FROM messages WHERE id = ?').get(id) as { r: number }).r;
  const was = rowid(gone.id);
  db.prepare('DELETE FROM messages WHERE id = ?').run(gone.id);
  assert.equal(refs(db, 'ephemeral'), []);
  const next = appendMessage(db, s.id, { role: 'user', content: { text: 'reborn' } });
  assert.is(rowid(next.id), was, 'the same rowid again');
  assert.equal(refs(db, 'reborn'), [next.id]);
  db.prepare('DELETE FROM messages WHERE id = ?').run(next.id);
  assert.is(indexNewMessages(db), 0);
  assert.equal(refs(db, 'upstream timing'), [m1.id]);
  assert.equal(refs(db, 'worker_processes'), [m3.id]);
  assert.equal(refs(db, 'worker_processes', { kinds: ['message'] }), []);
  assert.equal(refs(db, 'upstream', { role: 'assistant' }), []);
  assert.equal(refs(db, 'proxy_read_timeout', { role: 'assistant' }), [m2.id]);
  assert.equal(refs(db, 'sk abcdefghijklmnopqrstuvwxyz123456'), [], 'the key is not indexed');
  assert.equal(refs(db, 'abcdefghijklmnopqrstuvwxyz123456'), []);
  const hit = searchAll(db, { q: 'upstream' }).items[0]!;
  assert.is(hit.session_title, 'Fixing the nginx config');
  assert.is(hit.seq, 1);
  const [a, b] = hit.highlights[0]!;
  assert.is(hit.snippet.slice(a, b), 'upstream');
  assert.ok(hit.snippet.includes('[redacted'), hit.snippet);

  updateSession(db, s.id, { title: 'Apache migration' });
  assert.equal(refs(db, 'nginx', { kinds: ['session'] }), []);
  assert.equal(refs(db, 'apache'), [s.id]);
  db.prepare('DELETE FROM messages WHERE id = ?').run(m1.id);
  assert.equal(refs(db, 'upstream'), []);
  db.prepare('DELETE FROM sessions WHERE id = ?').run(s.id);
  assert.equal(refs(db, 'proxy_read_timeout'), [], 'a purged session leaves nothing behind');
  assert.equal(db.prepare('SELECT count(*) AS n FROM search_docs').get(), { n: 0 });
  db.close();
});

test('memory notes, skills and workflows follow the files, whoever edits them', () => {
  const home = join(dir, 'home');
  const paths = resolvePaths({ SVC_HOME: home });
  mkdirSync(paths.memoryDir, { recursive: true });
  const db = openDb(join(dir, 'files.db'));
  migrate(db);
  const note = join(paths.memoryDir, 'garden.md');
  writeFileSync(note, '# Garden\nThe tomatoes go in the greenhouse in May.\n');
  const find = (q: string) =>
    searchAll(db, { q }, { paths }).items.map((h) => `${h.kind}:${h.name}`);
  assert.equal(find('tomatoes greenhouse'), ['memory:garden']);
  assert.equal(find('repo-digest'), ['workflow:repo-digest'], 'a built-in workflow by its name');
  assert.ok(find('schedule').includes('skill:schedule-work'), 'a built-in skill');
  writeFileSync(note, '# Garden\nThe peppers go in the greenhouse in June.\n');
  utimesSync(note, new Date(), new Date(Date.now() + 10_000));
  syncFileDocs(db, paths, true);
  assert.equal(find('tomatoes'), []);
  assert.equal(find('peppers'), ['memory:garden']);
  rmSync(note);
  syncFileDocs(db, paths, true);
  assert.equal(find('peppers'), []);
  db.close();
});

test('a home from before the index is filled in batches; meanwhile searches and svc status say so', () => {
  const db = openDb(join(dir, 'old.db'));
  migrate(
    db,
    migrations.filter((m) => m.version < 21),
  );
  const s = createSession(db, { title: 'Old chat' });
  for (let i = 0; i < 30; i++)
    appendMessage(db, s.id, { role: 'user', content: { text: `note ${i} about zanzibar` } });
  migrate(db);
  // Written after the upgrade: indexed at once by the triggers.
  const fresh = appendMessage(db, s.id, { role: 'user', content: { text: 'fresh zanzibar' } });
  const st = indexState(db);
  assert.is(st.state, 'building');
  const answer = searchAll(db, { q: 'zanzibar' });
  assert.equal(
    answer.items.map((h) => h.ref),
    [fresh.id],
  );
  assert.match(answer.notice ?? '', /still being built: 0% .*\(0 of 31\)/);
  const line = formatStatus({
    version: 'x',
    state: 'running',
    started_at: '',
    home: '/h',
    addr: null,
    url: null,
    uws: null,
    engine: null,
    restarts: 0,
    last_restart_error: null,
    processes: [],
    search: st,
  });
  assert.match(line, /search index: building, 0% \(0 of 31 earlier items\)/);
  let batches = 0;
  while (backfillBatch(db, 8)) batches++;
  assert.ok(batches >= 4, `in batches (${batches})`);
  assert.equal(indexState(db), { state: 'ready' });
  const after = searchAll(db, { q: 'zanzibar', limit: 50 });
  assert.is(after.items.length, 31);
  assert.is(after.notice, undefined);
  assert.equal(refs(db, 'old chat'), [s.id], 'titles from before are in too');
  db.close();
});

test.run();
