import { api } from '../lib/api';
import { type McpResourceRef, queueFirstMessage } from '../lib/chat';
import { go } from '../lib/router';
import { upsertSession } from '../lib/sessions';
import type { Session } from '../lib/types';
import { Composer } from './Composer';
import { Icon } from './Icon';

/** No chat open: a composer that starts one with the first message. */
export function NewChat({ onShowList }: { onShowList: () => void }) {
  const start = async (text: string, attachments: string[], resources: McpResourceRef[]) => {
    const s = await api('POST', '/api/sessions');
    upsertSession(s);
    // The chat opens first and sends the message once it listens, so no event is missed.
    queueFirstMessage(s.id, text, attachments, resources);
    go(`chat/${s.id}`);
  };
  return (
    <div class="chat-pane">
      <div class="chat-head">
        <button type="button" class="icon only-phone" aria-label="Show chats" onClick={onShowList}>
          <Icon name="menu" />
        </button>
        <h2>New chat</h2>
      </div>
      <div class="transcript empty">
        <div class="welcome">
          <h2>What should we work on?</h2>
          <p class="muted">
            Enter sends, Shift+Enter starts a new line. Attach files with the clip. <kbd>?</kbd>{' '}
            lists the keyboard shortcuts.
          </p>
        </div>
      </div>
      <Composer running={false} onSend={start} />
    </div>
  );
}
