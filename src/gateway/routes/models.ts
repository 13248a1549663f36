import { z } from 'zod';
import {
  modelEntrySchema,
  modelIdSchema,
  slotNames,
  type Config,
  type SlotName,
  type ModelEntry,
} from '../../shared/config/schema.js';
import { unmaskSecrets } from '../../shared/config/secrets.js';
import { ApiError } from '../../shared/errors.js';
import { recordModelTest } from '../../shared/onboarding.js';
import { modelPatchSchema } from '../../shared/protocol/ipc.js';
import { findProvider, providerCatalog } from '../../shared/providers/catalog.js';
import { builtinPrices, PRICES_TAKEN } from '../../shared/providers/prices.js';
import { publicConfig, publicModel, resolveModel } from '../../shared/providers/resolve.js';
import { MetaStore } from '../../shared/store/meta.js';
import { own } from '../../shared/own.js';
import type { Deps } from '../deps.js';
import {
  modelDeleted,
  modelList,
  modelTestResult,
  modelView,
  providerList,
  publicConfigView,
  slotAnswer,
} from '../../shared/protocol/answers.js';
import { route, type Route } from '../route.js';

const slotSchema = z.enum(slotNames);
const slotBody = z.object({ model_id: modelIdSchema.nullable() }).strict();

/** Providers, the effective config, model entries, the two slots, and the provider test. */
export function modelRoutes(deps: Deps): Route[] {
  const meta = new MetaStore(deps.db);
  const entryOr404 = (id: string): ModelEntry => {
    const entry = own(deps.config().models, id);
    if (!entry)
      throw new ApiError(
        'not_found',
        `There is no model entry "${id}"; GET /api/config/models lists them.`,
      );
    return entry;
  };

  const slotRoutes = slotSchema.options.flatMap((slot) => {
    const set = async ({ body }: { body: z.infer<typeof slotBody> }) => {
      await deps.endpoint.request('config.slots.set', { slot, model_id: body.model_id });
      deps.publish('server', 'config.updated', { slots: deps.config().slots });
      return { body: slotView(deps.config(), slot) };
    };
    return [
      route({
        method: 'GET',
        path: `/api/config/models/${slot}`,
        summary: `The model in the ${slot} slot.`,
        response: slotAnswer,
        handler: () => ({ body: slotView(deps.config(), slot) }),
      }),
      route({
        method: 'PUT',
        path: `/api/config/models/${slot}`,
        summary: `Puts a model entry in the ${slot} slot (null empties it).`,
        body: slotBody,
        response: slotAnswer,
        handler: set,
      }),
      route({
        method: 'POST',
        path: `/api/config/models/${slot}`,
        summary: `Same as PUT: puts a model entry in the ${slot} slot.`,
        body: slotBody,
        response: slotAnswer,
        handler: set,
      }),
    ];
  });

  return [
    route({
      method: 'GET',
      path: '/api/providers',
      summary:
        "The providers a model entry can use: protocol, default address, key variable, suggested models, and svc's shipped prices of its well-known models (US dollars per million tokens, as listed on prices_taken).",
      response: providerList,
      handler: () => ({
        body: {
          items: providerCatalog.map((p) => ({
            ...p,
            prices: builtinPrices(p.id),
            prices_taken: PRICES_TAKEN,
          })),
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/api/config',
      summary: 'The effective configuration, every secret redacted.',
      response: publicConfigView,
      handler: () => ({ body: publicConfig(deps.config()) }),
    }),
    route({
      method: 'GET',
      path: '/api/config/models',
      summary: 'Every model entry (keys shown only as set or unset).',
      response: modelList,
      handler: () => ({
        body: { items: publicConfig(deps.config()).models, slots: deps.config().slots },
      }),
    }),
    ...slotRoutes,
    route({
      method: 'POST',
      path: '/api/config/models',
      summary: 'Adds a model entry to config.yml. The API key is write-only.',
      body: modelEntrySchema
        .extend({
          id: modelIdSchema.optional(),
          api_key_from: modelIdSchema.optional().meta({
            description:
              'Use the API key saved with this other entry of the same provider (a lite model beside the main one), instead of sending it again.',
          }),
        })
        .strict(),
      status: 201,
      response: modelView,
      errors: [409],
      handler: async ({ body }) => {
        const { id: given, api_key_from: keyFrom, ...entry } = body;
        checkProvider(entry);
        if (keyFrom !== undefined && entry.api_key !== undefined)
          throw new ApiError(
            'invalid_request',
            'Send either api_key or api_key_from, not both: api_key_from uses the key another entry has saved.',
          );
        const id = given ?? freeId(deps.config(), entry.model);
        await deps.endpoint.request('config.models.create', {
          id,
          entry,
          ...(keyFrom === undefined ? {} : { key_from: keyFrom }),
        });
        deps.publish('server', 'config.updated', { models: [id] });
        return { status: 201, body: publicModel(id, entryOr404(id), deps.config()) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/config/models/:id',
      summary:
        'Changes any fields of a model entry; null removes an optional field (api_key: null forgets the key).',
      body: modelPatchSchema,
      response: modelView,
      handler: async ({ params, body: given }) => {
        const current = entryOr404(params.id ?? '');
        // An api_key sent back masked (as a form or a client that echoes it may) keeps the key.
        const body = unmaskSecrets(modelEntrySchema, current, given);
        const merged = {
          ...current,
          ...Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v ?? undefined])),
        } as ModelEntry;
        checkProvider(merged);
        await deps.endpoint.request('config.models.update', { id: params.id ?? '', patch: body });
        deps.publish('server', 'config.updated', { models: [params.id!] });
        return { body: publicModel(params.id ?? '', entryOr404(params.id ?? ''), deps.config()) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/config/models/:id',
      summary: 'Removes a model entry; refused with 409 while a slot uses it.',
      response: modelDeleted,
      errors: [409],
      handler: async ({ params }) => {
        entryOr404(params.id ?? '');
        await deps.endpoint.request('config.models.delete', { id: params.id ?? '' });
        deps.publish('server', 'config.updated', { removed: [params.id!] });
        return { body: { deleted: params.id } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/config/test',
      summary:
        'Sends the smallest real request to a provider and says whether provider, model and key work, and if not, why.',
      body: z.union([
        z.object({ model_id: modelIdSchema }).strict(),
        modelEntrySchema
          .pick({ provider: true, model: true, protocol: true, base_url: true, api_key: true })
          .strict(),
      ]),
      response: modelTestResult,
      handler: async ({ body }) => {
        const entry = 'model_id' in body ? entryOr404(body.model_id) : body;
        checkProvider(entry);
        const r = resolveModel(entry);
        if (!r.base_url)
          throw new ApiError(
            'invalid_request',
            'This provider has no default address: give base_url.',
          );
        const started = Date.now();
        const result = await deps.endpoint.request('agent.probe_model', {
          provider: entry.provider,
          protocol: r.protocol,
          base_url: r.base_url,
          api_key: r.api_key,
          model: entry.model,
        });
        const defaultId = deps.config().slots.default;
        if ('model_id' in body && body.model_id === defaultId) {
          recordModelTest(meta, entry, result.ok, result.reason);
          deps.publish('server', 'onboard.updated', { model_tested: result.ok });
        }
        return { body: { ...result, latency_ms: result.latency_ms ?? Date.now() - started } };
      },
    }),
  ];
}

function slotView(config: Config, slot: SlotName) {
  const id = config.slots[slot] ?? null;
  const entry = id ? own(config.models, id) : undefined;
  return { slot, model_id: id, model: id && entry ? publicModel(id, entry, config) : null };
}

/** The provider must be in the catalog; custom endpoints need an address. */
function checkProvider(entry: Pick<ModelEntry, 'provider' | 'base_url' | 'protocol'>): void {
  const provider = findProvider(entry.provider);
  if (!provider) {
    throw new ApiError(
      'invalid_request',
      `Unknown provider "${entry.provider}"; GET /api/providers lists them (use "custom" for any other OpenAI- or Anthropic-compatible server).`,
      [{ path: 'provider', message: 'unknown provider' }],
    );
  }
  if (!provider.base_url && !entry.base_url)
    throw new ApiError('invalid_request', `The ${provider.name} provider needs base_url.`, [
      { path: 'base_url', message: 'required for this provider' },
    ]);
  if (entry.protocol && !provider.protocol_choosable && entry.protocol !== provider.protocol) {
    throw new ApiError(
      'invalid_request',
      `${provider.name} speaks the ${provider.protocol} protocol; leave protocol out.`,
      [{ path: 'protocol', message: 'fixed for this provider' }],
    );
  }
}

/** An id from the model name: lower-case, safe characters, numbered if taken. */
function freeId(config: Config, model: string): string {
  const base =
    model
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '')
      .slice(0, 56) || 'model';
  const safe = base === 'default' || base === 'lite' ? `${base}-model` : base;
  let id = safe;
  for (let n = 2; Object.hasOwn(config.models, id); n++) id = `${safe}-${n}`;
  return id;
}
