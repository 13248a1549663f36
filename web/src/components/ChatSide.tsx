import { useEffect } from 'preact/hooks';
import type { ChatSession, ChatState } from '../lib/chat';
import { ArtifactList } from './ArtifactList';
import { GoalPanel } from './GoalPanel';
import { SessionSettings } from './SessionSettings';
import { Icon } from './Icon';

/** The drawer beside a chat: its settings, its goal, and the files it made. */
export function ChatSide({ chat, s, onClose }: { chat: ChatSession; s: ChatState; onClose: () => void }) {
  useEffect(() => {
    const esc = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    addEventListener('keydown', esc);
    return () => removeEventListener('keydown', esc);
  }, [onClose]);
  return (
    <aside class="side-panel" aria-label="Session settings" data-testid="session-side">
      <div class="side-head">
        <h3>Session</h3>
        <button type="button" class="icon" aria-label="Close" onClick={onClose}>
          <Icon name="close" />
        </button>
      </div>
      <SessionSettings session={s.session!} onSaved={(x) => chat.setSession(x)} />
      <GoalPanel sessionId={s.id} goal={s.goal ?? null} note={s.goalNote} onChange={(g) => chat.setGoal(g)} />
      <ArtifactList sessionId={s.id} />
    </aside>
  );
}
