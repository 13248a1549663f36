/** The model's reasoning, folded away unless it is streaming right now. */
export function Reasoning({ text, streaming = false }: { text: string; streaming?: boolean }) {
  return (
    <details class="reasoning" open={streaming} data-testid="reasoning">
      <summary>{streaming ? 'Thinking…' : 'Reasoning'}</summary>
      <div class="reasoning-text">{text}</div>
    </details>
  );
}
