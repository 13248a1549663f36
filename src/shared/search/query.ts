/**
 * What a person types into a search box, read as they mean it and turned into an FTS5 query that
 * cannot fail: words, "exact phrases", -excluded words or phrases, and prefix* words. Everything
 * else (FTS5's own operators, NEAR(, column filters, stray quotes, symbols) is read as plain words:
 * every term reaches FTS5 as a quoted string, so no user text is ever parsed as FTS5 syntax.
 */

export const MAX_QUERY_CHARS = 500;
export const MAX_TERMS = 32;

export interface ParsedQuery {
  /** The FTS5 MATCH expression. */
  fts: string;
  /** The words and phrases looked for (what a person sees echoed back). */
  terms: string[];
  excluded: string[];
  /** The words looked for, as typed (for highlighting them in excerpts). */
  wanted: Array<{ words: string[]; prefix: boolean }>;
}

export type ParseResult = { ok: true; query: ParsedQuery } | { ok: false; message: string };

// The index's tokenizer (unicode61) keeps letters, numbers and marks together and splits on the
// rest, so a term is split the same way: "nginx.conf" is the phrase "nginx conf".
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** An FTS5 string: quoted, with quotes doubled (the words hold none, but say so in code). */
const quote = (w: string) => `"${w.replace(/"/g, '""')}"`;

interface Item {
  words: string[];
  negated: boolean;
  prefix: boolean;
}

/** Splits the input into items: "quoted phrases" and bare words, each maybe -negated or prefix*. */
function items(input: string): Item[] {
  const out: Item[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (/\s/u.test(ch)) {
      i++;
      continue;
    }
    const negated = ch === '-' && i + 1 < input.length && !/\s/u.test(input[i + 1]!);
    if (negated) i++;
    if (input[i] === '"') {
      const close = input.indexOf('"', i + 1);
      // An unbalanced quote: the rest is plain words (each its own term, as typed without it).
      if (close < 0) {
        for (const w of words(input.slice(i + 1))) out.push({ words: [w], negated, prefix: false });
        break;
      }
      const ws = words(input.slice(i + 1, close));
      const prefix = input[close + 1] === '*';
      if (ws.length > 0) out.push({ words: ws, negated, prefix });
      i = close + 1 + (prefix ? 1 : 0);
      continue;
    }
    let end = i;
    while (end < input.length && !/\s/u.test(input[end]!)) end++;
    const raw = input.slice(i, end);
    i = end;
    const prefix = raw.endsWith('*');
    const ws = words(raw);
    if (ws.length > 0) out.push({ words: ws, negated, prefix });
  }
  return out;
}

export function parseSearchQuery(input: string): ParseResult {
  if (input.length > MAX_QUERY_CHARS)
    return {
      ok: false,
      message: `q is ${input.length} characters long; a search takes at most ${MAX_QUERY_CHARS}. Search for a few distinctive words instead.`,
    };
  const all = items(input.normalize('NFC'));
  if (all.length > MAX_TERMS)
    return {
      ok: false,
      message: `q has ${all.length} words or phrases; a search takes at most ${MAX_TERMS}. Keep the most distinctive ones.`,
    };
  const wanted = all.filter((t) => !t.negated);
  const unwanted = all.filter((t) => t.negated);
  if (wanted.length === 0)
    return {
      ok: false,
      message:
        unwanted.length > 0
          ? 'q only excludes (-word): add a word or "phrase" to look for.'
          : 'q has no words to look for: type letters or numbers (symbols and emoji alone are not indexed).',
    };
  const phrase = (t: Item) => `${quote(t.words.join(' '))}${t.prefix ? '*' : ''}`;
  const positive = wanted.map(phrase).join(' AND ');
  const fts =
    unwanted.length > 0 ? `(${positive}) NOT (${unwanted.map(phrase).join(' OR ')})` : positive;
  const shown = (t: Item) => `${t.words.join(' ')}${t.prefix ? '*' : ''}`;
  return {
    ok: true,
    query: {
      fts,
      terms: wanted.map(shown),
      excluded: unwanted.map(shown),
      wanted: wanted.map((t) => ({ words: t.words, prefix: t.prefix })),
    },
  };
}
