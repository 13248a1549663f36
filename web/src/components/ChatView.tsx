import { useState } from 'preact/hooks';
import { ChatPane } from './ChatPane';
import { NewChat } from './NewChat';
import { SessionList } from './SessionList';

/** Sessions on the left (a drawer on a phone), the open chat on the right. */
export function ChatView({ id }: { id: string | undefined }) {
  const [listOpen, setListOpen] = useState(false);
  return (
    <div class={`chat-view${listOpen ? ' list-open' : ''}`}>
      <SessionList current={id} onPick={() => setListOpen(false)} />
      <div class="scrim" onClick={() => setListOpen(false)} />
      <section class="chat-main">
        {id ? <ChatPane key={id} id={id} onShowList={() => setListOpen(true)} /> : <NewChat onShowList={() => setListOpen(true)} />}
      </section>
    </div>
  );
}
