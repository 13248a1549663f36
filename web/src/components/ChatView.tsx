import { useEffect, useRef, useState } from 'preact/hooks';
import { SESSION_ID } from '../lib/api';
import { PHONE, useMedia } from '../lib/focus';
import { ChatPane } from './ChatPane';
import { NewChat } from './NewChat';
import { SessionList } from './SessionList';

/**
 * Sessions on the left (a drawer on a phone), the open chat on the right. A closed drawer is
 * inert (out of the tab order); an open one makes the chat inert, takes focus, and Escape closes
 * it. An address whose chat id is not a session id opens nothing and asks the server nothing.
 */
export function ChatView({ id, focus }: { id: string | undefined; focus?: string | undefined }) {
  const [listOpen, setListOpen] = useState(false);
  const phone = useMedia(PHONE);
  const list = useRef<HTMLElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  const drawer = phone && listOpen;

  useEffect(() => {
    if (!drawer) return;
    list.current?.querySelector<HTMLElement>('button, a')?.focus();
    const esc = (e: KeyboardEvent) => e.key === 'Escape' && setListOpen(false);
    addEventListener('keydown', esc);
    return () => {
      removeEventListener('keydown', esc);
      if (opener.current && document.contains(opener.current)) opener.current.focus();
    };
  }, [drawer]);

  const showList = () => {
    opener.current = document.activeElement as HTMLElement | null;
    setListOpen(true);
  };
  const valid = id === undefined || SESSION_ID.test(id);
  return (
    <div class={`chat-view${listOpen ? ' list-open' : ''}`}>
      <SessionList
        listRef={list}
        current={id}
        inert={phone && !listOpen}
        onPick={() => setListOpen(false)}
      />
      <div class="scrim" onClick={() => setListOpen(false)} />
      <section class="chat-main" inert={drawer}>
        {!valid ? (
          <div class="chat-pane">
            <div class="transcript empty" data-testid="bad-chat">
              <p>
                There is no chat at this address. <a href="#/chat">Start a new chat</a>.
              </p>
            </div>
          </div>
        ) : id ? (
          <ChatPane key={id} id={id} focus={focus} onShowList={showList} />
        ) : (
          <NewChat onShowList={showList} />
        )}
      </section>
    </div>
  );
}
