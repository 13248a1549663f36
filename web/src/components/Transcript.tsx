import { useLayoutEffect, useRef } from 'preact/hooks';
import type { ChatState } from '../lib/chat';
import type { Message } from '../lib/types';
import { AssistantMessage } from './AssistantMessage';
import { LiveReply } from './LiveReply';
import { ToolCard } from './ToolCard';
import { UserMessage } from './UserMessage';

/** The transcript: committed messages (tool results folded into their calls' cards), then the live turn. */
export function Transcript({ s }: { s: ChatState }) {
  const box = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useLayoutEffect(() => {
    const el = box.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  // Pair each tool result with its call in the latest assistant message before it: call ids are
  // not unique across a session (some providers number them per reply).
  const paired = new Map<string, Map<string, Message>>();
  const pairedTools = new Set<string>();
  let open: Array<{ msg: string; call: string }> = [];
  for (const m of s.messages) {
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
  const showReasoning = s.session?.show_reasoning !== false;

  return (
    <div
      class="transcript"
      ref={box}
      data-testid="transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
      }}
    >
      {s.messages.length === 0 && !s.sending && !s.turn && <p class="muted center">Nothing here yet: say hello below.</p>}
      {s.messages.map((m) => {
        if (m.role === 'user') return <UserMessage key={m.id} text={m.content?.text ?? ''} attachments={m.content?.attachments} continuation={m.content?.continuation === true} />;
        if (m.role === 'assistant') {
          const live = s.turnSeq !== undefined && m.seq > s.turnSeq ? s.tools : undefined;
          return <AssistantMessage key={m.id} m={m} results={paired.get(m.id)} tools={live} showReasoning={showReasoning} />;
        }
        if (m.role === 'tool') {
          if (pairedTools.has(m.id)) return null;
          return <ToolCard key={m.id} name={m.content?.name ?? 'tool'} result={{ output: String(m.content?.output ?? ''), is_error: m.content?.is_error === true }} />;
        }
        return (
          <div key={m.id} class="system-note muted small">
            {typeof m.content?.text === 'string' ? m.content.text : 'System note'}
          </div>
        );
      })}
      {s.sending && <UserMessage text={s.sending.text} pending />}
      {s.turn && <LiveReply turn={s.turn} tools={s.tools} showReasoning={showReasoning} />}
      {s.ended?.kind === 'failed' && (
        <div class="turn-error" role="alert" data-testid="turn-error">
          The turn failed{s.ended.reason ? ` (${s.ended.reason})` : ''}: {s.ended.message ?? 'no reason given'}
        </div>
      )}
      {s.ended?.kind === 'interrupted' && <div class="system-note muted small">Interrupted.</div>}
    </div>
  );
}
