import type { LiveTurn, ToolLive } from '../lib/chat';
import { Markdown } from './Markdown';
import { Reasoning } from './Reasoning';
import { ToolCard } from './ToolCard';

/** The step being streamed: reasoning, text and tool calls as they arrive. */
export function LiveReply({
  turn,
  tools,
  waiting,
  showReasoning,
}: {
  turn: LiveTurn;
  tools: Record<string, ToolLive>;
  waiting: Set<string>;
  showReasoning: boolean;
}) {
  const nothing = !turn.text && !turn.reasoning && turn.calls.length === 0;
  return (
    <div class="msg assistant live" data-testid="live-reply">
      {showReasoning && turn.reasoning && <Reasoning text={turn.reasoning} streaming />}
      {turn.text && <Markdown text={turn.text} streaming />}
      {turn.calls.map((c) => (
        <ToolCard
          key={c.call_id}
          name={c.name}
          args={c.arguments}
          live={tools[c.call_id]}
          result={tools[c.call_id]?.result}
          waiting={waiting.has(c.call_id)}
          current
        />
      ))}
      {nothing && (
        <div class="typing" role="img" aria-label="The agent is working">
          <span />
          <span />
          <span />
        </div>
      )}
    </div>
  );
}
