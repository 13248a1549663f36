import { useRef, useState } from 'preact/hooks';
import type { ChatSession, ChatState } from '../lib/chat';
import { PHONE, useMedia } from '../lib/focus';
import { ArtifactList } from './ArtifactList';
import { ChatExport } from './ChatExport';
import { GoalPanel } from './GoalPanel';
import { Icon } from './Icon';
import { Modal } from './Modal';
import { SessionSettings } from './SessionSettings';

/**
 * The panel beside a chat: its settings, its goal, the files it made, and its export. Docked on a wide
 * screen (the chat stays usable beside it), modal on a phone. Closing it with an unsaved change
 * asks first instead of dropping the change.
 */
export function ChatSide({
  chat,
  s,
  onClose,
}: {
  chat: ChatSession;
  s: ChatState;
  onClose: () => void;
}) {
  const phone = useMedia(PHONE);
  const [dirty, setDirty] = useState(false);
  const [asking, setAsking] = useState(false);
  const keep = useRef<HTMLButtonElement>(null);
  const close = () => {
    if (!dirty) return onClose();
    setAsking(true);
    requestAnimationFrame(() => keep.current?.focus());
  };
  return (
    <Modal
      modal={phone}
      class="side-panel"
      labelledBy="side-title"
      testId="session-side"
      onClose={close}
    >
      <div class="side-head">
        <h3 id="side-title">Session</h3>
        <button type="button" class="icon" aria-label="Close the session panel" onClick={close}>
          <Icon name="close" />
        </button>
      </div>
      {asking && (
        <div class="unsaved" role="alert" data-testid="unsaved-changes">
          <p>The settings have changes that are not saved.</p>
          <div class="actions">
            <button type="button" ref={keep} onClick={() => setAsking(false)}>
              Keep editing
            </button>
            <button type="button" class="danger" onClick={onClose}>
              Discard changes
            </button>
          </div>
        </div>
      )}
      <SessionSettings
        session={s.session!}
        onDirty={(d) => {
          setDirty(d);
          if (!d) setAsking(false);
        }}
        onSaved={(x) => chat.setSession(x)}
      />
      <GoalPanel
        sessionId={s.id}
        goal={s.goal ?? null}
        note={s.goalNote}
        onChange={(g) => chat.setGoal(g)}
      />
      <ArtifactList sessionId={s.id} />
      <ChatExport sessionId={s.id} />
    </Modal>
  );
}
