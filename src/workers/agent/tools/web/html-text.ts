import { decodeEntities } from './html-entities.js';

/**
 * HTML to readable plain text, without a DOM: drops what is not content (scripts, styles,
 * navigation, the head), keeps headings as `#`, paragraphs as blank-line blocks, list items as
 * `- ` or `1. `, table cells joined by ` | `, and links as `text (url)` with the url made absolute.
 */
const DROP = new Set([
  'script',
  'style',
  'nav',
  'head',
  'noscript',
  'template',
  'svg',
  'iframe',
  'object',
  'canvas',
  'select',
  'math',
]);
/** Elements whose content is raw text, so a `<` inside is not a tag. */
const RAW = new Set(['script', 'style', 'textarea', 'title', 'xmp']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'details',
  'dialog',
  'dd',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'main',
  'p',
  'section',
  'summary',
  'table',
  'caption',
  'hr',
  'html',
]);
/** A tag: `/`, name, attributes (quoted values may hold `>`). Bounded so a broken tag costs little. */
const TAG = /<(\/?)([a-zA-Z][\w:-]*)((?:[^>"']|"[^"]*"|'[^']*'){0,2000})>/y;

function attr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(
    attrs,
  );
  return m ? decodeEntities(m[1] ?? m[2] ?? m[3] ?? '') : undefined;
}

class TextOut {
  private buf = '';
  get length(): number {
    return this.buf.length;
  }
  slice(from: number): string {
    return this.buf.slice(from);
  }
  /** Inline text; runs of blanks are already one space, and none starts a line. */
  inline(s: string): void {
    if (s === '') return;
    if (s.startsWith(' ') && (this.buf === '' || /[ \n]$/.test(this.buf))) s = s.slice(1);
    this.buf += s;
  }
  /** Verbatim text (inside <pre>). */
  raw(s: string): void {
    this.buf += s;
  }
  /** Ends the current line; with 2, also leaves a blank line. Never piles up more than that. */
  breakLine(n: 1 | 2): void {
    this.buf = this.buf.replace(/ +$/, '');
    if (this.buf === '') return;
    const have = /\n*$/.exec(this.buf)![0].length;
    if (have < n) this.buf += '\n'.repeat(n - have);
  }
  done(): string {
    return this.buf
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }
}

export function htmlToText(html: string, baseUrl?: string): string {
  const out = new TextOut();
  const title = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html)?.[1];
  const cleanTitle = title ? decodeEntities(title).replace(/\s+/g, ' ').trim() : '';
  if (cleanTitle) {
    out.inline(`Title: ${cleanTitle}`);
    out.breakLine(2);
  }
  let skip: { name: string; depth: number } | null = null;
  let pre = 0;
  const lists: Array<{ ordered: boolean; n: number }> = [];
  const links: Array<{ href: string | undefined; start: number }> = [];
  let cell = 0;

  const text = (s: string) => {
    if (skip) return;
    if (pre > 0) out.raw(decodeEntities(s));
    else out.inline(decodeEntities(s).replace(/\s+/g, ' '));
  };

  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      text(html.slice(i));
      break;
    }
    if (lt > i) text(html.slice(i, lt));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    if (html[lt + 1] === '!' || html[lt + 1] === '?') {
      const end = html.indexOf('>', lt);
      i = end === -1 ? html.length : end + 1;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(html);
    if (!m) {
      text('<');
      i = lt + 1;
      continue;
    }
    i = lt + m[0].length;
    const closing = m[1] === '/';
    const name = m[2]!.toLowerCase();
    const attrs = m[3] ?? '';
    const selfClosing = attrs.trimEnd().endsWith('/');

    if (!closing && RAW.has(name) && !selfClosing) {
      const endRe = new RegExp(`</${name}\\s*>`, 'gi');
      endRe.lastIndex = i;
      const end = endRe.exec(html);
      const body = html.slice(i, end ? end.index : html.length);
      i = end ? end.index + end[0].length : html.length;
      if (name === 'textarea' || name === 'xmp') text(body);
      continue; // script and style are dropped; the title was taken above
    }
    // </head> is optional in HTML: a <body> ends the head whether or not it was closed.
    if (skip?.name === 'head' && name === 'body') skip = null;
    if (skip) {
      if (name === skip.name && !selfClosing) skip.depth += closing ? -1 : 1;
      if (skip.depth === 0) skip = null;
      continue;
    }
    if (DROP.has(name)) {
      if (!closing && !selfClosing) skip = { name, depth: 1 };
      continue;
    }

    if (/^h[1-6]$/.test(name)) {
      out.breakLine(2);
      if (!closing) out.inline(`${'#'.repeat(Number(name[1]))} `);
    } else if (name === 'br') {
      out.raw('\n');
    } else if (name === 'pre') {
      out.breakLine(2);
      pre = Math.max(0, pre + (closing ? -1 : 1));
    } else if (name === 'ul' || name === 'ol') {
      if (closing) lists.pop();
      else lists.push({ ordered: name === 'ol', n: Number(attr(attrs, 'start') ?? 1) || 1 });
      out.breakLine(lists.length === 0 ? 2 : 1);
    } else if (name === 'li') {
      out.breakLine(1);
      if (!closing) {
        const list = lists.at(-1);
        const indent = '  '.repeat(Math.max(0, lists.length - 1));
        out.inline(`${indent}${list?.ordered ? `${list.n++}.` : '-'} `);
      }
    } else if (name === 'tr') {
      out.breakLine(1);
      cell = 0;
    } else if (name === 'td' || name === 'th') {
      if (!closing && cell++ > 0) out.inline(' | ');
    } else if (name === 'a') {
      if (!closing) links.push({ href: attr(attrs, 'href'), start: out.length });
      else {
        const link = links.pop();
        const url = link && absoluteHttp(link.href, baseUrl);
        const label = link ? out.slice(link.start).trim() : '';
        if (url && label && label !== url) out.inline(` (${url})`);
      }
    } else if (name === 'img') {
      const alt = attr(attrs, 'alt');
      if (alt && links.length > 0) out.inline(alt.replace(/\s+/g, ' '));
    } else if (BLOCK.has(name)) {
      out.breakLine(2);
    }
  }
  return out.done();
}

/** An http(s) URL for a link, resolved against the page; null for fragments, javascript: and the like. */
function absoluteHttp(href: string | undefined, base: string | undefined): string | null {
  if (!href || href.startsWith('#')) return null;
  try {
    const u = new URL(href.trim(), base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}
