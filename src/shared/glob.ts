/**
 * The one glob grammar svc has, as RegExp source: permission rules, the glob and grep tools and
 * .gitignore all read patterns through it, so `**` means the same everywhere.
 *
 * - `*` and `?` stay within one path segment; `[...]` is a class (`[!...]` or `[^...]` negated).
 * - `**` spans folders: `**\/` is any number of folders (none included), and `**` inside a name
 *   (`src/**.ts`) spans folders too, rather than quietly acting as `*`.
 * - A trailing `/**` is everything below the folder; with `folderItself` also the folder, as a
 *   permission rule needs (removing a folder touches everything in it).
 * - `{a,b}` picks one alternative (nested braces work); `\` escapes the next character.
 */
export interface GlobOptions {
  /** `{a,b}` alternatives (not in .gitignore, whose braces are literal). */
  braces?: boolean;
  /** A trailing `/**` also matches the folder itself. */
  folderItself?: boolean;
}

export function globSource(pattern: string, opts: GlobOptions = {}): string {
  const braces = opts.braces ?? false;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] !== '*') {
        out += '[^/]*';
        continue;
      }
      let end = i + 1;
      while (pattern[end + 1] === '*') end++;
      const atStart = i === 0 || pattern[i - 1] === '/';
      const next = pattern[end + 1];
      i = end;
      if (atStart && next === '/') {
        out += '(?:[^/]*/)*'; // `**/`: any number of folders, none included
        i += 1;
      } else if (
        atStart &&
        next === undefined &&
        opts.folderItself === true &&
        out.endsWith('\\/')
      ) {
        out = `${out.slice(0, -2)}(?:/.*)?`; // `x/**`: x and everything below
      } else {
        out += '.*';
      }
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = classEnd(pattern, i);
      if (end === -1) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${classBody(body)}]`;
      i = end;
    } else if (c === '\\' && i + 1 < pattern.length) {
      out += escapeChar(pattern[++i]!);
    } else if (c === '{' && braces) {
      const end = braceEnd(pattern, i);
      if (end === -1) {
        out += '\\{';
        continue;
      }
      out += `(?:${splitTop(pattern.slice(i + 1, end))
        .map((alt) => globSource(alt, { ...opts, folderItself: false }))
        .join('|')})`;
      i = end;
    } else {
      out += escapeChar(c);
    }
  }
  return out;
}

/** True when a path segment has no glob syntax at all (it names one thing literally). */
export function isLiteralSegment(segment: string): boolean {
  return !/[*?[\]{}\\]/.test(segment);
}

const SPECIAL = /[.+^$()|{}[\]\\/?*]/;

function escapeChar(c: string): string {
  return SPECIAL.test(c) ? `\\${c}` : c;
}

/** A class body for RegExp: glob escapes kept, characters special inside a RegExp class escaped. */
function classBody(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    let c = body[i]!;
    if (c === '\\' && i + 1 < body.length) c = body[++i]!;
    out += /[\\\]\[^]/.test(c) ? `\\${c}` : c;
  }
  return out;
}

/** Index of the `]` closing a class opened at `start` (a `]` right after `[` or `[!` is literal). */
function classEnd(p: string, start: number): number {
  let i = start + 1;
  if (p[i] === '!' || p[i] === '^') i++;
  if (p[i] === ']') i++;
  for (; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === '/') return -1;
    else if (p[i] === ']') return i;
  }
  return -1;
}

function braceEnd(p: string, start: number): number {
  let depth = 0;
  for (let i = start; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === '{') depth++;
    else if (p[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Splits `a,b{c,d},e` at the commas that are not inside nested braces. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '{') depth++;
    else if (s[i] === '}') depth--;
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(s.slice(from));
  return parts;
}
