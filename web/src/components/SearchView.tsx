import { useEffect, useRef, useState } from 'preact/hooks';
import { api, describe } from '../lib/api';
import { when } from '../lib/format';
import type { Schemas } from '../lib/types';

type Hit = Schemas['SearchHit'];

const KIND: Record<Hit['kind'], string> = {
  message: 'message',
  tool: 'tool call or output',
  session: 'chat title',
  goal: 'goal',
  artifact: 'file',
  memory: 'memory note',
  skill: 'skill',
  workflow: 'workflow',
};

/** Where the things outside chats are shown. */
const PLACE: Partial<Record<Hit['kind'], string>> = {
  memory: '#/settings/profile',
  skill: '#/skills',
  workflow: '#/workflows',
};

/** The snippet with its matches in <mark> (text nodes only: nothing from a chat is read as HTML). */
function Snippet({ h }: { h: Hit }) {
  const parts = [];
  let at = 0;
  for (const [a, b] of h.highlights) {
    if (a < at || b > h.snippet.length) continue;
    parts.push(h.snippet.slice(at, a), <mark key={a}>{h.snippet.slice(a, b)}</mark>);
    at = b;
  }
  parts.push(h.snippet.slice(at));
  return <p class="snippet">{parts}</p>;
}

function target(h: Hit): string {
  if (!h.session_id) return PLACE[h.kind] ?? '#/chat';
  const base = `#/chat/${encodeURIComponent(h.session_id)}`;
  return h.kind === 'message' || h.kind === 'tool' ? `${base}/${encodeURIComponent(h.ref)}` : base;
}

/**
 * Results of a search over every chat (#/search/<words>): best first, each with its chat, date
 * and an excerpt with the matched words marked; a result opens its chat at the message. The count
 * (or the error) is announced once in a status region.
 */
export function SearchView({ q }: { q: string }) {
  const [items, setItems] = useState<Hit[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [state, setState] = useState<'loading' | 'done' | 'more'>('loading');
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);

  const load = async (cursor: string | null) => {
    setState(cursor ? 'more' : 'loading');
    try {
      const a = await api('GET', '/api/search', {
        query: { q, limit: 20, ...(cursor ? { cursor } : {}) },
      });
      setItems((old) => (cursor ? [...old, ...a.items] : a.items));
      setNext(a.next_cursor);
      setNotice(a.notice);
      setError(undefined);
    } catch (err) {
      setError(describe(err));
      if (!cursor) setItems([]);
      setNext(null);
    }
    setState('done');
  };

  useEffect(() => {
    setItems([]);
    void load(null);
    heading.current?.focus();
  }, [q]);

  const count =
    state === 'loading'
      ? 'Searching…'
      : error
        ? `The search failed: ${error}`
        : items.length === 0
          ? 'Nothing found.'
          : `${items.length}${next ? '+' : ''} result${items.length === 1 ? '' : 's'}.`;
  return (
    <div class="page search-view">
      <h1 class="page-title" ref={heading} tabIndex={-1}>
        Search: “{q}”
      </h1>
      <p role="status" data-testid="search-status" class={error ? 'error' : 'muted'}>
        {count}
      </p>
      {notice && <p class="muted small">{notice}</p>}
      <ol class="search-results" aria-label="Results" data-testid="search-results">
        {items.map((h) => (
          <li key={`${h.kind}:${h.ref}`}>
            <a href={target(h)} data-testid="search-result">
              <span class="title">
                {h.session_id ? (h.session_title ?? 'Untitled chat') : (h.name ?? KIND[h.kind])}
              </span>
              <span class="meta muted small">
                {when(h.created_at)} · {h.role ? `${h.role} ${KIND[h.kind]}` : KIND[h.kind]}
              </span>
              <Snippet h={h} />
            </a>
          </li>
        ))}
      </ol>
      {next && (
        <button type="button" disabled={state === 'more'} onClick={() => void load(next)}>
          {state === 'more' ? 'Loading…' : 'More results'}
        </button>
      )}
      <p class="muted small">
        Words must all appear; "an exact phrase", -word to leave out, word* for a beginning.
      </p>
    </div>
  );
}
