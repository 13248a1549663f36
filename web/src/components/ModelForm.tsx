import { useId, useState } from 'preact/hooks';
import { api, type BodyOf, describe } from '../lib/api';
import type { ModelEntry, Prices, Provider } from '../lib/types';

interface Props {
  providers: Provider[];
  /** Editing this entry (PATCH); otherwise a new one is added (POST). */
  entry?: ModelEntry | undefined;
  submitLabel: string;
  onSaved: (entry: ModelEntry) => Promise<void> | void;
  onCancel?: () => void;
  /** A new entry starts from this one's provider, address and protocol (the lite model after the main). */
  like?: ModelEntry | undefined;
  /** Whether the submit button is the view's one primary action (default true). */
  primary?: boolean;
}

const num = (s: string): number | undefined => {
  const n = parseInt(s, 10);
  return Number.isFinite(n) ? n : undefined;
};

/** A price field: empty is undefined (the shipped price, if any); anything else must be a number ≥ 0. */
const dollars = (s: string, what: string): number | undefined => {
  if (s.trim() === '') return undefined;
  const n = Number(s);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`The ${what} price is US dollars per million tokens: a number, 0 or more.`);
  return n;
};

const priceText = (n: number | undefined) => (n === undefined ? '' : String(n));

/**
 * The prices to save from the three fields: null when all are empty (the shipped price applies,
 * or none); otherwise each empty field takes the shipped price, and cache writes (not asked here)
 * keep what the entry had or the shipped price.
 */
function pricesToSave(
  fields: { input: string; cached: string; output: string },
  shipped: Prices | undefined,
  own: Prices | null,
): Prices | null {
  const input = dollars(fields.input, 'input');
  const cached = dollars(fields.cached, 'cached input');
  const output = dollars(fields.output, 'output');
  if (input === undefined && cached === undefined && output === undefined) return null;
  const i = input ?? shipped?.input;
  const o = output ?? shipped?.output;
  if (i === undefined || o === undefined)
    throw new Error(
      'svc ships no price for this model: give both the input and the output price (or neither).',
    );
  const c = cached ?? shipped?.cached_input;
  const w = own?.cache_write ?? shipped?.cache_write;
  return {
    input: i,
    ...(c === undefined ? {} : { cached_input: c }),
    ...(w === undefined ? {} : { cache_write: w }),
    output: o,
  };
}

/** What the form says of svc's shipped price for the model, or that it has none. */
function shippedNote(model: string, shipped: Prices | undefined, taken: string | undefined) {
  if (!shipped)
    return 'svc ships no price for this model: without one, its calls are counted as unpriced and cost nothing in the sums.';
  const cached =
    shipped.cached_input === undefined ? '' : `, cached input $${shipped.cached_input}`;
  return `Shipped price for ${model}${taken ? ` (as listed on ${taken})` : ''}: input $${shipped.input}${cached}, output $${shipped.output}. An empty field uses it.`;
}

const samePrices = (a: Prices | null, b: Prices | null) =>
  JSON.stringify(a && sorted(a)) === JSON.stringify(b && sorted(b));
const sorted = (p: Prices) =>
  Object.fromEntries(Object.entries(p).sort(([x], [y]) => (x < y ? -1 : 1)));

/** A model entry: provider from the catalog, model, key, and (where it applies) address and protocol. */
export function ModelForm({
  providers,
  entry,
  submitLabel,
  onSaved,
  onCancel,
  like,
  primary = true,
}: Props) {
  const from = entry ?? like;
  const initialProvider = from?.provider ?? providers[0]?.id ?? 'custom';
  const [provider, setProvider] = useState(initialProvider);
  const p = providers.find((x) => x.id === provider);
  const [model, setModel] = useState(
    entry?.model ?? p?.models.find((m) => m.id !== like?.model)?.id ?? '',
  );
  const [protocol, setProtocol] = useState(from?.protocol ?? p?.protocol ?? 'openai');
  const [baseUrl, setBaseUrl] = useState(from?.base_url ?? p?.base_url ?? '');
  const [apiKey, setApiKey] = useState('');
  const [id, setId] = useState('');
  const [ctx, setCtx] = useState(entry?.context_window ? String(entry.context_window) : '');
  const [maxOut, setMaxOut] = useState(
    entry?.max_output_tokens ? String(entry.max_output_tokens) : '',
  );
  // The entry's own prices fill the fields; shipped ones only show as placeholders.
  const ownPrices = entry?.prices_source === 'config' ? entry.prices : null;
  const [priceIn, setPriceIn] = useState(priceText(ownPrices?.input));
  const [priceCached, setPriceCached] = useState(priceText(ownPrices?.cached_input));
  const [priceOut, setPriceOut] = useState(priceText(ownPrices?.output));
  const shipped = p?.prices?.[model.trim()];
  const noteId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  // A new entry of the provider the person already gave a key for (the lite model beside the
  // main one) uses that key unless another is typed; the server copies it, the page never sees it.
  const shareKey = !entry && like?.api_key_set && like.provider === provider ? like.id : undefined;

  const pick = (next: string) => {
    const np = providers.find((x) => x.id === next);
    setProvider(next);
    setModel(np?.models[0]?.id ?? '');
    setProtocol(np?.protocol ?? 'openai');
    setBaseUrl(np?.base_url ?? '');
    setError('');
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const url = baseUrl.trim();
      const defaultUrl = p?.base_url ?? '';
      const prices = pricesToSave(
        { input: priceIn, cached: priceCached, output: priceOut },
        shipped,
        ownPrices,
      );
      let saved: ModelEntry;
      if (entry) {
        const patch: BodyOf<'PATCH', '/api/config/models/{id}'> = {};
        if (provider !== entry.provider) patch.provider = provider;
        if (model.trim() !== entry.model) patch.model = model.trim();
        if (p?.protocol_choosable && protocol !== entry.protocol) patch.protocol = protocol;
        if (url !== (entry.base_url ?? '')) patch.base_url = url && url !== defaultUrl ? url : null;
        if (apiKey.trim()) patch.api_key = apiKey.trim();
        if ((num(ctx) ?? null) !== entry.context_window) patch.context_window = num(ctx) ?? null;
        if ((num(maxOut) ?? null) !== entry.max_output_tokens)
          patch.max_output_tokens = num(maxOut) ?? null;
        if (!samePrices(prices, ownPrices)) patch.prices = prices;
        saved =
          Object.keys(patch).length > 0
            ? await api('PATCH', '/api/config/models/{id}', {
                params: { id: entry.id },
                body: patch,
              })
            : entry;
      } else {
        const body: BodyOf<'POST', '/api/config/models'> = { provider, model: model.trim() };
        if (id.trim()) body.id = id.trim();
        if (p?.protocol_choosable) body.protocol = protocol;
        if (url && url !== defaultUrl) body.base_url = url;
        if (apiKey.trim()) body.api_key = apiKey.trim();
        else if (shareKey) body.api_key_from = shareKey;
        if (num(ctx)) body.context_window = num(ctx);
        if (num(maxOut)) body.max_output_tokens = num(maxOut);
        if (prices) body.prices = prices;
        saved = await api('POST', '/api/config/models', { body });
      }
      setApiKey('');
      await onSaved(saved);
    } catch (err) {
      setError(describe(err));
    } finally {
      setBusy(false);
    }
  };

  const listId = `models-${provider}`;
  return (
    <form class="stack model-form" onSubmit={submit} data-testid="model-form">
      <label class="field">
        <span>Provider</span>
        <select value={provider} onChange={(e) => pick(e.currentTarget.value)} name="provider">
          {providers.map((x) => (
            <option key={x.id} value={x.id}>
              {x.name}
            </option>
          ))}
        </select>
      </label>
      {p?.protocol_choosable && (
        <label class="field">
          <span>Protocol</span>
          <select
            value={protocol}
            onChange={(e) =>
              setProtocol(e.currentTarget.value === 'anthropic' ? 'anthropic' : 'openai')
            }
            name="protocol"
          >
            <option value="openai">OpenAI-compatible (chat completions)</option>
            <option value="anthropic">Anthropic-compatible (messages)</option>
          </select>
        </label>
      )}
      {/* Always shown: an OpenAI-compatible server elsewhere is reached by changing only this. */}
      <label class="field">
        <span>
          Base URL
          {p?.base_url ? (
            <span class="muted small"> (the provider's own unless changed)</span>
          ) : (
            ' (required)'
          )}
        </span>
        <input
          type="url"
          name="base_url"
          value={baseUrl}
          required={!p?.base_url}
          placeholder="https://host/v1"
          list={`urls-${provider}`}
          onInput={(e) => setBaseUrl(e.currentTarget.value)}
          spellcheck={false}
        />
        {p && p.base_url_variants.length > 0 && (
          <datalist id={`urls-${provider}`}>
            {p.base_url && <option value={p.base_url} />}
            {p.base_url_variants.map((v) => (
              <option key={v.base_url} value={v.base_url}>
                {v.label}
              </option>
            ))}
          </datalist>
        )}
      </label>
      <label class="field">
        <span>Model</span>
        <input
          name="model"
          value={model}
          required
          list={listId}
          onInput={(e) => setModel(e.currentTarget.value)}
          spellcheck={false}
        />
        <datalist id={listId}>
          {p?.models.map((m) => (
            <option key={m.id} value={m.id} />
          ))}
        </datalist>
      </label>
      {(p?.key_required !== false || provider === 'custom') && (
        <label class="field">
          <span>
            API key
            {p?.key_env ? (
              <span class="muted small"> (or set {p.key_env} on the server)</span>
            ) : null}
          </span>
          <input
            type="password"
            name="api_key"
            autoComplete="off"
            value={apiKey}
            placeholder={
              entry?.api_key_set
                ? 'saved (leave empty to keep it)'
                : shareKey
                  ? `the key of ${shareKey} (leave empty to use it)`
                  : ''
            }
            onInput={(e) => setApiKey(e.currentTarget.value)}
          />
        </label>
      )}
      <details class="advanced">
        <summary>Advanced</summary>
        {!entry && (
          <label class="field">
            <span>Entry id (optional)</span>
            <input
              value={id}
              placeholder="made from the model name"
              onInput={(e) => setId(e.currentTarget.value)}
              spellcheck={false}
            />
          </label>
        )}
        <label class="field">
          <span>Context window (tokens)</span>
          <input
            type="number"
            min={1024}
            value={ctx}
            onInput={(e) => setCtx(e.currentTarget.value)}
          />
        </label>
        <label class="field">
          <span>Max output tokens</span>
          <input
            type="number"
            min={1}
            value={maxOut}
            onInput={(e) => setMaxOut(e.currentTarget.value)}
          />
        </label>
        <fieldset class="stack prices" data-testid="model-prices">
          <legend>Prices (US dollars per million tokens, optional)</legend>
          <p class="muted small" id={noteId} data-testid="shipped-prices">
            {shippedNote(model.trim(), shipped, p?.prices_taken)}
          </p>
          {(
            [
              ['price_input', 'Input', priceIn, setPriceIn, shipped?.input],
              [
                'price_cached_input',
                'Cached input',
                priceCached,
                setPriceCached,
                shipped?.cached_input,
              ],
              ['price_output', 'Output', priceOut, setPriceOut, shipped?.output],
            ] as const
          ).map(([name, label, value, set, fallback]) => (
            <label key={name} class="field">
              <span>{label}</span>
              <input
                type="number"
                name={name}
                min={0}
                step="any"
                inputMode="decimal"
                value={value}
                placeholder={fallback === undefined ? '' : String(fallback)}
                aria-describedby={noteId}
                onInput={(e) => set(e.currentTarget.value)}
              />
            </label>
          ))}
        </fieldset>
      </details>
      {error && (
        <p class="error small" role="alert">
          {error}
        </p>
      )}
      <div class="actions">
        <button type="submit" class={primary ? 'primary' : undefined} disabled={busy}>
          {busy ? 'Working…' : submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
