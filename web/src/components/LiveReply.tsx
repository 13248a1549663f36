import { useLayoutEffect } from 'preact/hooks';
import type { LiveTurn, Streamed, ToolLive } from '../lib/chat';
import { type Store, useStore } from '../lib/store';
import { Markdown } from './Markdown';
import { Reasoning } from './Reasoning';
import { ToolCard } from './ToolCard';

/**
 * The step being streamed: reasoning, text and tool calls as they arrive. It follows the streamed
 * text itself, so a delta redraws this reply alone.
 */
export function LiveReply({
  turn,
  streamed,
  tools,
  waiting,
  showReasoning,
  onDrawn,
}: {
  turn: LiveTurn;
  streamed: Store<Streamed>;
  tools: Record<string, ToolLive>;
  waiting: Set<string>;
  showReasoning: boolean;
  /** Called after each drawing (the transcript keeps a reader at the bottom there). */
  onDrawn: () => void;
}) {
  const { text, reasoning } = useStore(streamed);
  useLayoutEffect(onDrawn);
  const nothing = !text && !reasoning && turn.calls.length === 0;
  return (
    <div class="msg assistant live" data-testid="live-reply">
      {showReasoning && reasoning && <Reasoning text={reasoning} streaming />}
      {text && <Markdown text={text} streaming />}
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
