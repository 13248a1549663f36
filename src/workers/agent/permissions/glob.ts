import { posix } from 'node:path';
import { globSource } from '../../../shared/glob.js';
import { safeRegex } from './safe-regex.js';

/** Path and host matching for rules. Pure string work: no file system access. */

export interface Places {
  home: string;
  svcHome: string;
  /** The session's working folder; null when it has none (then `$CWD` patterns match nothing). */
  cwd: string | null;
}

/** `~`, `~/x`, relative or absolute → an absolute normalised path (relative to `base`). */
export function resolvePath(p: string, base: string, home: string): string {
  let s = p;
  if (s === '~') s = home;
  else if (s.startsWith('~/')) s = home + s.slice(1);
  const abs = posix.resolve(base, s);
  return abs.length > 1 ? abs.replace(/\/+$/, '') : abs;
}

/** A shell word, already expanded (a `~` left in it is a file named ~), made absolute against `base`. */
export function resolveArg(word: string, base: string): string {
  const abs = posix.resolve(base, word);
  return abs.length > 1 ? abs.replace(/\/+$/, '') : abs;
}

export function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent === '/' ? '/' : parent + '/');
}

type Matcher = { test(text: string): boolean };
const regexCache = new Map<string, Matcher>();

/**
 * A rule's glob (src/shared/glob.ts) over absolute paths, with `{a,b}` and a trailing `/**` that
 * also matches the folder itself. Dot files are not special: a deny for `**\/.env` must not miss them.
 */
export function globToRegExp(glob: string): Matcher {
  const cached = regexCache.get(glob);
  if (cached) return cached;
  // RE2: a rule's glob against a path the model wrote runs in linear time.
  const out = safeRegex(`^${globSource(glob, { braces: true, folderItself: true })}$`, 's');
  if (regexCache.size < 5000) regexCache.set(glob, out);
  return out;
}

type GlobToken =
  | { kind: 'char'; c: string }
  | { kind: 'one' }
  | { kind: 'star' }
  | { kind: 'globstar' }
  | { kind: 'class'; negate: boolean; body: string };

/**
 * Whether a path the model wrote, as a shell glob (`*`, `?`, `[…]`), matches `text`. Runs the
 * glob as a set of states over the text (no backtracking): time is length × length whatever the glob.
 */
export function globMatches(glob: string, text: string): boolean {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      let k = i;
      while (glob[k + 1] === '*') k++;
      tokens.push({ kind: k > i ? 'globstar' : 'star' });
      i = k;
    } else if (c === '?') tokens.push({ kind: 'one' });
    else if (c === '[' && glob.indexOf(']', i + 2) > 0) {
      const end = glob.indexOf(']', i + 2);
      const raw = glob.slice(i + 1, end);
      tokens.push({
        kind: 'class',
        negate: raw[0] === '!' || raw[0] === '^',
        body: raw.replace(/^[!^]/, ''),
      });
      i = end;
    } else tokens.push({ kind: 'char', c });
  }
  const inClass = (t: { negate: boolean; body: string }, ch: string): boolean => {
    let hit = false;
    for (let k = 0; k < t.body.length; k++) {
      if (t.body[k + 1] === '-' && k + 2 < t.body.length) {
        if (ch >= t.body[k]! && ch <= t.body[k + 2]!) hit = true;
        k += 2;
      } else if (t.body[k] === ch) hit = true;
    }
    return hit !== t.negate && ch !== '/';
  };
  let states = new Uint8Array(tokens.length + 1);
  const close = (set: Uint8Array) => {
    for (let k = 0; k < tokens.length; k++)
      if (set[k] && (tokens[k]!.kind === 'star' || tokens[k]!.kind === 'globstar')) set[k + 1] = 1;
  };
  states[0] = 1;
  close(states);
  for (const ch of text) {
    const next = new Uint8Array(tokens.length + 1);
    let any = false;
    for (let k = 0; k < tokens.length; k++) {
      if (!states[k]) continue;
      const t = tokens[k]!;
      if ((t.kind === 'star' && ch !== '/') || t.kind === 'globstar') next[k] = 1;
      else if (
        (t.kind === 'char' && t.c === ch) ||
        (t.kind === 'one' && ch !== '/') ||
        (t.kind === 'class' && inClass(t, ch))
      )
        next[k + 1] = 1;
      else continue;
      any = true;
    }
    if (!any) return false;
    close(next);
    states = next;
  }
  return states[tokens.length] === 1;
}

/**
 * Expands a path pattern to an absolute glob: `~`, `$HOME`, `$SVC_HOME`, `$CWD` (also `${…}`);
 * a pattern starting with `**` matches anywhere; another relative one is under `$CWD`.
 * Returns null when it needs a working folder the session does not have.
 */
export function expandPattern(pattern: string, places: Places): string | null {
  let missing = false;
  let p = pattern.replace(/\$\{?(HOME|SVC_HOME|CWD)\}?/g, (_m, name: string) => {
    if (name === 'HOME') return places.home;
    if (name === 'SVC_HOME') return places.svcHome;
    if (places.cwd === null) missing = true;
    return places.cwd ?? '';
  });
  if (missing) return null;
  if (p === '~' || p.startsWith('~/')) p = places.home + p.slice(1);
  if (p.startsWith('**')) return '/' + p;
  if (!p.startsWith('/')) {
    if (places.cwd === null) return null;
    p = `${places.cwd}/${p}`;
  }
  return p.replace(/\/{2,}/g, '/');
}

const expanded = new WeakMap<Places, Map<string, Matcher | null>>();

/** The matcher for a pattern in these places, cached per Places object (a long line tests many paths). */
function compiled(pattern: string, places: Places): Matcher | null {
  let cache = expanded.get(places);
  if (!cache) expanded.set(places, (cache = new Map()));
  let re = cache.get(pattern);
  if (re === undefined) {
    const glob = expandPattern(pattern, places);
    re = glob === null ? null : globToRegExp(glob);
    cache.set(pattern, re);
  }
  return re;
}

/** Whether an absolute path matches a glob list; entries starting with `!` exclude. */
export function pathMatches(list: readonly string[], abs: string, places: Places): boolean {
  let hit = false;
  for (const entry of list) {
    const negate = entry.startsWith('!');
    const re = compiled(negate ? entry.slice(1) : entry, places);
    if (re === null || !re.test(abs)) continue;
    if (negate) return false;
    hit = true;
  }
  return hit;
}

/** The lower-case host of a URL (https:// assumed when there is no scheme), or null. */
export function hostOf(url: string): string | null {
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`);
    const h = u.hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
    return h.length > 0 ? h : null;
  } catch {
    return null;
  }
}

/** `*.example.com` matches any subdomain (not example.com itself); another `*` stays within a label. */
export function hostMatches(glob: string, host: string): boolean {
  const g = glob.toLowerCase().replace(/\.$/, '');
  if (g === '*') return true;
  let re = '';
  let rest = g;
  if (rest.startsWith('*.')) {
    re = '(?:[^.]+\\.)+';
    rest = rest.slice(2);
  }
  re += rest
    .split('*')
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^.]*');
  return safeRegex(`^${re}$`).test(host);
}
