/**
 * Text for Slack: Markdown as the model writes it turned into Slack's mrkdwn (*bold*, _italic_,
 * ~strike~, <url|label>, code as is), and plain text made safe. Slack reads &, < and > as markup
 * in every message, so they are always escaped (api.slack.com "Formatting text for app surfaces").
 */

export const escapeSlack = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Marks bold while italics are converted, so a bold's `*` is not read as an italic's. */
const BOLD = '\u0001';

function inline(line: string): string {
  // Code spans first, so nothing inside them is read as emphasis.
  return line
    .split(/(`[^`\n]+`)/)
    .map((p) => {
      if (p.length > 1 && p.startsWith('`') && p.endsWith('`')) return escapeSlack(p);
      let s = escapeSlack(p);
      s = s.replace(
        /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
        (_m, t: string, u: string) => `<${u}|${t.replace(/\|/g, '¦')}>`,
      );
      s = s
        .replace(/\*\*([^*\n]+)\*\*/g, `${BOLD}$1${BOLD}`)
        .replace(/__([^_\n]+)__/g, `${BOLD}$1${BOLD}`);
      s = s.replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,!?:;])/g, '$1_$2_');
      s = s.replace(/~~([^~\n]+)~~/g, '~$1~');
      return s.split(BOLD).join('*');
    })
    .join('');
}

/** Markdown → Slack mrkdwn; anything it has no form for stays as text. */
export function markdownToMrkdwn(md: string): string {
  const out: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*```[\w+-]*\s*$/.test(line)) {
      // Slack shows a fence's language as text: the fence goes without it.
      const body: string[] = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      out.push('```', ...body.map(escapeSlack), '```');
      continue;
    }
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) out.push(`*${inline(heading[1]!.replace(/\*\*/g, ''))}*`);
    else out.push(inline(line.replace(/^(\s*)[-*+]\s+/, '$1• ')));
  }
  return out.join('\n');
}
