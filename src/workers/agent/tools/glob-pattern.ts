/**
 * Glob patterns as regular expressions, for the glob tool, grep's file filter and .gitignore:
 * `*` and `?` stay within one path segment, `**` spans segments (`**\/x`, `x/**`, `a/**\/b`),
 * `[...]` is a character class (`[!...]` negated), `\` escapes, and (tools only) `{a,b}`
 * picks one of several alternatives.
 */
export function globToRegExp(pattern: string, opts: { braces?: boolean; flags?: string } = {}): RegExp {
  return new RegExp(`^${translate(pattern, opts.braces ?? false)}$`, opts.flags ?? '');
}

/** True when a path segment has no glob syntax at all (it names one thing literally). */
export function isLiteralSegment(segment: string): boolean {
  return !/[*?[\]{}\\]/.test(segment);
}

const SPECIAL = /[.+^$()|{}[\]\\/?*]/;

function translate(p: string, braces: boolean): string {
  let out = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        const next = p[i + 2];
        if (atStart && next === '/') {
          out += '(?:.*/)?'; // `**/`: any number of folders, none included
          i += 2;
          continue;
        }
        if (atStart && next === undefined) {
          out += '.*'; // trailing `**`: everything below
          i += 1;
          continue;
        }
        i += 1; // `**` elsewhere acts like `*`
      }
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const end = classEnd(p, i);
      if (end === -1) {
        out += '\\[';
        continue;
      }
      let body = p.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      out += `[${negate ? '^' : ''}${classBody(body)}]`;
      i = end;
    } else if (c === '\\' && i + 1 < p.length) {
      out += escapeChar(p[++i]!);
    } else if (c === '{' && braces) {
      const end = braceEnd(p, i);
      if (end === -1) {
        out += '\\{';
        continue;
      }
      out += `(?:${splitTop(p.slice(i + 1, end)).map((alt) => translate(alt, true)).join('|')})`;
      i = end;
    } else {
      out += escapeChar(c);
    }
  }
  return out;
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

function escapeChar(c: string): string {
  return SPECIAL.test(c) ? `\\${c}` : c;
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
