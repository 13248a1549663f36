import { closeSync, mkdirSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../../../shared/atomic-write.js';
import { defineTool, type Tool } from '../registry.js';

export const INDEX_FILE = 'MEMORY.md';
const MAX_CONTENT = 64 * 1024;
const MAX_FILES = 500;
/** How much of each file a search reads. */
const SEARCH_READ = 256 * 1024;
const SEARCH_OUTPUT = 20_000;

// Lower-case kebab: safe as a file name everywhere, and never MEMORY.md on a case-insensitive disk.
const slug = z
  .string()
  .regex(
    /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
    'use lower-case letters, digits and single hyphens, e.g. "build-setup"',
  )
  .max(64)
  .refine((s) => s !== 'memory', '"memory" is reserved for the index');

function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

function readText(file: string, max: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Memory files (slugs), without the index. */
function memoryNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.md') && n !== INDEX_FILE).map((n) => n.slice(0, -3));
}

/** A one-line description: the given one, or the note's first line without Markdown heading marks. */
function describe(content: string, given: string | undefined): string {
  const text = given ?? content.split('\n').find((l) => l.trim().length > 0) ?? '';
  return text
    .replace(/^#+\s*/, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 150);
}

/**
 * Puts `- [name](name.md) — description` in the index, replacing the line that links the same
 * file; every other line (headings, rules the user wrote) stays as it is.
 */
export function indexWith(index: string, name: string, description: string): string {
  const entry = `- [${name}](${name}.md)${description ? ` — ${description}` : ''}`;
  const lines = index.length > 0 ? index.replace(/\n+$/, '').split('\n') : ['# Memory', ''];
  const at = lines.findIndex((l) => l.includes(`](${name}.md)`));
  if (at >= 0) lines[at] = entry;
  else lines.push(entry);
  return `${lines.join('\n')}\n`;
}

function memoryWriteTool(): Tool {
  return defineTool({
    name: 'memory_write',
    purpose: "Saves a note to svc's memory, which the agent reads in later chats.",
    description:
      'Saves a durable note (Markdown) as memory/<name>.md, replacing a note of the same name, and lists it in the memory index MEMORY.md with its description. ' +
      "Use it for facts worth keeping across sessions: the user's preferences, decisions, how a project is set up.",
    args: z
      .object({
        name: slug.describe('kebab-case, e.g. "deploy-steps"'),
        content: z.string().min(1).max(MAX_CONTENT, `at most ${MAX_CONTENT} characters`),
        description: z
          .string()
          .max(300)
          .optional()
          .describe('One line for the index; defaults to the first line of content.'),
      })
      .strict(),
    run: ({ name, content, description }, ctx) => {
      const dir = ctx.paths.memoryDir;
      ensureDir(dir);
      const file = join(dir, `${name}.md`);
      const names = memoryNames(dir);
      if (!names.includes(name) && names.length >= MAX_FILES)
        return {
          output: `There are already ${MAX_FILES} memory files; update or merge existing ones instead.`,
          isError: true,
        };
      const indexFile = join(dir, INDEX_FILE);
      const index = readText(indexFile, 1024 * 1024) ?? '';
      const existing = index.split('\n').find((l) => l.includes(`](${name}.md)`));
      const keptDescription =
        description === undefined && existing ? /\)\s+—\s+(.*)$/.exec(existing)?.[1] : undefined;
      writeFileAtomic(file, content.endsWith('\n') ? content : `${content}\n`);
      writeFileAtomic(
        indexFile,
        indexWith(index, name, describe(content, description ?? keptDescription)),
      );
      const count = memoryNames(dir).length;
      return {
        output: `Saved memory ${name} (${Buffer.byteLength(content)} bytes) to ${file}; MEMORY.md lists ${count} ${count === 1 ? 'memory' : 'memories'}.`,
        wrote: [file],
      };
    },
  });
}

interface Hit {
  name: string;
  terms: number;
  count: number;
  snippets: string[];
}

function searchFile(name: string, text: string, terms: string[]): Hit | undefined {
  const lower = text.toLowerCase();
  let matched = 0;
  let count = 0;
  for (const t of terms) {
    let n = 0;
    for (let i = lower.indexOf(t); i >= 0; i = lower.indexOf(t, i + t.length)) n++;
    if (name.includes(t)) n += 2; // a term in the note's name says more than one in its text
    if (n > 0) matched++;
    count += n;
  }
  if (matched === 0) return undefined;
  const lines = text.split('\n');
  const scored = lines
    .map((l, i) => ({ i, score: terms.filter((t) => l.toLowerCase().includes(t)).length }))
    .filter((l) => l.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, 3)
    .sort((a, b) => a.i - b.i);
  const snippets = scored.map(({ i }) => `  ${i + 1}: ${lines[i]!.trim().slice(0, 240)}`);
  return { name, terms: matched, count, snippets };
}

function memorySearchTool(): Tool {
  return defineTool({
    name: 'memory_search',
    purpose: "Looks through svc's saved memory notes.",
    description:
      'Searches the memory notes (memory/*.md and the MEMORY.md index) for the words of query, case-insensitively; best matches first, with matching lines.',
    args: z
      .object({
        query: z.string().trim().min(1).max(500),
        max_results: z.number().int().min(1).max(50).optional().describe('Default 10.'),
      })
      .strict(),
    run: ({ query, max_results }, ctx) => {
      const terms = [
        ...new Set(
          query
            .toLowerCase()
            .split(/\s+/)
            .filter((t) => t.length > 0),
        ),
      ].slice(0, 20);
      const dir = ctx.paths.memoryDir;
      const files = [INDEX_FILE.slice(0, -3), ...memoryNames(dir).slice(0, 2000)];
      const hits: Hit[] = [];
      for (const name of files) {
        const file = join(dir, `${name}.md`);
        try {
          if (!statSync(file).isFile()) continue;
        } catch {
          continue;
        }
        const text = readText(file, SEARCH_READ);
        const hit = text === undefined ? undefined : searchFile(name, text, terms);
        if (hit) hits.push(hit);
      }
      if (hits.length === 0) return { output: `No memory matches "${query}".` };
      hits.sort((a, b) => b.terms - a.terms || b.count - a.count || a.name.localeCompare(b.name));
      const shown = hits.slice(0, max_results ?? 10);
      let out = `${hits.length} ${hits.length === 1 ? 'note matches' : 'notes match'}${hits.length > shown.length ? ` (showing ${shown.length})` : ''}:\n`;
      for (const h of shown) {
        const block = `\n${h.name}.md (${h.terms}/${terms.length} terms, ${h.count} matches)\n${h.snippets.join('\n')}\n`;
        if (out.length + block.length > SEARCH_OUTPUT) {
          out += '\n[… more results cut; narrow the query …]\n';
          break;
        }
        out += block;
      }
      return { output: out.trimEnd() };
    },
  });
}

/** memory_write and memory_search over $SVC_HOME/memory/. */
export function memoryTools(): Tool[] {
  return [memoryWriteTool(), memorySearchTool()];
}
