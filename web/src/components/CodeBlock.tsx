import { useMemo, useState } from 'preact/hooks';
import { highlight } from '../lib/highlight';

/** A fenced code block: highlighted tokens as text in spans, with a copy button. */
export function CodeBlock({
  code,
  lang,
  open = false,
}: {
  code: string;
  lang: string;
  open?: boolean;
}) {
  const tokens = useMemo(() => highlight(code, lang), [code, lang]);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(code);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div class="code">
      <div class="code-head">
        <span>{lang || 'text'}</span>
        {!open && typeof navigator.clipboard?.writeText === 'function' && (
          <button type="button" class="link" onClick={copy}>
            {copied ? 'Copied' : 'Copy'}
          </button>
        )}
      </div>
      <pre>
        <code>
          {tokens.map(([cls, text], i) =>
            cls ? (
              <span key={i} class={`tk-${cls}`}>
                {text}
              </span>
            ) : (
              text
            ),
          )}
        </code>
      </pre>
    </div>
  );
}
