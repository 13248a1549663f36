import { RE2 } from 're2-wasm';

/**
 * Regular expressions with text the model wrote (a pkill pattern, a path it named) run here on
 * RE2, which takes linear time: no input can freeze the engine by backtracking.
 */

const cache = new Map<string, RE2 | null>();
/** RE2 objects live in WASM memory that is never freed: the cache is bounded instead of cleared. */
const MAX_CACHED = 2000;

function compile(source: string, flags: string): RE2 | null {
  const key = `${flags}/${source}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let re: RE2 | null;
  try {
    re = new RE2(source, `${flags}u`);
  } catch {
    re = null;
  }
  if (cache.size < MAX_CACHED) cache.set(key, re);
  return re;
}

/** Whether `text` matches; null when RE2 cannot read the pattern (backreferences, lookaround, …). */
export function safeTest(source: string, flags: string, text: string): boolean | null {
  const re = compile(source, flags);
  return re === null ? null : re.test(text);
}

/** A compiled matcher for a trusted pattern (the user's rules) that still runs in linear time. */
export function safeRegex(source: string, flags = ''): { test(text: string): boolean } {
  const re = compile(source, flags);
  return re ?? { test: () => false };
}
