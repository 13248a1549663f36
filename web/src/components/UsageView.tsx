import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { type Answer, api, describe } from '../lib/api';
import { tokens, usd, when } from '../lib/format';

type UsagePage = Answer<'GET', '/api/usage'>;
type Totals = UsagePage['items'][number];

const DAYS = 30;
const allTokens = (t: Omit<Totals, 'key'>) =>
  t.input_tokens + t.cached_input_tokens + t.cache_write_tokens + t.output_tokens;
const amount = (unit: 'usd' | 'tokens', n: number) => (unit === 'usd' ? usd(n) : tokens(n));

/**
 * What the model calls of the last 30 days used and cost: a chart per day (uPlot; the same
 * numbers in a table for keyboard and screen-reader users), the budgets with what they spent,
 * and the top sessions and origins.
 */
export function UsageView() {
  const [days, setDays] = useState<UsagePage | undefined>();
  const [sessions, setSessions] = useState<Totals[]>([]);
  const [origins, setOrigins] = useState<Totals[]>([]);
  const [error, setError] = useState('');
  const chart = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const from = new Date(Date.now() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const q = (group_by: 'day' | 'session' | 'origin') =>
      api('GET', '/api/usage', { query: { from, group_by, limit: 200 } });
    Promise.all([q('day'), q('session'), q('origin')])
      .then(([d, s, o]) => {
        setDays(d);
        setSessions(
          [...s.items]
            .sort((a, b) => b.cost_usd - a.cost_usd || allTokens(b) - allTokens(a))
            .slice(0, 10),
        );
        setOrigins([...o.items].sort((a, b) => allTokens(b) - allTokens(a)));
        setError('');
      })
      .catch((err: unknown) => setError(describe(err)));
  }, []);

  useEffect(() => {
    const el = chart.current;
    if (!el || !days) return;
    const xs = days.items.map((i) => Date.parse(`${i.key}T00:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        width: Math.max(280, Math.min(900, el.clientWidth || 600)),
        height: 220,
        legend: { show: false },
        series: [
          {},
          { label: 'Cost (USD)', stroke: '#2f5fc4', width: 2, scale: 'usd' },
          { label: 'Tokens', stroke: '#17703d', width: 2, scale: 'tok' },
        ],
        axes: [{}, { scale: 'usd' }, { scale: 'tok', side: 1, grid: { show: false } }],
      },
      [xs, days.items.map((i) => i.cost_usd), days.items.map(allTokens)],
      el,
    );
    return () => plot.destroy();
  }, [days]);

  return (
    <div class="page" data-testid="usage-view">
      <h1 class="page-title">Usage</h1>
      {error && <p class="error-state">{error}</p>}
      {days && (
        <div class="cards">
          <div class="card stat">
            <span class="muted small">Cost, last {DAYS} days</span>
            <strong data-testid="usage-cost">{usd(days.totals.cost_usd)}</strong>
          </div>
          <div class="card stat">
            <span class="muted small">Tokens</span>
            <strong>{tokens(allTokens(days.totals))}</strong>
          </div>
          <div class="card stat">
            <span class="muted small">Model calls</span>
            <strong>{days.totals.calls}</strong>
            {days.totals.unknown_calls > 0 && (
              <span class="muted small">{days.totals.unknown_calls} without usage reported</span>
            )}
          </div>
        </div>
      )}
      {days && days.budgets.states.length > 0 && (
        <section aria-labelledby="usage-budgets">
          <h2 id="usage-budgets">Budgets</h2>
          <ul class="plain">
            {days.budgets.states.map((b) => (
              <li key={`${b.key}:${b.unit}`} data-testid="budget-state">
                <label>
                  {b.scope} ({b.period}): {amount(b.unit, b.spent)} of {amount(b.unit, b.limit)}{' '}
                  <progress max={b.limit} value={Math.min(b.spent, b.limit)} />
                </label>
                {b.resets_at && <span class="muted small"> resets {when(b.resets_at)}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      <figure>
        <div
          ref={chart}
          role="img"
          aria-label={`Cost and tokens per day over the last ${DAYS} days; the table below has the numbers`}
          data-testid="usage-chart"
        />
        <figcaption class="muted small">
          Cost (blue, left) and tokens (green, right) per UTC day.
        </figcaption>
      </figure>
      {days && (
        <div class="table-wrap" role="region" aria-label="Usage per day" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th>Day</th>
                <th>Calls</th>
                <th>Tokens</th>
                <th>Cost</th>
              </tr>
            </thead>
            <tbody>
              {days.items.map((d) => (
                <tr key={d.key}>
                  <td>{d.key}</td>
                  <td>{d.calls}</td>
                  <td>{tokens(allTokens(d))}</td>
                  <td>{usd(d.cost_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Top title="Top sessions" rows={sessions} link testid="usage-session" />
      <Top title="By origin" rows={origins} testid="usage-origin" />
    </div>
  );
}

function Top(props: { title: string; rows: Totals[]; link?: boolean; testid: string }) {
  if (props.rows.length === 0) return null;
  return (
    <div class="table-wrap" role="region" aria-label={props.title} tabIndex={0}>
      <table>
        <caption>{props.title}</caption>
        <thead>
          <tr>
            <th>{props.link ? 'Session' : 'Origin'}</th>
            <th>Calls</th>
            <th>Tokens</th>
            <th>Cost</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr key={r.key} data-testid={props.testid}>
              <td>
                {props.link && r.key ? <a href={`#/chat/${r.key}`}>{r.key}</a> : r.key || '–'}
              </td>
              <td>{r.calls}</td>
              <td>{tokens(allTokens(r))}</td>
              <td>{usd(r.cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
