import { useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import type { ChatState, ToolLive } from '../lib/chat';
import { pure } from '../lib/pure';
import type { Message } from '../lib/types';
import { AssistantMessage } from './AssistantMessage';
import { LiveReply } from './LiveReply';
import { ToolCard } from './ToolCard';
import { UserMessage } from './UserMessage';

/**
 * Pairs each tool result with its call in the latest assistant message before it: call ids are not
 * unique across a session (some providers number them per reply). Recomputed only when the list
 * of messages changes, so the maps keep their identity between streamed frames.
 */
function pair(messages: Message[]): { paired: Map<string, Map<string, Message>>; pairedTools: Set<string> } {
  const paired = new Map<string, Map<string, Message>>();
  const pairedTools = new Set<string>();
  let open: Array<{ msg: string; call: string }> = [];
  for (const m of messages) {
    const calls = m.role === 'assistant' ? ((m.content?.tool_calls ?? []) as Array<{ id: string }>) : [];
    if (calls.length > 0) {
      open = calls.map((c) => ({ msg: m.id, call: c.id }));
      paired.set(m.id, new Map());
    } else if (m.role === 'tool') {
      const at = open.findIndex((o) => o.call === m.content?.tool_call_id);
      if (at >= 0) {
        paired.get(open[at]!.msg)!.set(open[at]!.call, m);
        pairedTools.add(m.id);
        open.splice(at, 1);
      }
    }
  }
  return { paired, pairedTools };
}

interface ItemProps {
  m: Message;
  results: Map<string, Message> | undefined;
  /** Live tool state and waiting approvals: only for messages of the running turn (else undefined). */
  tools: Record<string, ToolLive> | undefined;
  waiting: Set<string> | undefined;
  showReasoning: boolean;
}

/** One committed message; renders again only when its own props change. */
const MessageItem = pure(function MessageItem({ m, results, tools, waiting, showReasoning }: ItemProps) {
  if (m.role === 'user') return <UserMessage text={m.content?.text ?? ''} attachments={m.content?.attachments} continuation={m.content?.continuation === true} />;
  if (m.role === 'assistant') return <AssistantMessage m={m} results={results} tools={tools} waiting={waiting} showReasoning={showReasoning} />;
  if (m.role === 'tool') return <ToolCard name={m.content?.name ?? 'tool'} result={{ output: String(m.content?.output ?? ''), is_error: m.content?.is_error === true }} />;
  return <div class="system-note muted small">{typeof m.content?.text === 'string' ? m.content.text : 'System note'}</div>;
});

/**
 * The transcript: committed messages (tool results folded into their calls' cards), then the live
 * turn. It is a `log` a keyboard can scroll; its own live announcing is off (it would read every
 * streamed delta): the chat announces a finished reply once, in its status region.
 */
export function Transcript({ s }: { s: ChatState }) {
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  const { paired, pairedTools } = useMemo(() => pair(s.messages), [s.messages]);
  const waiting = useMemo(() => new Set(s.approvals.map((a) => a.call_id ?? '')), [s.approvals]);
  const showReasoning = s.session?.show_reasoning !== false;

  return (
    <div
      class="transcript"
      ref={box}
      role="log"
      aria-live="off"
      aria-label="Messages"
      tabIndex={0}
      data-testid="transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
      }}
    >
      {s.messages.length === 0 && !s.sending && !s.turn && !s.ended && <p class="muted center">Nothing here yet: say hello below.</p>}
      {s.messages.map((m) => {
        if (pairedTools.has(m.id)) return null;
        const current = s.turnSeq !== undefined && m.seq > s.turnSeq;
        return <MessageItem key={m.id} m={m} results={paired.get(m.id)} tools={current ? s.tools : undefined} waiting={current ? waiting : undefined} showReasoning={showReasoning} />;
      })}
      {s.sending && <UserMessage text={s.sending.text} pending />}
      {s.turn && <LiveReply turn={s.turn} tools={s.tools} waiting={waiting} showReasoning={showReasoning} />}
      {s.ended?.kind === 'failed' && (
        <div class="turn-error" role="alert" data-testid="turn-error">
          {s.ended.reason === 'no_model' ? (
            <>
              No model is set up yet, so nothing was sent. Add one in <a href="#/settings/models">Settings → Models</a>; your message is kept below.
            </>
          ) : (
            <>
              The turn failed{s.ended.reason ? ` (${s.ended.reason})` : ''}: {s.ended.message ?? 'no reason given'}
            </>
          )}
        </div>
      )}
      {s.ended?.kind === 'interrupted' && <div class="system-note muted small">Interrupted.</div>}
    </div>
  );
}
