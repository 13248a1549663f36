/**
 * A result's excerpt, made here rather than by FTS5's snippet(): that runs the whole query again
 * for each result (20 extra index walks a page, most of a search's time at a million messages).
 * Words are compared as the index's tokenizer does (unicode61, diacritics removed, case folded).
 */

export const SNIPPET_TOKENS = 24;
export const SNIPPET_MAX_CHARS = 320;

const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/** As unicode61 with remove_diacritics 2 compares words. */
export function fold(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export interface Term {
  /** Folded. */
  word: string;
  prefix: boolean;
}

/** The words a query looks for (each word of a phrase; the last of a prefix phrase is a prefix). */
export function queryTerms(items: Array<{ words: string[]; prefix: boolean }>): Term[] {
  return items.flatMap((t) =>
    t.words.map((w, i) => ({ word: fold(w), prefix: t.prefix && i === t.words.length - 1 })),
  );
}

function hits(token: string, terms: Term[]): boolean {
  const f = fold(token);
  return terms.some((t) => (t.prefix ? f.startsWith(t.word) : f === t.word));
}

/**
 * The window of SNIPPET_TOKENS tokens with the most matches (the earliest among equals), cut to
 * SNIPPET_MAX_CHARS, with the matches as [start, end) offsets into the excerpt.
 */
export function makeSnippet(
  text: string,
  terms: Term[],
): { snippet: string; highlights: Array<[number, number]> } {
  const tokens: Array<{ start: number; end: number; hit: boolean }> = [];
  for (const m of text.matchAll(TOKEN)) {
    tokens.push({ start: m.index, end: m.index + m[0].length, hit: hits(m[0], terms) });
    if (tokens.length > 20_000) break;
  }
  if (tokens.length === 0) return { snippet: text.slice(0, SNIPPET_MAX_CHARS), highlights: [] };
  // The best window, by a running count of matches.
  let best = 0;
  let bestCount = -1;
  let count = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.hit) count++;
    if (i >= SNIPPET_TOKENS && tokens[i - SNIPPET_TOKENS]!.hit) count--;
    const first = Math.max(0, i - SNIPPET_TOKENS + 1);
    if (count > bestCount) {
      bestCount = count;
      best = first;
    }
  }
  // Start a few tokens before the first match in the window, so it reads in context.
  const firstHit = tokens.findIndex((t, i) => i >= best && t.hit);
  const from = firstHit >= 0 ? Math.max(0, Math.min(best, firstHit - 3)) : best;
  const to = Math.min(tokens.length, from + SNIPPET_TOKENS);
  let start = tokens[from]!.start;
  let end = tokens[to - 1]!.end;
  if (end - start > SNIPPET_MAX_CHARS) {
    // One very long token (a pasted blob) can make the window huge: keep the part at the first match.
    const anchor = firstHit >= 0 ? tokens[firstHit]!.start : start;
    start = Math.max(start, anchor - 60);
    end = Math.min(end, start + SNIPPET_MAX_CHARS);
  }
  const lead = start > 0 ? '…' : '';
  const tail = end < text.length ? '…' : '';
  const snippet = `${lead}${text.slice(start, end).replace(/\s+/g, ' ')}${tail}`;
  // Offsets after whitespace runs became one space: recount over the same transformation.
  const highlights: Array<[number, number]> = [];
  const shift = (at: number) => lead.length + text.slice(start, at).replace(/\s+/g, ' ').length;
  for (let i = from; i < to; i++) {
    const t = tokens[i]!;
    if (!t.hit || t.start < start || t.end > end) continue;
    highlights.push([shift(t.start), shift(t.end)]);
  }
  return { snippet, highlights };
}
