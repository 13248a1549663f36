import type { TurnInfo } from '../lib/chat';
import { tokens, usd } from '../lib/format';
import { pure } from '../lib/pure';

/** Seconds between two times, for "took 4 s". */
const took = (a: string, b: string) => Math.max(0, (Date.parse(b) - Date.parse(a)) / 1000);

/**
 * Under a turn's last message: what it cost, folded to one line; open, its tokens by kind, its
 * model calls and how long it took. A call whose provider reported nothing is said, not guessed.
 */
export const TurnDetails = pure(function TurnDetails({ t }: { t: TurnInfo }) {
  const u = t.spend;
  const priced = u.calls - u.unknown_calls - u.unpriced_calls > 0;
  const all = u.input_tokens + u.output_tokens;
  const line = [priced ? usd(u.cost_usd) : '', `${tokens(all)} tokens`].filter(Boolean).join(' · ');
  const seconds = t.ended_at ? took(t.started_at, t.ended_at) : undefined;
  return (
    <details class="turn-details muted small" data-testid="turn-details">
      <summary>Turn: {line}</summary>
      <ul class="plain">
        <li>
          {tokens(u.input_tokens)} input tokens
          {u.cached_input_tokens > 0 ? ` (${tokens(u.cached_input_tokens)} cached)` : ''},{' '}
          {tokens(u.output_tokens)} output
          {u.reasoning_tokens > 0 ? ` (${tokens(u.reasoning_tokens)} reasoning)` : ''}
        </li>
        <li>
          {u.calls} model call{u.calls === 1 ? '' : 's'}
          {seconds !== undefined
            ? `, ${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`
            : ''}
          , {t.status}
        </li>
        {priced && <li>Cost: {usd(u.cost_usd)}</li>}
        {u.unpriced_calls > 0 && <li>{u.unpriced_calls} call(s) without a known price</li>}
        {u.unknown_calls > 0 && <li>{u.unknown_calls} call(s) whose provider reported no usage</li>}
      </ul>
    </details>
  );
});
