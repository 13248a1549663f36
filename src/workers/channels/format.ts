/**
 * Markdown as the model writes it, turned into what a platform shows: Telegram's small HTML
 * subset, or plain text; and long text split at the platform's cap on a natural boundary.
 */

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function inlineHtml(line: string): string {
  // Code spans first, so nothing inside them is read as emphasis.
  const parts = line.split(/(`[^`\n]+`)/);
  return parts
    .map((p) => {
      if (p.length > 1 && p.startsWith('`') && p.endsWith('`'))
        return `<code>${escapeHtml(p.slice(1, -1))}</code>`;
      let s = escapeHtml(p);
      s = s.replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
        (_m, t: string, u: string) => `<a href="${u.replace(/"/g, '&quot;')}">${t}</a>`,
      );
      s = s.replace(/\*\*([^*\n]+)\*\*/g, '<b>$1</b>').replace(/__([^_\n]+)__/g, '<b>$1</b>');
      s = s
        .replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,!?:;])/g, '$1<i>$2</i>')
        .replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,!?:;])/g, '$1<i>$2</i>');
      s = s.replace(/~~([^~\n]+)~~/g, '<s>$1</s>');
      return s;
    })
    .join('');
}

/** Markdown → Telegram HTML (b, i, s, code, pre, a); anything else stays as text. */
export function markdownToTelegramHtml(md: string): string {
  const out: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      const lang = fence[1] ? ` class="language-${fence[1]}"` : '';
      out.push(`<pre><code${lang}>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) out.push(`<b>${inlineHtml(heading[1]!)}</b>`);
    else out.push(inlineHtml(line.replace(/^(\s*)[-*+]\s+/, '$1• ')));
  }
  return out.join('\n');
}

/** Markdown → plain text: fences unwrapped, emphasis marks dropped, links as "label (url)". */
export function markdownToPlain(md: string): string {
  return md
    .split('\n')
    .filter((l) => !/^\s*```[\w+-]*\s*$/.test(l))
    .map((l) =>
      l
        .replace(/^#{1,6}\s+/, '')
        .replace(/^(\s*)[-*+]\s+/, '$1• ')
        .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
        .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, '$1 ($2)')
        .replace(/\*\*([^*\n]+)\*\*/g, '$1')
        .replace(/__([^_\n]+)__/g, '$1')
        .replace(/`([^`\n]+)`/g, '$1')
        .replace(/~~([^~\n]+)~~/g, '$1'),
    )
    .join('\n');
}

/** Splits text into pieces of at most `cap` characters: at a paragraph, else a line, else a space, else anywhere. */
export function splitText(text: string, cap: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > cap) {
    const window = rest.slice(0, cap);
    let cut = window.lastIndexOf('\n\n');
    if (cut < cap / 2) cut = window.lastIndexOf('\n');
    if (cut < cap / 2) cut = window.lastIndexOf(' ');
    if (cut < cap / 2) cut = cap;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\s+/, '');
  }
  if (rest.length > 0 || out.length === 0) out.push(rest);
  return out;
}
