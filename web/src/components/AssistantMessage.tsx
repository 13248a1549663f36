import type { ToolLive } from '../lib/chat';
import type { MessageOf } from '../lib/types';
import { Markdown } from './Markdown';
import { Reasoning } from './Reasoning';
import { StoppedNote } from './StoppedNote';
import { ToolCard } from './ToolCard';

/** A committed reply: its reasoning (folded), its text as Markdown, and a card per tool call. */
export function AssistantMessage({
  m,
  results,
  tools,
  waiting,
  showReasoning,
}: {
  m: MessageOf<'assistant'>;
  results: ReadonlyMap<string, MessageOf<'tool'>> | undefined;
  tools: Record<string, ToolLive> | undefined;
  waiting: Set<string> | undefined;
  showReasoning: boolean;
}) {
  const c = m.content ?? {};
  const reasoning = (c.reasoning ?? [])
    .map((r) => r.text)
    .filter(Boolean)
    .join('\n\n');
  const calls = c.tool_calls ?? [];
  return (
    <div class="msg assistant" data-testid="assistant-message" data-id={m.id}>
      {showReasoning && reasoning && <Reasoning text={reasoning} />}
      {c.text ? <Markdown text={c.text} /> : null}
      {calls.map((call) => {
        const r = results?.get(call.id);
        return (
          <ToolCard
            key={call.id}
            name={call.name}
            args={call.arguments}
            live={tools?.[call.id]}
            result={
              r
                ? {
                    output: r.content?.output ?? '',
                    is_error: r.content?.is_error === true,
                    unfinished: r.content?.unfinished,
                  }
                : tools?.[call.id]?.result
            }
            waiting={waiting?.has(call.id) === true}
            current={tools !== undefined}
          />
        );
      })}
      {c.stop_reason === 'interrupted' && <StoppedNote />}
      {c.stop_reason === 'error' && <div class="muted small">(the reply broke off)</div>}
      {c.stop_reason === 'max_tokens' && (
        <div class="muted small">(cut off: the reply reached its length limit)</div>
      )}
    </div>
  );
}
