import { readFileSync, statSync } from 'node:fs';
import { basename, relative, sep } from 'node:path';
import { threadId } from 'node:worker_threads';
import { looksBinary } from '../files/binary.js';
import { globToRegExp } from './glob-pattern.js';
import {
  searchTaskSchema,
  type GlobResult,
  type GlobTask,
  type GrepLine,
  type GrepResult,
  type GrepTask,
} from './search-types.js';
import { walkFiles, type WalkStats } from './walk.js';
import { looksLikePrivateKey } from '../files/private-key.js';

/** Runs on the search pool's threads (piscina): the walking and matching that would block the loop. */
export default function search(raw: unknown): GlobResult | GrepResult {
  const task = searchTaskSchema.parse(raw);
  return task.op === 'glob' ? glob(task) : grep(task);
}

/** Tests a file against a glob: by name alone, or (anchored) by its path below root. */
function fileFilter(root: string, pattern: string, anchored: boolean): (abs: string) => boolean {
  const re = globToRegExp(pattern, { braces: true });
  return (abs) => re.test(anchored ? posixRel(root, abs) : basename(abs));
}

function posixRel(root: string, abs: string): string {
  const rel = relative(root, abs);
  return sep === '/' ? rel : rel.split(sep).join('/');
}

function glob(task: GlobTask): GlobResult {
  const stats: WalkStats = { scanned: 0, stopped: null };
  const matches = fileFilter(task.root, task.pattern, task.anchored);
  const found: Array<{ path: string; mtimeMs: number }> = [];
  for (const abs of walkFiles(
    task.root,
    { maxFiles: task.maxFiles, deadline: Date.now() + task.timeMs, skip: new Set(task.skip) },
    stats,
  )) {
    if (!matches(abs)) continue;
    try {
      found.push({ path: abs, mtimeMs: statSync(abs).mtimeMs });
    } catch {
      // gone since the folder was listed
    }
  }
  found.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
  return {
    op: 'glob',
    scanned: stats.scanned,
    stopped: stats.stopped,
    threadId,
    files: found.slice(0, task.maxResults),
    total: found.length,
  };
}

function grep(task: GrepTask): GrepResult {
  const stats: WalkStats = { scanned: 0, stopped: null };
  const line = new RegExp(task.pattern, task.flags);
  // Whole-file pre-check ('m' so ^ and $ still mean line starts and ends): most files do not match.
  const whole = new RegExp(task.pattern, task.flags.includes('m') ? task.flags : `${task.flags}m`);
  const include =
    task.include === null ? null : fileFilter(task.root, task.include, task.include.includes('/'));
  const out: GrepResult = {
    op: 'grep',
    scanned: 0,
    stopped: null,
    threadId,
    files: [],
    matches: 0,
    capped: false,
    skippedBinary: 0,
    skippedLarge: 0,
  };
  for (const abs of walkFiles(
    task.root,
    { maxFiles: task.maxFiles, deadline: Date.now() + task.timeMs, skip: new Set(task.skip) },
    stats,
  )) {
    if (include && !include(abs)) continue;
    let buf: Buffer;
    try {
      if (statSync(abs).size > task.maxFileBytes) {
        out.skippedLarge++;
        continue;
      }
      buf = readFileSync(abs);
    } catch {
      continue;
    }
    if (looksBinary(buf)) {
      out.skippedBinary++;
      continue;
    }
    const text = buf.toString('utf8');
    if (looksLikePrivateKey(text)) continue; // read_file refuses keys; a search does not show them either
    if (!whole.test(text)) continue;
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop(); // a final newline does not start another line
    const hits: number[] = [];
    for (let i = 0; i < lines.length && out.matches + hits.length < task.maxResults; i++) {
      if (line.test(lines[i]!)) hits.push(i);
    }
    if (hits.length === 0) continue;
    out.matches += hits.length;
    out.files.push({
      path: abs,
      lines: withContext(lines, hits, task.context, line, task.maxLineChars),
    });
    if (out.matches >= task.maxResults) {
      out.capped = true;
      break;
    }
  }
  out.scanned = stats.scanned;
  out.stopped = out.capped ? null : stats.stopped;
  return out;
}

/** The matching lines and `context` lines around each, overlaps merged, in order. */
function withContext(
  lines: string[],
  hits: number[],
  context: number,
  re: RegExp,
  maxChars: number,
): GrepLine[] {
  const isHit = new Set(hits);
  const out: GrepLine[] = [];
  let next = 0; // first line not yet emitted
  for (const h of hits) {
    const from = Math.max(next, h - context);
    const to = Math.min(lines.length - 1, h + context);
    for (let i = from; i <= to; i++) {
      const match = isHit.has(i);
      out.push({
        n: i + 1,
        text: clip(lines[i]!.replace(/\r$/, ''), match ? re : null, maxChars),
        match,
      });
    }
    next = Math.max(next, to + 1);
  }
  return out;
}

/** A long line cut to maxChars, around the match when there is one. */
function clip(text: string, re: RegExp | null, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const at = re ? Math.max(0, re.exec(text)?.index ?? 0) : 0;
  const start = Math.max(0, Math.min(at - Math.floor(maxChars / 5), text.length - maxChars));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + maxChars)}${start + maxChars < text.length ? '…' : ''}`;
}
