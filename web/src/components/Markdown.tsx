import type { ComponentChildren } from 'preact';
import { useMemo } from 'preact/hooks';
import { parseMarkdown, type Block, type Inline } from '../lib/markdown';
import { pure } from '../lib/pure';
import { CodeBlock } from './CodeBlock';

/**
 * Model text as Markdown: parsed to data, rendered as elements and text nodes (never as HTML).
 * While it streams, the blocks before the last paragraph break are parsed and drawn once (they
 * no longer change) and each frame parses only the paragraph being written.
 */
export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const cut = streaming ? settledEnd(text) : 0;
  return (
    <div class={`md${streaming ? ' streaming' : ''}`}>
      {cut > 0 && <Blocks src={text.slice(0, cut)} />}
      <Blocks src={cut > 0 ? text.slice(cut) : text} />
    </div>
  );
}

/** Renders again only when its text changes (strings compare by value). */
const Blocks = pure(function Blocks({ src }: { src: string }) {
  const tree = useMemo(() => parseMarkdown(src), [src]);
  return (
    <>
      {tree.map((b, i) => (
        <BlockView key={i} b={b} />
      ))}
    </>
  );
});

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * Where the settled part of a streaming text ends: after its last blank line that is outside a
 * code fence, or 0. Text past it may still change what it is (a table's rule, a fence's close).
 */
function settledEnd(text: string): number {
  let fenced = false;
  let end = 0;
  let lineStart = 0;
  let prevBlank = false;
  while (lineStart <= text.length) {
    const nl = text.indexOf('\n', lineStart);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(lineStart, lineEnd);
    if (nl < 0) break; // the last line is still being written
    if (FENCE_LINE.test(line)) fenced = !fenced;
    const blank = line.trim() === '';
    if (blank && !fenced && !prevBlank) end = nl + 1;
    prevBlank = blank;
    lineStart = nl + 1;
  }
  return end;
}

function BlockView({ b }: { b: Block }) {
  switch (b.t) {
    case 'p':
      return <p>{inl(b.c)}</p>;
    case 'h': {
      const H = `h${Math.min(6, b.level + 2)}` as 'h3';
      return <H>{inl(b.c)}</H>;
    }
    case 'code':
      return <CodeBlock code={b.text} lang={b.lang} open={b.open} />;
    case 'list': {
      const items = b.items.map((item, i) => (
        <li key={i}>
          {item.length === 1 && item[0]!.t === 'p'
            ? inl(item[0]!.c)
            : item.map((x, k) => <BlockView key={k} b={x} />)}
        </li>
      ));
      return b.ordered ? <ol start={b.start}>{items}</ol> : <ul>{items}</ul>;
    }
    case 'quote':
      return (
        <blockquote>
          {b.c.map((x, i) => (
            <BlockView key={i} b={x} />
          ))}
        </blockquote>
      );
    case 'hr':
      return <hr />;
    case 'table':
      return (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                {b.head.map((c, i) => (
                  <th key={i} style={b.align[i] ? { textAlign: b.align[i]! } : undefined}>
                    {inl(c)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {b.rows.map((r, k) => (
                <tr key={k}>
                  {r.map((c, i) => (
                    <td key={i} style={b.align[i] ? { textAlign: b.align[i]! } : undefined}>
                      {inl(c)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
  }
}

function inl(list: Inline[]): ComponentChildren {
  return list.map((x, i) => {
    if (typeof x === 'string') return x;
    switch (x.t) {
      case 'code':
        return <code key={i}>{x.v}</code>;
      case 'b':
        return <strong key={i}>{inl(x.c)}</strong>;
      case 'i':
        return <em key={i}>{inl(x.c)}</em>;
      case 's':
        return <del key={i}>{inl(x.c)}</del>;
      case 'a':
        return (
          <a key={i} href={x.href} target="_blank" rel="noopener noreferrer nofollow">
            {inl(x.c)}
          </a>
        );
      case 'br':
        return <br key={i} />;
      default:
        return null;
    }
  });
}
