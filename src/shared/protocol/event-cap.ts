import { isDelta, WS_EVENT_MAX_BYTES } from './events.js';

/**
 * Keeps `/ws` events small: summaries of long values (the longest texts cut first, marked with
 * `truncated: true`), and the cap every non-delta event is held to. Node-free and pure, so any
 * process (and a unit test) uses the same pieces.
 */

/** What a frame adds around `data`: `{"topic":…,"type":…,"seq":…,"data":…}` with a 16-digit seq. */
const ENVELOPE_BYTES = 64;
/** A cut text ends with this. */
const ELLIPSIS = '…';
/** Strings this short are never cut (ids, enums, times). */
const KEEP_SHORT = 24;

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

/** A text cut to at most `maxBytes` of JSON, and whether it was. */
export function previewText(s: string, maxBytes: number): { text: string; truncated: boolean } {
  let size = jsonBytes(s);
  if (size <= maxBytes) return { text: s, truncated: false };
  let text = s;
  while (size > maxBytes && text.length > 0) {
    // Each character is at least one byte of JSON: dropping `excess` characters (plus the
    // ellipsis) gets at least that close; a text of multi-byte characters takes a few rounds.
    text = cut(text.endsWith(ELLIPSIS) ? text.slice(0, -1) : text, text.length - (size - maxBytes) - 4);
    size = jsonBytes(text);
  }
  return { text, truncated: true };
}

type Holder = Record<string, unknown> | unknown[];

/** The place (holder and key) of the value under `box.root` that `measure` finds largest. */
function largest(box: { root: unknown }, measure: (v: unknown) => number): { holder: Holder; key: string | number; len: number } | undefined {
  let best: { holder: Holder; key: string | number; len: number } | undefined;
  const walk = (holder: Holder, key: string | number, v: unknown) => {
    const len = measure(v);
    if (len > (best?.len ?? 0)) best = { holder, key, len };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) walk(v, i, v[i]);
    } else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(v as Record<string, unknown>, k, x);
  };
  walk(box, 'root', box.root);
  return best;
}

function set(holder: Holder, key: string | number, v: unknown): void {
  (holder as Record<string | number, unknown>)[key] = v;
}

/**
 * A copy of a JSON value whose serialised form is at most `maxBytes`: the longest strings are
 * cut first, then the longest arrays lose their tail. Answers whether anything was cut.
 */
export function shrinkToFit(value: unknown, maxBytes: number): { value: unknown; truncated: boolean } {
  let size = jsonBytes(value);
  if (size <= maxBytes) return { value, truncated: false };
  const box: { root: unknown } = { root: JSON.parse(JSON.stringify(value)) as unknown };
  for (let round = 0; round < 500 && size > maxBytes; round++) {
    const s = largest(box, (v) => (typeof v === 'string' ? v.length : 0));
    if (!s || s.len <= KEEP_SHORT + 1) break;
    const text = (s.holder as Record<string | number, string>)[s.key]!;
    const excess = size - maxBytes;
    // Cut by the excess (at least an eighth), so a few rounds do even when many texts are long.
    set(s.holder, s.key, cut(text, Math.max(KEEP_SHORT, text.length - Math.max(excess + 4, Math.ceil(text.length / 8)))));
    size = jsonBytes(box.root);
  }
  for (let round = 0; round < 200 && size > maxBytes; round++) {
    const a = largest(box, (v) => (Array.isArray(v) ? v.length : 0));
    if (!a || a.len <= 1) break;
    const arr = (a.holder as Record<string | number, unknown[]>)[a.key]!;
    set(a.holder, a.key, arr.slice(0, Math.floor(arr.length / 2)));
    size = jsonBytes(box.root);
  }
  if (size > maxBytes) box.root = keepScalars(box.root);
  return { value: box.root, truncated: true };
}

/** The last resort: the top level's short scalar fields (ids, kinds, states). */
function keepScalars(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x !== 'object' && !(typeof x === 'string' && x.length > KEEP_SHORT)) out[k] = x;
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
export function capEvent(topic: string, type: string, data: unknown): { data: unknown; over: boolean; bytes: number } {
  if (isDelta(type)) return { data, over: false, bytes: 0 };
  const bytes = frameBytes(topic, type, data);
  if (bytes <= WS_EVENT_MAX_BYTES) return { data, over: false, bytes };
  const room = WS_EVENT_MAX_BYTES - frameBytes(topic, type, null) - 20;
  const r = shrinkToFit(data, room);
  const cutData = r.value !== null && typeof r.value === 'object' && !Array.isArray(r.value) ? { ...r.value, truncated: true } : r.value;
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
