import type { ComponentChildren } from 'preact';
import { useMemo } from 'preact/hooks';
import { parseMarkdown, type Block, type Inline } from '../lib/markdown';
import { CodeBlock } from './CodeBlock';

/** Model text as Markdown: parsed to data, rendered as elements and text nodes (never as HTML). */
export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const tree = useMemo(() => parseMarkdown(text), [text]);
  return <div class={`md${streaming ? ' streaming' : ''}`}>{tree.map((b, i) => <BlockView key={i} b={b} />)}</div>;
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
          {item.length === 1 && item[0]!.t === 'p' ? inl(item[0]!.c) : item.map((x, k) => <BlockView key={k} b={x} />)}
        </li>
      ));
      return b.ordered ? <ol start={b.start}>{items}</ol> : <ul>{items}</ul>;
    }
    case 'quote':
      return <blockquote>{b.c.map((x, i) => <BlockView key={i} b={x} />)}</blockquote>;
    case 'hr':
      return <hr />;
    case 'table':
      return (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>{b.head.map((c, i) => <th key={i} style={b.align[i] ? { textAlign: b.align[i]! } : undefined}>{inl(c)}</th>)}</tr>
            </thead>
            <tbody>
              {b.rows.map((r, k) => (
                <tr key={k}>{r.map((c, i) => <td key={i} style={b.align[i] ? { textAlign: b.align[i]! } : undefined}>{inl(c)}</td>)}</tr>
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
