import { useEffect, useRef, useState } from 'preact/hooks';
import { typing } from '../lib/focus';
import { go, route } from '../lib/router';
import { useStore } from '../lib/store';

/**
 * The search field in the top bar, over every chat. "/" (outside a field) or Ctrl+K (⌘K) puts
 * the cursor in it; Enter opens the results page (#/search/<words>).
 */
export function SearchBox() {
  const r = useStore(route);
  const current = r.view === 'search' ? (r.arg ?? '') : '';
  const [q, setQ] = useState(current);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => setQ(current), [current]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const combo = (e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k';
      if (!combo && !(e.key === '/' && !e.ctrlKey && !e.metaKey && !typing(e.target))) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);
  return (
    <form
      class="search-box"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        const words = q.trim();
        if (words) go(`search/${encodeURIComponent(words)}`);
      }}
    >
      <input
        ref={input}
        type="search"
        name="q"
        value={q}
        maxLength={500}
        placeholder="Search chats  /"
        aria-label="Search all chats"
        aria-keyshortcuts="/ Control+K"
        data-testid="search-input"
        onInput={(e) => setQ(e.currentTarget.value)}
      />
    </form>
  );
}
