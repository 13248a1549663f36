import { ConfigError } from '../../shared/config/load.js';
import { probeModel } from '../../shared/providers/probe.js';
import { resolveModel } from '../../shared/providers/resolve.js';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** Each model entry with the same probe as /api/config/test, in parallel, with a short deadline. */
export async function checkModels(ctx: Context): Promise<Check[]> {
  const { config } = ctx;
  if (config instanceof ConfigError)
    return [warn('models', 'not checked: config.yml is not valid', 'fix config.yml first')];
  const entries = Object.entries(config.models);
  if (entries.length === 0)
    return [
      warn(
        'models',
        'no model is configured, so svc cannot answer chats',
        'add one in the Web UI (Settings → Models) or under models: in config.yml',
      ),
    ];
  const checks = await Promise.all(
    entries.map(async ([id, entry]): Promise<Check> => {
      const name = `model ${id}`;
      const what = `${entry.provider}/${entry.model}`;
      const r = resolveModel(entry);
      if (!r.base_url)
        return fail(name, `${what} has no address`, `set models.${id}.base_url in config.yml`);
      const started = Date.now();
      const result = await probeModel(
        {
          protocol: r.protocol,
          baseUrl: r.base_url,
          apiKey: r.api_key,
          providerId: entry.provider,
        },
        entry.model,
        { timeoutMs: ctx.modelTimeoutMs },
      );
      if (result.ok) return ok(name, `${what} answered in ${result.latency_ms} ms`);
      const timedOut = Date.now() - started >= ctx.modelTimeoutMs;
      switch (result.reason) {
        case 'bad_key':
          return fail(
            name,
            `${what}: the provider refused the key: ${result.message}`,
            r.api_key
              ? `set a valid key for ${id} in the Web UI or config.yml`
              : `no key is set: give ${id} an api_key${r.api_key_source === null ? " (or the provider's key variable in serve.env)" : ''}`,
          );
        case 'unknown_model':
          return fail(
            name,
            `${what}: the provider does not know this model: ${result.message}`,
            `pick a model the provider lists (Web UI → Settings → Models)`,
          );
        case 'unreachable':
          if (timedOut)
            return warn(
              name,
              `${what} did not answer within ${ctx.modelTimeoutMs / 1000} s: slow, or unreachable from here`,
              `check ${r.base_url} from this machine; svc waits longer than this for real turns`,
            );
          return fail(
            name,
            `${what} cannot be reached: ${result.message}`,
            `check ${r.base_url}, this machine's network and any proxy`,
          );
        default:
          // rate limits, provider-side errors and odd answers say little about the setup itself
          return warn(
            name,
            `${what} answered, but not as expected (${result.reason}): ${result.message}`,
            "try again later; if it persists, check the provider's status",
          );
      }
    }),
  );
  if (config.slots.default === undefined)
    checks.push(
      warn(
        'models',
        'no model is in the default slot, so chats have no model',
        'choose one in the Web UI or set slots.default in config.yml',
      ),
    );
  return checks;
}
