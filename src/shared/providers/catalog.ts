import { z } from 'zod';

/**
 * The provider catalog served by GET /api/providers: who a model entry can talk to, over which wire
 * protocol, at which default address, and with which key. The list order is the order a UI shows.
 *
 * Base URLs follow each vendor's SDK convention: OpenAI-protocol URLs include the version segment
 * (the adapter appends `/chat/completions`), the Anthropic URL is the bare origin (the adapter
 * appends `/v1/messages`). Lives in shared because the gateway serves it; imports only zod.
 */

export const providerProtocolSchema = z.enum(['openai', 'anthropic']);
export type ProviderProtocol = z.infer<typeof providerProtocolSchema>;

export const catalogModelSchema = z.object({
  id: z.string().min(1),
  /** Whether the model accepts images in a message. */
  vision: z.boolean(),
});

export const providerCatalogEntrySchema = z.object({
  id: z.string().regex(/^[a-z][a-z0-9-]*$/),
  name: z.string().min(1),
  protocol: providerProtocolSchema,
  /** null: the user must supply one (custom). */
  base_url: z.url().nullable(),
  /** Other official addresses of the same vendor (another region). */
  base_url_variants: z.array(z.object({ label: z.string(), base_url: z.url() })),
  /** Environment variable read for the key when the model entry has none; null: no key at all. */
  key_env: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]*$/)
    .nullable(),
  key_required: z.boolean(),
  /** Whether a model entry may choose the protocol (custom endpoints speak either). */
  protocol_choosable: z.boolean(),
  /** Suggestions for the model field; any other model name the vendor serves works too. */
  models: z.array(catalogModelSchema),
  website: z.url().nullable(),
});
export type ProviderCatalogEntry = z.infer<typeof providerCatalogEntrySchema>;

const m = (id: string, vision: boolean) => ({ id, vision });

export const providerCatalog: readonly ProviderCatalogEntry[] = Object.freeze([
  {
    id: 'openai',
    name: 'OpenAI',
    protocol: 'openai',
    base_url: 'https://api.openai.com/v1',
    base_url_variants: [],
    key_env: 'OPENAI_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [m('gpt-5.4', true), m('gpt-5.4-mini', true), m('gpt-4.1', true)],
    website: 'https://platform.openai.com',
  },
  {
    id: 'anthropic',
    name: 'Anthropic',
    protocol: 'anthropic',
    base_url: 'https://api.anthropic.com',
    base_url_variants: [],
    key_env: 'ANTHROPIC_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [m('claude-sonnet-4-6', true), m('claude-opus-4-7', true), m('claude-haiku-4-5', true)],
    website: 'https://console.anthropic.com',
  },
  {
    id: 'deepseek',
    name: 'DeepSeek',
    protocol: 'openai',
    base_url: 'https://api.deepseek.com/v1',
    base_url_variants: [],
    key_env: 'DEEPSEEK_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [m('deepseek-v4-pro', false), m('deepseek-v4-flash', false)],
    website: 'https://platform.deepseek.com',
  },
  {
    id: 'moonshot',
    name: 'Moonshot (Kimi)',
    protocol: 'openai',
    base_url: 'https://api.moonshot.ai/v1',
    base_url_variants: [{ label: 'China', base_url: 'https://api.moonshot.cn/v1' }],
    key_env: 'MOONSHOT_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [m('kimi-k2.6', true), m('kimi-k2.5', true), m('kimi-k2.7-code', false)],
    website: 'https://platform.moonshot.ai',
  },
  {
    id: 'qwen',
    name: 'Qwen (Alibaba Cloud DashScope)',
    protocol: 'openai',
    base_url: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
    base_url_variants: [
      {
        label: 'International (Singapore)',
        base_url: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
      },
    ],
    key_env: 'DASHSCOPE_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [m('qwen3.7-plus', false), m('qwen3.5-flash', false), m('qwen3-vl-plus', true)],
    website: 'https://dashscope.console.aliyun.com',
  },
  {
    id: 'gemini',
    name: 'Google Gemini',
    protocol: 'openai',
    // Google's OpenAI-compatible endpoint; the native Gemini API is a different protocol.
    base_url: 'https://generativelanguage.googleapis.com/v1beta/openai',
    base_url_variants: [],
    key_env: 'GEMINI_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [
      m('gemini-3-flash-preview', true),
      m('gemini-2.5-pro', true),
      m('gemini-2.5-flash', true),
    ],
    website: 'https://aistudio.google.com',
  },
  {
    id: 'openrouter',
    name: 'OpenRouter',
    protocol: 'openai',
    base_url: 'https://openrouter.ai/api/v1',
    base_url_variants: [],
    key_env: 'OPENROUTER_API_KEY',
    key_required: true,
    protocol_choosable: false,
    models: [
      m('anthropic/claude-sonnet-4-6', true),
      m('openai/gpt-5.4', true),
      m('deepseek/deepseek-v4-pro', false),
    ],
    website: 'https://openrouter.ai',
  },
  {
    id: 'ollama',
    name: 'Ollama (local)',
    protocol: 'openai',
    base_url: 'http://127.0.0.1:11434/v1',
    base_url_variants: [],
    key_env: null,
    key_required: false,
    protocol_choosable: false,
    models: [m('qwen3', false), m('gpt-oss:20b', false), m('gemma3', true)],
    website: 'https://ollama.com',
  },
  {
    id: 'custom',
    name: 'Custom endpoint',
    protocol: 'openai',
    base_url: null,
    base_url_variants: [],
    key_env: 'CUSTOM_API_KEY',
    // Local servers (vLLM, llama.cpp, LM Studio) often need none.
    key_required: false,
    protocol_choosable: true,
    models: [],
    website: null,
  },
] satisfies ProviderCatalogEntry[]);

/** The catalog entry for a provider id, or undefined when there is none. */
export function findProvider(id: string): ProviderCatalogEntry | undefined {
  return providerCatalog.find((p) => p.id === id);
}
