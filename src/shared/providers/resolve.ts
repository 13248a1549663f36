import { publicMcpServer } from '../config/mcp.js';
import { maskedConfig } from '../config/secrets.js';
import { slotNames, type Config, type ModelEntry } from '../config/schema.js';
import { findProvider, type ProviderProtocol } from './catalog.js';
import { pricesOf } from './prices.js';

/** How to reach a model entry: its protocol, address and key, with the catalog filling the gaps. */
export interface ResolvedModel {
  protocol: ProviderProtocol;
  base_url: string | null;
  api_key: string | undefined;
  api_key_source: 'config' | 'env' | null;
}

export function resolveModel(
  entry: ModelEntry,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedModel {
  const provider = findProvider(entry.provider);
  const envName = provider?.key_env ?? null;
  const envKey = envName ? env[envName] : undefined;
  return {
    protocol: entry.protocol ?? provider?.protocol ?? 'openai',
    base_url: entry.base_url ?? provider?.base_url ?? null,
    api_key: entry.api_key ?? (envKey || undefined),
    api_key_source: entry.api_key ? 'config' : envKey ? 'env' : null,
  };
}

/** A model entry as the API shows it: never the key, only whether one is set and where from. */
export function publicModel(id: string, entry: ModelEntry, config: Config) {
  const r = resolveModel(entry);
  return {
    id,
    provider: entry.provider,
    model: entry.model,
    protocol: r.protocol,
    base_url: r.base_url,
    api_key_set: r.api_key !== undefined,
    api_key_source: r.api_key_source,
    context_window: entry.context_window ?? null,
    max_output_tokens: entry.max_output_tokens ?? null,
    vision: takesImages(entry),
    ...priceView(entry),
    slots: slotNames.filter((s) => config.slots[s] === id),
  };
}

/**
 * The effective configuration: every secret the schema marks is masked (channels, and any section
 * to come), and the key, model keys and MCP env/headers are shown only as set or by their names.
 */
export function publicConfig(config: Config) {
  const { access_key, models: _, ...rest } = maskedConfig(config);
  return {
    ...rest,
    access_key_in_config: access_key !== undefined,
    models: Object.entries(config.models).map(([id, e]) => publicModel(id, e, config)),
    mcp: {
      servers: Object.entries(config.mcp.servers).map(([name, s]) => publicMcpServer(name, s)),
    },
  };
}

/** Whether a model entry's model takes images: said by the entry, else known from the catalog. */
export function takesImages(entry: ModelEntry): boolean {
  return (
    entry.vision ??
    findProvider(entry.provider)?.models.find((m) => m.id === entry.model)?.vision ??
    false
  );
}

/** The prices a model entry is charged at (null: none known), where they come from and when taken. */
function priceView(entry: ModelEntry) {
  const p = pricesOf(entry);
  return {
    prices: p?.prices ?? null,
    prices_source: p?.source ?? null,
    prices_taken: p?.taken ?? null,
  };
}
