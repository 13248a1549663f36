import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { globToRegExp } from './glob-pattern.js';

/**
 * The common subset of .gitignore: comments, `!` negation, trailing `/` for folders only, a
 * `/` anywhere but the end anchoring the pattern to its file's folder (else it matches a name
 * at any depth), `*`, `?`, `[...]` and `**`. The last matching rule wins, deeper files after
 * shallower ones, as in git; an ignored folder is not entered, so nothing inside it comes back.
 */
interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
  /** No slash in the pattern: it is tested against the entry's name alone. */
  nameOnly: boolean;
}

export interface IgnoreLayer {
  /** The folder the rules are relative to, ending in a separator. */
  base: string;
  rules: Rule[];
}

export function parseGitignore(text: string): Rule[] {
  const rules: Rule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    line = line.replace(/(?<!\\)[ \t]+$/, ''); // trailing blanks go unless escaped
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const dirOnly = line.endsWith('/');
    if (dirOnly) line = line.replace(/\/+$/, '');
    const nameOnly = !line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    try {
      rules.push({ re: globToRegExp(line), negate, dirOnly, nameOnly });
    } catch {
      // a pattern git would also make nothing of
    }
  }
  return rules;
}

/** The rules of `file` for entries under `dir`, or null when it cannot be read. */
export function loadIgnoreFile(dir: string, file: string): IgnoreLayer | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const rules = parseGitignore(text);
  return rules.length > 0 ? { base: dir.endsWith(sep) ? dir : dir + sep, rules } : null;
}

export function loadGitignore(dir: string): IgnoreLayer | null {
  return loadIgnoreFile(dir, join(dir, '.gitignore'));
}

/** Whether an absolute path is ignored by the layers (root first) that apply to its folder. */
export function isIgnored(
  layers: readonly IgnoreLayer[],
  abs: string,
  name: string,
  isDir: boolean,
): boolean {
  let ignored = false;
  for (const layer of layers) {
    if (!abs.startsWith(layer.base)) continue;
    const rel =
      sep === '/'
        ? abs.slice(layer.base.length)
        : abs.slice(layer.base.length).split(sep).join('/');
    for (const rule of layer.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.negate === ignored && rule.re.test(rule.nameOnly ? name : rel))
        ignored = !rule.negate;
    }
  }
  return ignored;
}
