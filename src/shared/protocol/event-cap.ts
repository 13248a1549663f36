import { isDelta, WS_EVENT_MAX_BYTES } from './event-names.js';

/**
 * Keeps `/ws` events small: summaries of long values (the longest texts cut first, marked with
 * `truncated: true`), and the cap every non-delta event is held to. Node-free and pure, so any
 * process (and a unit test) uses the same pieces.
 */

/** What a frame adds around `data`: `{"topic":…,"type":…,"seq":…,"data":…}` with a 16-digit seq. */
const ENVELOPE_BYTES = 64;
/** A cut text ends with this. */
const ELLIPSIS = '…';
/** Strings this short are never cut: ids (a provider's call id is about 30 characters), enums, times. */
const KEEP_SHORT = 64;

/** UTF-8 length of a string, without encoding it. */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

export function jsonBytes(v: unknown): number {
  return utf8Bytes(JSON.stringify(v) ?? '');
}

/** The size of the frame an event becomes. */
export function frameBytes(topic: string, type: string, data: unknown): number {
  return ENVELOPE_BYTES + utf8Bytes(topic) + utf8Bytes(type) + jsonBytes(data);
}

/** The first `chars` characters of a text (never half a surrogate pair), marked as cut. */
function cut(s: string, chars: number): string {
  let end = Math.max(0, Math.min(s.length, chars));
  const last = s.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end) + ELLIPSIS;
}

/**
 * How many characters of a text of `bytes` JSON bytes to keep to shed `excess` bytes: in
 * proportion (a text of multi-byte characters has fewer characters than bytes), by at least
 * an eighth so a few rounds always do.
 */
function keepChars(len: number, bytes: number, excess: number): number {
  const proportional = Math.floor((len * (bytes - excess)) / bytes) - 4;
  return Math.max(0, Math.min(proportional, len - Math.ceil(len / 8)));
}

/** A text cut to at most `maxBytes` of JSON, and whether it was. */
export function previewText(s: string, maxBytes: number): { text: string; truncated: boolean } {
  let size = jsonBytes(s);
  if (size <= maxBytes) return { text: s, truncated: false };
  let kept = s;
  let text = s;
  while (size > maxBytes && kept.length > 0) {
    kept = cut(kept, keepChars(kept.length, jsonBytes(kept), size - maxBytes)).slice(
      0,
      -ELLIPSIS.length,
    );
    text = kept + ELLIPSIS;
    size = jsonBytes(text);
  }
  return { text, truncated: true };
}

/** A copy of a JSON value with every text over `chars` characters cut to that, and every list over `items` to that many. */
function capped(v: unknown, chars: number, items: number): unknown {
  if (typeof v === 'string') return v.length > chars ? cut(v, chars) : v;
  if (Array.isArray(v))
    return (v.length > items ? v.slice(0, items) : v).map((x) => capped(x, chars, items));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = capped(x, chars, items);
    return out;
  }
  return v;
}

function longestText(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => Math.max(n, longestText(x)), 0);
  if (v !== null && typeof v === 'object')
    return Object.values(v).reduce((n: number, x) => Math.max(n, longestText(x)), 0);
  return 0;
}

function longestList(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => Math.max(n, longestList(x)), v.length);
  if (v !== null && typeof v === 'object')
    return Object.values(v).reduce((n: number, x) => Math.max(n, longestList(x)), 0);
  return 0;
}

/** The largest n in [lo, hi] for which `fits(n)`, given fits(lo); a binary search (a few dozen tries at most). */
function largest(lo: number, hi: number, fits: (n: number) => boolean): number {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * A copy of a JSON value whose serialised form is at most `maxBytes`: the longest texts are cut
 * first (all to one length, the longest that fits), then, when even short texts are too many,
 * lists lose their tails. Answers whether anything was cut. Costs a few dozen copies of the
 * value at most, whatever its size.
 */
export function shrinkToFit(
  value: unknown,
  maxBytes: number,
): { value: unknown; truncated: boolean } {
  if (jsonBytes(value) <= maxBytes) return { value, truncated: false };
  const fitsWith = (chars: number, items: number) =>
    jsonBytes(capped(value, chars, items)) <= maxBytes;
  const all = Number.MAX_SAFE_INTEGER;
  if (fitsWith(KEEP_SHORT, all)) {
    const chars = largest(KEEP_SHORT, longestText(value), (n) => fitsWith(n, all));
    return { value: capped(value, chars, all), truncated: true };
  }
  if (fitsWith(KEEP_SHORT, 1)) {
    const items = largest(1, longestList(value), (n) => fitsWith(KEEP_SHORT, n));
    return { value: capped(value, KEEP_SHORT, items), truncated: true };
  }
  return { value: keepScalars(capped(value, KEEP_SHORT, 0)), truncated: true };
}

/** The last resort: the top level's short scalar fields (ids, kinds, states). */
function keepScalars(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    if (typeof x !== 'object' && !(typeof x === 'string' && x.length > KEEP_SHORT)) out[k] = x;
  return out;
}

/**
 * An object cut to at most `maxBytes` of JSON, with `truncated: true` when anything was cut:
 * the shape stays (texts get shorter, long lists lose their tail).
 */
export function summarize<T extends object>(value: T, maxBytes: number): T & { truncated?: true } {
  const r = shrinkToFit(value, maxBytes - 20);
  if (!r.truncated) return value;
  return { ...(r.value as T), truncated: true };
}

/**
 * Holds an event to the cap: a non-delta event over WS_EVENT_MAX_BYTES is a bug in its
 * publisher (it should send a summary); it goes out cut, with `over` set so the caller logs it.
 */
export function capEvent(
  topic: string,
  type: string,
  data: unknown,
): { data: unknown; over: boolean; bytes: number } {
  if (isDelta(type)) return { data, over: false, bytes: 0 };
  const bytes = frameBytes(topic, type, data);
  if (bytes <= WS_EVENT_MAX_BYTES) return { data, over: false, bytes };
  const room = WS_EVENT_MAX_BYTES - frameBytes(topic, type, null) - 20;
  const r = shrinkToFit(data, room);
  const cutData =
    r.value !== null && typeof r.value === 'object' && !Array.isArray(r.value)
      ? { ...r.value, truncated: true }
      : r.value;
  return { data: cutData, over: true, bytes };
}

/** Budgets of the summaries events carry (each well under the cap with its envelope and ids). */
export const SUMMARY_BYTES = {
  /** A committed message, or the user message of turn.started. */
  message: 3000,
  /** A tool result's output, beside its message's summary. */
  toolOutput: 1200,
  toolMessage: 2000,
  /** A reply, arguments, an approval's input, a task, a goal. */
  text: 3000,
} as const;
