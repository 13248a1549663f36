import { scrubSecrets } from '../audit.js';
import type { Db } from '../store/db.js';

/**
 * What the search index keeps of each stored thing: its words, never its secrets, never without
 * bound. One function serves the triggers (as the SQL function svc_search_text, so no writer can
 * forget the index) and the backfill of rows written before the index existed.
 */

/** A message's text and a session's title or goal: enough to find a pasted log, not a whole book. */
export const TEXT_CAP = 32_000;
/** A tool call's arguments or its output: the start is what a person remembers of it. */
export const TOOL_CAP = 4_000;

/**
 * - `message`: what a user or the assistant said (null for other roles or when empty);
 * - `tool`: the calls an assistant message made, or a tool message's output;
 * - `plain`: a title, goal or name.
 */
export type TextPart = 'message' | 'tool' | 'plain';

// Control characters would collide with the snippet's highlight markers (\x01, \x02).
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

export function clean(text: string, cap: number): string | null {
  // Cut generously before scrubbing (a long paste costs nothing to scrub past its cap), then
  // scrub, then cut exactly: a cut never leaves half a key behind unscrubbed.
  const s = scrubSecrets(text.length > cap * 2 ? text.slice(0, cap * 2) : text)
    .replace(CONTROL, ' ')
    .slice(0, cap)
    .trim();
  return s.length > 0 ? s : null;
}

// The two parts of one message are asked for one after the other: parse its JSON once.
let lastJson = '';
let lastValue: unknown;

function parse(json: string): unknown {
  if (json !== lastJson) {
    try {
      lastValue = JSON.parse(json) as unknown;
    } catch {
      lastValue = json;
    }
    lastJson = json;
  }
  return lastValue;
}

function field(o: unknown, key: string): unknown {
  return o !== null && typeof o === 'object' && !Array.isArray(o)
    ? (o as Record<string, unknown>)[key]
    : undefined;
}

function str(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  return JSON.stringify(v) ?? '';
}

/** The searchable text of one part of a stored row (a message's role and JSON content, or a plain string). */
export function searchText(part: TextPart, role: string | null, value: string): string | null {
  if (part === 'plain') return clean(value, TEXT_CAP);
  const content = parse(value);
  if (part === 'message') {
    if (role !== 'user' && role !== 'assistant') return null;
    return clean(typeof content === 'string' ? content : str(field(content, 'text')), TEXT_CAP);
  }
  if (role === 'assistant') {
    const calls = field(content, 'tool_calls');
    if (!Array.isArray(calls) || calls.length === 0) return null;
    const text = calls
      .map((c) => `${str(field(c, 'name'))} ${str(field(c, 'arguments'))}`)
      .join('\n');
    return clean(text, TOOL_CAP);
  }
  if (role === 'tool')
    return clean(`${str(field(content, 'name'))}: ${str(field(content, 'output'))}`, TOOL_CAP);
  return null;
}

/**
 * svc_search_text(part, role, value) on this connection: the search index's triggers call it on
 * every write of a message, title, goal or artifact. Every process opens svc.db through openDb,
 * which registers it; a connection without it cannot write those tables (by design: a write the
 * index missed would be worse).
 */
export function registerSearchFunctions(db: Db): void {
  db.function('svc_search_text', { varargs: false }, (part, role, value) => {
    if (typeof value !== 'string') return null;
    const p = part === 'message' || part === 'tool' ? part : 'plain';
    return searchText(p, typeof role === 'string' ? role : null, value);
  });
}
