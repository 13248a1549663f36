import { useEffect, useMemo, useState } from 'preact/hooks';
import { describe } from '../lib/api';
import { type ChatState, ChatSession, type Spend, takeQueuedMessage } from '../lib/chat';
import { tokens, usd } from '../lib/format';
import { useStore } from '../lib/store';
import { goalUsage } from '../lib/types';
import { toast } from '../lib/toast';
import { ApprovalDialog } from './ApprovalDialog';
import { ChatSide } from './ChatSide';
import { Composer } from './Composer';
import { Transcript } from './Transcript';
import { Icon } from './Icon';
import { ModelPicker } from './ModelPicker';

/** What the chat cost so far; tokens when no call had a price. */
function SpendChip({ spend }: { spend: Spend }) {
  const all = spend.input_tokens + spend.output_tokens;
  const priced = spend.calls - spend.unknown_calls - spend.unpriced_calls;
  const shown = priced > 0 ? usd(spend.cost_usd) : `${tokens(all)} tokens`;
  const notes = [
    `${tokens(spend.input_tokens)} in, ${tokens(spend.output_tokens)} out over ${spend.calls} model call${spend.calls === 1 ? '' : 's'}`,
    spend.unpriced_calls > 0 ? `${spend.unpriced_calls} without a known price` : '',
    spend.unknown_calls > 0 ? `${spend.unknown_calls} whose provider reported no usage` : '',
  ].filter(Boolean);
  return (
    <span
      class="chip spend"
      role="note"
      aria-label={`Cost so far: ${shown}; ${notes.join('; ')}`}
      title={`Cost so far: ${notes.join('; ')}`}
      data-testid="chat-spend"
    >
      {shown}
    </span>
  );
}

/**
 * The chat's title; while a new chat waits for the one the server writes after its first reply,
 * the first words of its first message.
 */
function shownTitle(s: ChatState): string {
  const title = s.session?.title;
  if (title !== 'New session') return title ?? '…';
  const first = s.messages.find((m) => m.role === 'user' && m.content?.continuation !== true);
  const text = (first?.role === 'user' ? first.content?.text : s.sending?.text)?.trim() ?? '';
  const line = text.split('\n')[0]!.trim();
  return line ? (line.length > 60 ? `${line.slice(0, 59)}…` : line) : title;
}

/** One open chat: its header, transcript, approvals, composer, and its side panel. */
export function ChatPane({
  id,
  focus,
  onShowList,
}: {
  id: string;
  /** A message to scroll to and mark (opened from a search result). */
  focus?: string | undefined;
  onShowList: () => void;
}) {
  const chat = useMemo(() => new ChatSession(id), [id]);
  const s = useStore(chat.state);
  const [side, setSide] = useState(false);
  const [restore, setRestore] = useState<
    { text: string; attachments: string[]; error?: string } | undefined
  >();
  useEffect(() => {
    if (s.restore) setRestore(s.restore);
  }, [s.restore]);

  useEffect(() => {
    chat.open();
    const first = takeQueuedMessage(id);
    if (first) {
      void chat
        .whenLive(3000)
        .then(() => chat.send(first.text, first.attachments, first.resources))
        .catch((err) => {
          setRestore({ ...first, error: `The message was not sent: ${describe(err)}` });
          toast(`The message was not sent: ${describe(err)}`, { kind: 'error' });
        });
    }
    return () => chat.close();
  }, [chat]);

  const running = s.turn !== undefined || s.sending !== undefined;
  const title = shownTitle(s);
  const goal = s.goal;
  return (
    <div class={`chat-pane${side ? ' with-side' : ''}`}>
      <p class="sr-only" role="status" data-testid="announcer">
        {s.announce}
      </p>
      <div class="chat-head">
        <button type="button" class="icon only-phone" aria-label="Show chats" onClick={onShowList}>
          <Icon name="menu" />
        </button>
        <h2 title={title} data-testid="chat-title">
          {title}
        </h2>
        {goal && (
          <button
            type="button"
            class={`chip goal-chip ${goal.status}`}
            onClick={() => setSide(true)}
            title={goal.objective}
            data-testid="goal-chip"
          >
            Goal: {goal.status}
            <span class="hide-phone">
              {goal.token_budget
                ? ` · ${tokens(goalUsage(goal).tokens)}/${tokens(goal.token_budget)}`
                : ''}
            </span>
          </button>
        )}
        {s.session && <ModelPicker session={s.session} onSaved={(x) => chat.setSession(x)} />}
        {running && <span class="chip running">working…</span>}
        {s.spend && s.spend.calls > 0 && <SpendChip spend={s.spend} />}
        <button
          type="button"
          class="ghost"
          onClick={() => setSide(!side)}
          aria-expanded={side}
          aria-haspopup="dialog"
          data-testid="session-settings-toggle"
        >
          Session
        </button>
      </div>
      {s.loading && s.messages.length === 0 ? (
        <div class="transcript empty muted">Loading…</div>
      ) : s.gone ? (
        <div class="transcript empty">
          <p>This chat was deleted. It stays in the trash (Settings → Trash) until it expires.</p>
        </div>
      ) : s.error && s.messages.length === 0 ? (
        <div class="transcript empty">
          <p class="error">{s.error}</p>
        </div>
      ) : (
        <Transcript key={id} s={s} streamed={chat.streamed} focus={focus} />
      )}
      {s.approvals[0] && (
        <ApprovalDialog
          approval={s.approvals[0]}
          more={s.approvals.length - 1}
          onAnswer={(d) => chat.answer(s.approvals[0]!.approval_id, d)}
        />
      )}
      {!s.gone && (
        <Composer
          running={running}
          restore={restore}
          onSend={(text, files, resources) => chat.send(text, files, resources)}
          onInterrupt={() => chat.interrupt()}
        />
      )}
      {side && s.session && <ChatSide chat={chat} s={s} onClose={() => setSide(false)} />}
    </div>
  );
}
