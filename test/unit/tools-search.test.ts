import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths, type Paths } from '../../src/shared/paths.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { isIgnored, parseGitignore } from '../../src/workers/agent/tools/search/gitignore.js';
import { globToRegExp } from '../../src/workers/agent/tools/search/glob-pattern.js';
import { closeSearchPool, searchTools } from '../../src/workers/agent/tools/index.js';
import {
  ToolRegistry,
  type ToolContext,
  type ToolResult,
} from '../../src/workers/agent/tools/registry.js';
import { runGlob, runGrep } from '../../src/workers/agent/tools/search/search-pool.js';
import { rejection } from '../helpers/rejects.js';

const root = mkdtempSync(join(tmpdir(), 'svc-tools-search-'));
const paths: Paths = resolvePaths({ SVC_HOME: join(root, 'svc-home') });
mkdirSync(paths.home, { recursive: true });
const db: Db = openAndMigrate(paths.db).db;
const registry = new ToolRegistry(searchTools);

function ctx(workingDir: string, signal = new AbortController().signal): ToolContext {
  return {
    sessionId: 's_search',
    turnId: 'u_1',
    callId: 'c_1',
    workingDir,
    signal,
    db,
    paths,
    emit: () => undefined,
  };
}

function call(dir: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return registry.call(name, JSON.stringify(args), ctx(dir));
}

/** Writes files from a {relative path: content} map under `base`. */
function tree(base: string, files: Record<string, string | Buffer>): string {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(base, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
  return base;
}

const listed = (r: ToolResult) => r.output.split('\n').filter((l) => !l.startsWith('['));

test.after(async () => {
  await closeSearchPool();
  db.close();
  rmSync(root, { recursive: true, force: true });
});

test('glob patterns: *, ?, **, classes, braces', () => {
  const t = (p: string, s: string) => globToRegExp(p, { braces: true }).test(s);
  assert.ok(t('*.ts', 'a.ts'));
  assert.not.ok(t('*.ts', 'src/a.ts'));
  assert.ok(t('**/*.ts', 'a.ts'));
  assert.ok(t('**/*.ts', 'src/deep/a.ts'));
  assert.ok(t('src/**/x.md', 'src/x.md'));
  assert.ok(t('src/**/x.md', 'src/a/b/x.md'));
  assert.not.ok(t('src/*/x.md', 'src/a/b/x.md'));
  assert.ok(t('file?.txt', 'file1.txt'));
  assert.not.ok(t('file?.txt', 'file10.txt'));
  assert.ok(t('[abc].js', 'b.js'));
  assert.ok(t('[!abc].js', 'd.js'));
  assert.not.ok(t('[!abc].js', 'a.js'));
  assert.ok(t('*.{ts,tsx}', 'x.tsx'));
  assert.not.ok(t('*.{ts,tsx}', 'x.js'));
  assert.ok(t('a.(b)+', 'a.(b)+'), 'regex characters are literal');
  assert.ok(t('dist/**', 'dist/a/b'));
  assert.not.ok(t('dist/**', 'dist'));
});

test('gitignore rules: negation, folders only, anchoring, **, last match wins', () => {
  const base = '/r/';
  const layer = {
    base,
    rules: parseGitignore(
      [
        '# comment',
        '*.log',
        '!keep.log',
        'build/',
        '/top.txt',
        'docs/**/*.tmp',
        'cache',
        '\\#hash',
        'trail   ',
      ].join('\n'),
    ),
  };
  const ig = (rel: string, dir = false) =>
    isIgnored([layer], base + rel, rel.split('/').pop()!, dir);
  assert.ok(ig('a.log'));
  assert.ok(ig('sub/deep/b.log'));
  assert.not.ok(ig('keep.log'));
  assert.not.ok(ig('sub/keep.log'));
  assert.ok(ig('build', true));
  assert.not.ok(ig('build'), 'build/ matches folders only');
  assert.ok(ig('top.txt'));
  assert.not.ok(ig('sub/top.txt'), 'a leading slash anchors to the ignore file folder');
  assert.ok(ig('docs/a/b/x.tmp'));
  assert.ok(ig('docs/x.tmp'));
  assert.not.ok(ig('other/x.tmp'));
  assert.ok(ig('x/cache', true));
  assert.ok(ig('#hash'));
  assert.ok(ig('trail'));
  // A deeper layer overrides a shallower one.
  const nested = { base: '/r/sub/', rules: parseGitignore('!special.log\n') };
  assert.not.ok(isIgnored([layer, nested], '/r/sub/special.log', 'special.log', false));
  assert.ok(isIgnored([layer, nested], '/r/special.log', 'special.log', false));
});

test('glob honours root and nested .gitignore, skips node_modules and .git', async () => {
  const dir = tree(join(root, 'repo'), {
    '.gitignore': '*.log\n!keep.log\nbuild/\n/only-root.txt\n',
    'a.ts': 'a',
    'keep.log': 'k',
    'drop.log': 'd',
    'only-root.txt': 'x',
    'build/out.ts': 'b',
    'src/b.ts': 'b',
    'src/only-root.txt': 'x',
    'src/.gitignore': 'generated.ts\n!drop2.log\n',
    'src/generated.ts': 'g',
    'src/drop2.log': 'kept by the nested negation',
    'node_modules/pkg/index.ts': 'n',
    '.git/config': '[core]',
    'sub/node_modules/x.ts': 'n',
  });
  const r = await call(dir, 'glob', { pattern: '**/*' });
  assert.not.ok(r.isError, r.output);
  assert.equal(
    listed(r).sort(),
    [
      '.gitignore',
      'a.ts',
      'keep.log',
      'src/.gitignore',
      'src/b.ts',
      'src/drop2.log',
      'src/only-root.txt',
    ].sort(),
  );

  const ts = await call(dir, 'glob', { pattern: '*.ts' });
  assert.equal(listed(ts).sort(), ['a.ts', 'src/b.ts']);
  const anchored = await call(dir, 'glob', { pattern: 'src/*.ts' });
  assert.equal(listed(anchored), ['src/b.ts']);

  // Starting inside the repository, the root's .gitignore still applies.
  tree(dir, { 'src/inner/x.log': 'x', 'src/inner/y.ts': 'y' });
  const inner = await call(join(dir, 'src', 'inner'), 'glob', { pattern: '*' });
  assert.equal(listed(inner), ['y.ts']);
});

test('glob: newest first, capped at 200 with a note, literal prefixes and absolute patterns', async () => {
  const dir = join(root, 'many');
  const files: Record<string, string> = {};
  for (let i = 0; i < 250; i++) files[`f${String(i).padStart(3, '0')}.txt`] = 'x';
  tree(dir, files);
  const now = Date.now() / 1000;
  utimesSync(join(dir, 'f007.txt'), now + 100, now + 100);
  utimesSync(join(dir, 'f003.txt'), now + 50, now + 50);
  const r = await call(dir, 'glob', { pattern: '*.txt' });
  const lines = listed(r);
  assert.is(lines.length, 200);
  assert.equal(lines.slice(0, 2), ['f007.txt', 'f003.txt']);
  assert.match(r.output, /\[200 of 250 files shown, newest first/);

  const abs = await call(root, 'glob', { pattern: `${dir}/f00{1,2}.txt` });
  assert.equal(listed(abs).sort(), ['many/f001.txt', 'many/f002.txt']);
  const none = await call(dir, 'glob', { pattern: '*.nothing' });
  assert.not.ok(none.isError);
  assert.match(none.output, /No files match/);
  const missing = await call(dir, 'glob', { pattern: '*', path: 'no-such-dir' });
  assert.ok(missing.isError);
});

test('grep: regex, case, context lines, sorted by file then line, files filter', async () => {
  const dir = tree(join(root, 'code'), {
    'b.ts': 'one\nfunction beta() {}\nthree\nfour\nfive\nsix\nfunction betaTwo() {}\n',
    'a.ts': 'function alpha() {}\nconst x = 1;\n',
    'c.md': 'function in markdown\n',
    'sub/d.ts': 'nothing here\nFUNCTION shouting()\n',
  });
  const r = await call(dir, 'grep', { pattern: 'function \\w+\\(', glob: '*.ts' });
  assert.not.ok(r.isError, r.output);
  assert.equal(listed(r), [
    'a.ts:1:function alpha() {}',
    'b.ts:2:function beta() {}',
    'b.ts:7:function betaTwo() {}',
  ]);
  assert.match(r.output, /\[3 matching lines in 2 files\]/);

  const ci = await call(dir, 'grep', {
    pattern: 'function \\w+\\(',
    case_insensitive: true,
    glob: 'sub/*.ts',
  });
  assert.equal(listed(ci), ['sub/d.ts:2:FUNCTION shouting()']);

  const ctxr = await call(dir, 'grep', { pattern: 'beta', path: 'b.ts', context_lines: 1 });
  assert.equal(listed(ctxr), [
    'b.ts-1-one',
    'b.ts:2:function beta() {}',
    'b.ts-3-three',
    '--',
    'b.ts-6-six',
    'b.ts:7:function betaTwo() {}',
  ]);

  const none = await call(dir, 'grep', { pattern: 'zebra' });
  assert.match(none.output, /^\(no matches\)/);
  const bad = await call(dir, 'grep', { pattern: '(unclosed' });
  assert.ok(bad.isError);
  assert.match(bad.output, /not a valid regular expression/);
  const uni = await call(dir, 'grep', { pattern: '\\p{Lu}{5,}' });
  assert.equal(listed(uni), ['sub/d.ts:2:FUNCTION shouting()']);
});

test('grep caps: max_results, long lines, binary and large files, files scanned', async () => {
  const long = `${'x'.repeat(2000)}NEEDLE${'y'.repeat(2000)}`;
  const dir = tree(join(root, 'caps'), {
    'many.txt': Array.from({ length: 50 }, (_, i) => `hit ${i}`).join('\n'),
    'long.txt': long,
    'bin.dat': Buffer.concat([Buffer.from('hit NEEDLE'), Buffer.from([0, 1, 2])]),
  });
  const r = await call(dir, 'grep', { pattern: 'hit', max_results: 10 });
  assert.is(listed(r).length, 10);
  assert.match(r.output, /stopped at 10 matches; there may be more/);

  const l = await call(dir, 'grep', { pattern: 'NEEDLE' });
  const line = listed(l);
  assert.is(line.length, 1, 'the binary file is skipped');
  assert.ok(line[0]!.includes('NEEDLE'), 'the cut keeps the match');
  assert.ok(line[0]!.length < 520, `line cut to ~500 chars: ${line[0]!.length}`);
  assert.match(l.output, /skipped files: 1 binary/);

  const base = {
    root: dir,
    flags: '',
    include: null,
    context: 0,
    maxResults: 100,
    maxLineChars: 500,
    timeMs: 10_000,
    skip: [],
  };
  const small = await runGrep(
    { ...base, pattern: 'hit', maxFiles: 100, maxFileBytes: 100 },
    new AbortController().signal,
  );
  assert.is(small.skippedLarge, 2, 'many.txt and long.txt are over 100 bytes');
  const few = await runGrep(
    { ...base, pattern: 'hit', maxFiles: 1, maxFileBytes: 1 << 20 },
    new AbortController().signal,
  );
  assert.is(few.stopped, 'files');
  assert.is(few.scanned, 1);
});

test('svc files are never searched', async () => {
  writeFileSync(paths.accessKey, 'SECRET-ACCESS-KEY');
  writeFileSync(join(paths.home, 'notes.md'), 'SECRET-ACCESS-KEY mentioned in a note');
  const r = await call(root, 'grep', { pattern: 'SECRET-ACCESS-KEY', path: paths.home });
  assert.equal(listed(r), ['svc-home/notes.md:1:SECRET-ACCESS-KEY mentioned in a note']);
  const direct = await call(root, 'grep', { pattern: 'SECRET', path: paths.accessKey });
  assert.match(direct.output, /no matches/);
});

test('a big tree does not block the event loop: the search runs on the pool', async () => {
  const dir = join(root, 'big');
  const body = Array.from(
    { length: 100 },
    (_, i) => `line ${i} with some words to scan through and no match here`,
  ).join('\n');
  const files: Record<string, string> = {};
  for (let d = 0; d < 40; d++)
    for (let f = 0; f < 50; f++)
      files[`d${d}/f${f}.txt`] = f === 49 && d === 39 ? `${body}\nfound the needle` : body;
  tree(dir, files);
  let ticks = 0;
  let last = Date.now();
  let maxGap = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks++;
  }, 5);
  const started = Date.now();
  // A pattern that costs something on every line of every file.
  const r = await runGrep(
    {
      root: dir,
      pattern: '\\w+\\s+\\w+\\s+needle',
      flags: '',
      include: null,
      context: 0,
      maxResults: 200,
      maxFiles: 50_000,
      maxLineChars: 500,
      maxFileBytes: 1 << 20,
      timeMs: 20_000,
      skip: [],
    },
    new AbortController().signal,
  );
  const took = Date.now() - started;
  clearInterval(timer);
  assert.is(r.scanned, 2000);
  assert.is(r.matches, 1);
  assert.ok(r.threadId > 0, 'ran on a worker thread');
  // Not a timing bound (a loaded machine stretches every gap): a search that held the event loop
  // would let no timer fire until it ended; on the pool, the timer keeps firing meanwhile.
  assert.ok(
    ticks >= 2,
    `timers kept firing during the search: ${ticks} ticks in ${took} ms (longest gap ${maxGap} ms)`,
  );
  const g = await runGlob(
    {
      root: dir,
      pattern: '*.txt',
      anchored: false,
      maxFiles: 50_000,
      maxResults: 5,
      timeMs: 20_000,
      skip: [],
    },
    new AbortController().signal,
  );
  assert.is(g.total, 2000);
  assert.is(g.files.length, 5);
});

test('a pathological pattern is stopped by its signal (the thread is ended) and the pool still works', async () => {
  const dir = tree(join(root, 'redos'), { 'x.txt': `${'a'.repeat(40)}!` });
  const task = {
    root: dir,
    pattern: '^(a+)+$',
    flags: '',
    include: null,
    context: 0,
    maxResults: 10,
    maxFiles: 10,
    maxLineChars: 500,
    maxFileBytes: 1 << 20,
    timeMs: 20_000,
    skip: [],
  };
  // Its own limit (timeMs) is far off: only the signal ends it this soon.
  const err = await rejection(runGrep(task, AbortSignal.timeout(300)), 'the signal aborts it');
  assert.match(String(err), /abort/i);
  const after = await runGrep({ ...task, pattern: 'a!' }, new AbortController().signal);
  assert.is(after.matches, 1);
});

test('an aborted turn stops a search', async () => {
  const ac = new AbortController();
  const p = registry.call(
    'grep',
    JSON.stringify({ pattern: 'x', path: join(root, 'big') }),
    ctx(root, ac.signal),
  );
  const interrupted = new Error('interrupted');
  ac.abort(interrupted);
  const err = await rejection(p, 'an interrupted turn rejects (not a tool result)');
  // The search thread was stopped for the turn's own reason.
  assert.instance(err, Error);
  assert.is((err as Error).name, 'AbortError', String(err));
  assert.is((err as Error).cause, interrupted);
});

test.run();
