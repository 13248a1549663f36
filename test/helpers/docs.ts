import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './server.js';

/**
 * The documentation as the docs tests read it: README.md, then docs/ (pages in name order, then
 * its folders), then CONTRIBUTING.md, and the examples marked to be checked. A marker is an HTML
 * comment on the line before a fenced block: `<!-- test -->` runs a shell example, `<!-- test:
 * node -->` a JavaScript one and `<!-- test: ts -->` a TypeScript one against a real server
 * (test/e2e/docs-examples); `<!-- test: config.yml -->` and the other kinds parse the block with
 * svc's own schema (test/unit/docs-links).
 */

export interface DocFile {
  /** Relative to the repository root, with forward slashes. */
  path: string;
  text: string;
}

function pagesIn(dir: string): string[] {
  const entries = readdirSync(join(repoRoot, dir)).sort();
  const files = entries.filter((n) => n.endsWith('.md')).map((n) => `${dir}/${n}`);
  const dirs = entries.filter((n) => statSync(join(repoRoot, dir, n)).isDirectory());
  return [...files, ...dirs.flatMap((d) => pagesIn(`${dir}/${d}`))];
}

export function docFiles(): DocFile[] {
  return ['README.md', ...pagesIn('docs'), 'CONTRIBUTING.md'].map((path) => ({
    path,
    text: readFileSync(join(repoRoot, path), 'utf8'),
  }));
}

/** Kinds of example run against a real server (test/e2e/docs-examples); the others are parsed. */
export const RUNNABLE: ReadonlySet<string> = new Set(['sh', 'node', 'ts']);

export interface Example {
  file: string;
  /** 1-based line of the block's first line of code. */
  line: number;
  /** `sh`, `node` (an ES module) or `ts` (compiled with tsc, then run); else a kind of file. */
  kind: string;
  code: string;
}

const MARKER = /^(\s*)<!-- test(?::\s*([\w.-]+))? -->\s*$/;

/** Every marked block of a file; a marker not followed by a fenced block is an error. */
export function examplesIn(file: DocFile): Example[] {
  const lines = file.text.split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!);
    if (!m) continue;
    const indent = m[1] ?? '';
    const fence = lines[i + 1] ?? '';
    if (!fence.startsWith(`${indent}\`\`\``))
      throw new Error(`${file.path}:${i + 1}: a test marker must be followed by a fenced block`);
    const end = lines.findIndex((l, k) => k > i + 1 && l.trimEnd() === `${indent}\`\`\``);
    if (end < 0) throw new Error(`${file.path}:${i + 2}: the fenced block is never closed`);
    out.push({
      file: file.path,
      line: i + 3,
      kind: m[2] ?? 'sh',
      code: lines
        .slice(i + 2, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n'),
    });
    i = end;
  }
  return out;
}

/** Source files whose comments may point at documents (no build output, no dependencies). */
export function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|tsx|mjs|js|css|html)$/.test(name)) out.push(relative(repoRoot, full));
    }
  };
  for (const d of ['src', 'test', 'web', 'bench', 'bin']) walk(join(repoRoot, d));
  return out;
}
