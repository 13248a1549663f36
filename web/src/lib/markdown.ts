/**
 * A small Markdown parser for model output. It builds a tree of plain data (never HTML), which
 * components turn into DOM nodes, so text always lands as text: a `<script>` in a reply shows as
 * the characters `<script>`. Covers what chat replies use: headings, paragraphs, emphasis, code
 * spans and fenced blocks (an unclosed fence while streaming is still a block), lists, quotes,
 * rules, tables and links (http, https and mailto only).
 */

export type Inline =
  | string
  | { t: 'code'; v: string }
  | { t: 'b' | 'i' | 's'; c: Inline[] }
  | { t: 'a'; href: string; c: Inline[] }
  | { t: 'br' };

export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'code'; lang: string; text: string; open: boolean }
  | { t: 'list'; ordered: boolean; start: number; items: Block[][] }
  | { t: 'quote'; c: Block[] }
  | { t: 'hr' }
  | {
      t: 'table';
      align: Array<'left' | 'center' | 'right' | null>;
      head: Inline[][];
      rows: Inline[][][];
    };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST = /^( {0,12})([-*+]|\d{1,9}[.)])([ \t]+(.*))?$/;
const TABLE_RULE = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;

const isBlank = (l: string) => /^\s*$/.test(l);

function startsBlock(line: string): boolean {
  return (
    FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || LIST.test(line)
  );
}

export function parseMarkdown(src: string): Block[] {
  return blocks(src.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n'));
}

function blocks(lines: string[]): Block[] {
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = FENCE.exec(line))) {
      const fence = m[1]!;
      const body: string[] = [];
      let open = true;
      const indent = line.length - line.trimStart().length;
      for (i++; i < lines.length; i++) {
        const l = lines[i]!;
        if (new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(l)) {
          open = false;
          i++;
          break;
        }
        body.push(indent > 0 ? l.replace(new RegExp(`^ {0,${indent}}`), '') : l);
      }
      out.push({ t: 'code', lang: m[2]!.toLowerCase(), text: body.join('\n'), open });
      continue;
    }
    if ((m = HEADING.exec(line))) {
      out.push({ t: 'h', level: m[1]!.length, c: inlines(m[2] ?? '') });
      i++;
      continue;
    }
    if (HR.test(line)) {
      out.push({ t: 'hr' });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && !isBlank(lines[i]!)) {
        const q = QUOTE.exec(lines[i]!);
        if (!q && startsBlock(lines[i]!)) break;
        body.push(q ? q[1]! : lines[i]!);
        i++;
      }
      out.push({ t: 'quote', c: blocks(body) });
      continue;
    }
    if (LIST.test(line)) {
      i = list(lines, i, out);
      continue;
    }
    if (
      line.includes('|') &&
      i + 1 < lines.length &&
      TABLE_RULE.test(lines[i + 1]!) &&
      lines[i + 1]!.includes('-')
    ) {
      i = table(lines, i, out);
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      !isBlank(lines[i]!) &&
      (para.length === 0 || !startsBlock(lines[i]!))
    ) {
      para.push(lines[i]!.trim());
      i++;
    }
    out.push({ t: 'p', c: inlines(para.join('\n')) });
  }
  return out;
}

function list(lines: string[], i: number, out: Block[]): number {
  const first = LIST.exec(lines[i]!)!;
  const ordered = /\d/.test(first[2]!);
  const baseIndent = first[1]!.length;
  const items: Block[][] = [];
  let current: string[] | undefined;
  let contentIndent = 0;
  let blankBefore = false;
  while (i < lines.length) {
    const line = lines[i]!;
    const m = LIST.exec(line);
    if (m && m[1]!.length <= baseIndent + 1 && /\d/.test(m[2]!) === ordered) {
      if (current) items.push(blocks(current));
      current = [m[4] ?? ''];
      contentIndent = m[1]!.length + m[2]!.length + (m[3] ? m[3].length - (m[4] ?? '').length : 1);
      blankBefore = false;
      i++;
      continue;
    }
    if (isBlank(line)) {
      blankBefore = true;
      current?.push('');
      i++;
      continue;
    }
    const indent = line.length - line.trimStart().length;
    if (indent >= Math.min(contentIndent, baseIndent + 2)) {
      current?.push(line.slice(Math.min(indent, contentIndent)));
      blankBefore = false;
      i++;
      continue;
    }
    // A lazy continuation line of the item's paragraph; anything after a blank line ends the list.
    if (!blankBefore && !startsBlock(line)) {
      current?.push(line.trim());
      i++;
      continue;
    }
    break;
  }
  if (current) items.push(blocks(current));
  out.push({ t: 'list', ordered, start: ordered ? parseInt(first[2]!, 10) : 1, items });
  return i;
}

function cells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out: string[] = [];
  let cur = '';
  let code = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k]!;
    if (c === '\\' && s[k + 1] === '|') {
      cur += '|';
      k++;
    } else if (c === '`') {
      code = !code;
      cur += c;
    } else if (c === '|' && !code) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

function table(lines: string[], i: number, out: Block[]): number {
  const head = cells(lines[i]!);
  const align = cells(lines[i + 1]!).map((c) =>
    c.startsWith(':') && c.endsWith(':')
      ? 'center'
      : c.endsWith(':')
        ? 'right'
        : c.startsWith(':')
          ? 'left'
          : null,
  );
  const rows: Inline[][][] = [];
  i += 2;
  while (i < lines.length && !isBlank(lines[i]!) && lines[i]!.includes('|')) {
    const r = cells(lines[i]!);
    rows.push(head.map((_, k) => inlines(r[k] ?? '')));
    i++;
  }
  out.push({ t: 'table', align, head: head.map((h) => inlines(h)), rows });
  return i;
}

/** Link targets that may be followed: web and mail only (no javascript:, data:, file:...). */
export function safeHref(href: string): string | undefined {
  const h = href.trim();
  if (/^(https?:\/\/|mailto:)/i.test(h)) return h;
  return undefined;
}

const INLINE =
  /(`+)([^`][\s\S]*?|[\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__(?!\w)|\*(?=[^\s*])([\s\S]*?[^\s*])\*|_(?=[^\s_])([\s\S]*?[^\s_])_(?!\w)|~~(?=\S)([\s\S]*?\S)~~|\[([^\]\n]*)\]\(\s*<?((?:[^\s()<>]|\([^\s()<>]*\))*)>?(?:\s+"[^"]*")?\s*\)|<((?:https?:\/\/|mailto:)[^\s>]+)>|(https?:\/\/[^\s<]*[^\s<.,;:!?'")\]*_])|\\([!-/:-@[-`{-~])|(?: {2,}|\\)\n|\n/g;

export function inlines(src: string): Inline[] {
  const out: Inline[] = [];
  let text = '';
  const push = (x: Inline) => {
    if (text) out.push(text);
    text = '';
    out.push(x);
  };
  const re = new RegExp(INLINE.source, 'g');
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(src))) {
    const at = m.index;
    // `_` only opens emphasis at a word boundary (snake_case stays as it is).
    if ((m[4] !== undefined || m[6] !== undefined) && at > 0 && /\w/.test(src[at - 1]!)) {
      re.lastIndex = at + 1;
      continue;
    }
    text += src.slice(last, at);
    last = re.lastIndex;
    if (m[1] !== undefined) {
      let v = m[2]!;
      if (/^ .*[^ ].* $/.test(v)) v = v.slice(1, -1);
      push({ t: 'code', v: v.replace(/\n/g, ' ') });
    } else if (m[3] !== undefined || m[4] !== undefined)
      push({ t: 'b', c: inlines((m[3] ?? m[4])!) });
    else if (m[5] !== undefined || m[6] !== undefined)
      push({ t: 'i', c: inlines((m[5] ?? m[6])!) });
    else if (m[7] !== undefined) push({ t: 's', c: inlines(m[7]) });
    else if (m[8] !== undefined) {
      const href = safeHref(m[9] ?? '');
      if (href) push({ t: 'a', href, c: inlines(m[8]) });
      else text += m[8];
    } else if (m[10] !== undefined || m[11] !== undefined) {
      const href = (m[10] ?? m[11])!;
      push({ t: 'a', href, c: [href] });
    } else if (m[12] !== undefined) text += m[12];
    else push({ t: 'br' });
  }
  text += src.slice(last);
  if (text) out.push(text);
  return out;
}
