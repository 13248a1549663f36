import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRecording } from '../../src/shared/browser/recording.js';
import { parseConfig } from '../../src/shared/config/load.js';
import { parseSkillMd } from '../../src/shared/skills/format.js';
import { parseWorkflow } from '../../src/shared/workflows/format.js';
import { parseRules } from '../../src/workers/agent/permissions/rules.js';
import { loadSandboxRules } from '../../src/workers/agent/sandbox/policy.js';
import { docFiles, examplesIn, RUNNABLE, sourceFiles, type DocFile } from '../helpers/docs.js';
import { repoRoot } from '../helpers/server.js';

/*
 * The documentation points only at what exists: links, anchors, paths and names in the code,
 * and its file examples parse with svc's own schemas. Code comments point only at documents in
 * the repository. CONTRIBUTING.md ("Documentation") describes the conventions checked here.
 */

const docs = docFiles();

/** Text outside fenced blocks and inline code, so an example's `[x](y)` is not taken for a link. */
function prose(text: string): string {
  return text.replace(/^\s*```[\s\S]*?^\s*```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text: string): Set<string> {
  const withoutCode = text.replace(/^\s*```[\s\S]*?^\s*```/gm, '');
  const out = new Set<string>();
  for (const m of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) out.add(slug(m[1]!.trim()));
  return out;
}

/** Every relative link of a page that does not resolve, as "page: target (why)". */
function brokenLinks(file: DocFile): string[] {
  const bad: string[] = [];
  for (const m of prose(file.text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const full =
      path === '' ? join(repoRoot, file.path) : normalize(join(repoRoot, dirname(file.path), path));
    if (!full.startsWith(repoRoot)) bad.push(`${file.path}: ${target} (outside the repository)`);
    else if (!existsSync(full)) bad.push(`${file.path}: ${target} (no such file)`);
    else if (anchor !== undefined) {
      if (!full.endsWith('.md')) bad.push(`${file.path}: ${target} (an anchor into a non-page)`);
      else if (!anchorsOf(readFileSync(full, 'utf8')).has(anchor))
        bad.push(`${file.path}: ${target} (no heading #${anchor} there)`);
    }
  }
  return bad;
}

test('every relative link in README, CONTRIBUTING and docs/ points at a file (and heading) that exists', () => {
  assert.ok(docs.length >= 20, `the docs found: ${docs.map((d) => d.path).join(', ')}`);
  assert.equal(docs.flatMap(brokenLinks), []);
});

test('the link check itself finds a broken link and a broken anchor', () => {
  const page = {
    path: ['docs', 'made-up.md'].join('/'), // not spelt out: the comment check below would object
    text: '[a](running.md) [b](nowhere.md) [c](running.md#no-such-heading) `[d](gone.md)`',
  };
  assert.equal(brokenLinks(page), [
    `${page.path}: nowhere.md (no such file)`,
    `${page.path}: running.md#no-such-heading (no heading #no-such-heading there)`,
  ]);
});

const PATH_IN_CODE = /`((?:src|test|web|bench|docs|builtin|bin|\.ci)\/[\w./-]+)`/g;

test('every repository path the docs name in backticks exists', () => {
  const missing: string[] = [];
  for (const d of docs)
    for (const m of d.text.matchAll(PATH_IN_CODE))
      if (!existsSync(join(repoRoot, m[1]!))) missing.push(`${d.path}: ${m[1]}`);
  assert.equal(missing, []);
});

/** `name` (`path`): a function, class or method the docs name in a file, which must be there. */
const NAME_IN_FILE =
  /`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)(?:\(\))?`\s+\(`((?:src|test|web|bench)\/[\w./-]+\.(?:ts|tsx|mjs))`\)/g;

test('every `name` (`file`) the docs give occurs in that file', () => {
  const missing: string[] = [];
  let seen = 0;
  for (const d of docs)
    for (const m of d.text.matchAll(NAME_IN_FILE)) {
      seen++;
      const [name, file] = [m[1]!, m[2]!];
      const path = join(repoRoot, file);
      if (!existsSync(path)) continue; // reported by the path test
      const src = readFileSync(path, 'utf8');
      for (const part of name.split('.'))
        if (!new RegExp(`\\b${part.replace(/\$/g, '\\$')}\\b`).test(src))
          missing.push(`${d.path}: ${name} is not in ${file}`);
    }
  assert.ok(seen >= 20, `names checked: ${seen}`);
  assert.equal(missing, []);
});

/** What a marked file example must be: each kind parsed the way svc reads such a file. */
const checks: Record<string, (code: string) => string | undefined> = {
  'config.yml': (code) => {
    try {
      parseConfig(code, 'config.yml');
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  },
  'permissions.yml': (code) => {
    const rules = parseRules(code).problem;
    if (rules) return rules;
    const dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
    try {
      writeFileSync(join(dir, 'permissions.yml'), code);
      return loadSandboxRules(join(dir, 'permissions.yml'), '/home/me', '/home/me/.svc').problem;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  workflow: (code) => {
    const r = parseWorkflow(code);
    return r.ok ? undefined : JSON.stringify(r.error);
  },
  recording: (code) => {
    const r = parseRecording(code);
    return r.ok ? undefined : JSON.stringify(r.issues);
  },
  'SKILL.md': (code) => {
    const r = parseSkillMd(code);
    return r.ok ? undefined : r.why;
  },
};

test('every file example marked for a test parses with svc’s own schema', () => {
  const examples = docs.flatMap(examplesIn).filter((e) => !RUNNABLE.has(e.kind));
  const kinds = new Set(examples.map((e) => e.kind));
  for (const k of Object.keys(checks)) assert.ok(kinds.has(k), `an example of kind ${k}`);
  const bad: string[] = [];
  for (const e of examples) {
    const check = checks[e.kind];
    const problem = check
      ? check(e.code)
      : `unknown kind "${e.kind}" (known: ${Object.keys(checks).join(', ')})`;
    if (problem) bad.push(`${e.file}:${e.line} (${e.kind}): ${problem}`);
  }
  assert.equal(bad, []);
});

test('the README stays a page a newcomer reads: at most 250 lines', () => {
  const lines = docs.find((d) => d.path === 'README.md')!.text.split('\n').length;
  assert.ok(lines <= 250, `README.md has ${lines} lines`);
});

test('the pictures in docs/images are small enough for a page (under 200 KB each)', () => {
  const dir = join(repoRoot, 'docs', 'images');
  const sizes = readdirSync(dir).map((n) => [n, statSync(join(dir, n)).size] as const);
  assert.ok(sizes.length > 0);
  assert.equal(
    sizes.filter(([, size]) => size >= 200 * 1024),
    [],
  );
});

test('the example check refuses what svc would refuse', () => {
  assert.ok(checks['config.yml']!('limits:\n  json_body_byte: 5\n'), 'a misspelt key');
  assert.ok(checks['permissions.yml']!('terminal:\n  - allow: { comand: ls }\n'), 'a bad rule');
  assert.ok(
    checks['permissions.yml']!('sandbox:\n  write: [relative/path]\n'),
    'a bad sandbox path',
  );
  assert.ok(checks.workflow!('steps:\n  - id: a\n    needs: [b]\n    run: ls\n'), 'a missing step');
  assert.ok(checks['SKILL.md']!('no frontmatter'), 'no frontmatter');
});

/**
 * What a comment may not point at: the design notes and the service spec live outside this
 * repository (a reader of the code cannot open them). Built from parts so this file passes itself.
 */
const OUTSIDE = new RegExp(['DESIGN(?:\\.md)?\\s*§', 'DESIGN\\.md', '\\bspec\\s*§'].join('|'));
const DOC_REF = /\b((?:docs\/[\w/.-]+|README|CONTRIBUTING)\.md)(?:#([\w-]+))?/g;

test('no comment in src, test, web or bench points at a document that does not exist', () => {
  const bad: string[] = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    text.split('\n').forEach((line, i) => {
      if (OUTSIDE.test(line)) bad.push(`${file}:${i + 1}: ${line.trim()}`);
      for (const m of line.matchAll(DOC_REF)) {
        const doc = join(repoRoot, m[1]!);
        if (!existsSync(doc)) bad.push(`${file}:${i + 1}: ${m[0]} does not exist`);
        else if (m[2] && !anchorsOf(readFileSync(doc, 'utf8')).has(m[2]))
          bad.push(`${file}:${i + 1}: ${m[0]} names no heading there`);
      }
    });
  }
  assert.equal(bad, []);
});

test.run();
