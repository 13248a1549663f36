import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { z } from 'zod';
import {
  platformFields,
  platformNames,
  platformSchemas,
  secretFields,
} from '../../src/shared/config/channels.js';
import { configSchema } from '../../src/shared/config/schema.js';
import { isSecret } from '../../src/shared/config/secret-marker.js';
import {
  configSecretValues,
  maskedConfig,
  unmaskSecrets,
} from '../../src/shared/config/secrets.js';
import { modelEntrySchema } from '../../src/shared/config/schema.js';
import { publicConfig } from '../../src/shared/providers/resolve.js';

/**
 * One rule masks config secrets in every answer: the schema's secret mark. This walks the whole
 * config schema so a field added later whose name says "secret" cannot go out unmarked.
 */

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
};

/** Every named field of the schema (a record's entries are `*`), with its schema. */
function fields(schema: z.ZodType, path: string[] = []): { path: string[]; schema: z.ZodType }[] {
  const def = schema._zod.def as Def;
  if (def.innerType) return fields(def.innerType, path);
  switch (def.type) {
    case 'pipe':
      return [...fields(def.in!, path), ...fields(def.out!, path)];
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([k, s]) => [
        { path: [...path, k], schema: s },
        ...(isSecret(s) ? [] : fields(s, [...path, k])),
      ]);
    case 'record':
      return fields(def.valueType!, [...path, '*']);
    case 'array':
      return fields(def.element!, [...path, '*']);
    case 'union':
      return (def.options ?? []).flatMap((o) => fields(o, path));
    default:
      return [];
  }
}

const LOOKS_SECRET = /token|secret|passw|credential|cookie|(^|_)key$|^key|^env$|^headers$/i;
/** Named like a secret, and not one: a count of tokens (max_output_tokens, budgets' tokens). */
const NOT_SECRET = /(^|_)tokens$/;

test('every config field named like a secret carries the secret mark (walks the whole schema)', () => {
  const all = fields(configSchema);
  assert.ok(all.length > 60, `the walk reached every section: ${all.length} fields`);
  for (const section of ['channels', 'mcp', 'browser', 'models', 'upgrade'])
    assert.ok(
      all.some((f) => f.path[0] === section),
      `the walk reached ${section}`,
    );
  const unmarked = all
    .filter((f) => {
      const name = f.path[f.path.length - 1]!;
      return LOOKS_SECRET.test(name) && !NOT_SECRET.test(name) && !isSecret(f.schema);
    })
    .map((f) => f.path.join('.'));
  assert.equal(unmarked, [], 'fields named like secrets without the mark');
  const marked = all.filter((f) => isSecret(f.schema)).map((f) => f.path.join('.'));
  for (const p of [
    'access_key',
    'models.*.api_key',
    'mcp.servers.*.env',
    'mcp.servers.*.headers',
    'channels.telegram.bot_token',
    'channels.slack.app_token',
    'channels.slack.bot_token',
    'channels.discord.bot_token',
    'telemetry.otlp.headers',
  ])
    assert.ok(marked.includes(p), `${p} is marked: ${marked.join(', ')}`);
});

test("each channel form is its schema's fields, secret and required as the schema says", () => {
  for (const p of platformNames) {
    const shape = platformSchemas[p].shape as Record<string, z.ZodType>;
    const form = platformFields(p);
    // Every setting but the on/off switch has a field on the form, and the form invents none.
    assert.equal(
      form.map((f) => f.name).sort(),
      Object.keys(shape)
        .filter((k) => k !== 'enabled')
        .sort(),
      p,
    );
    assert.equal(
      form
        .filter((f) => f.secret)
        .map((f) => f.name)
        .sort(),
      secretFields(p).sort(),
      p,
    );
    for (const f of form)
      assert.is(f.required, !shape[f.name]!.safeParse(undefined).success, `${p}.${f.name}`);
  }
});

const SECRETS = {
  access: 'access-key-0123456789abcdef',
  api: 'sk-model-key-0123456789',
  telegram: '123456789:AAHsecret-telegram-token-xyz',
  app: 'xapp-1-secret-app-token-abc',
  bot: 'xoxb-secret-bot-token-def',
  discord: `${'a'.repeat(24)}.abcdef.${'b'.repeat(27)}`,
  env: 'env-secret-value-42',
  header: 'Bearer header-secret-77',
  otlp: 'otlp-collector-key-31',
};

const config = configSchema.parse({
  access_key: SECRETS.access,
  models: { m: { provider: 'custom', model: 'x', base_url: 'http://h', api_key: SECRETS.api } },
  mcp: {
    servers: {
      local: { command: 'x', env: { TOKEN: SECRETS.env } },
      remote: { url: 'http://h/mcp', headers: { Authorization: SECRETS.header } },
    },
  },
  channels: {
    telegram: { bot_token: SECRETS.telegram },
    slack: { app_token: SECRETS.app, bot_token: SECRETS.bot },
    discord: { bot_token: SECRETS.discord },
  },
  telemetry: {
    otlp: { endpoint: 'http://127.0.0.1:4318', headers: { 'x-api-key': SECRETS.otlp } },
  },
});

test('the masked config and publicConfig hold no secret; the log scrubber knows every one', () => {
  for (const shown of [JSON.stringify(maskedConfig(config)), JSON.stringify(publicConfig(config))])
    for (const [what, value] of Object.entries(SECRETS))
      assert.not.ok(shown.includes(value), `${what} is not shown`);
  assert.equal(new Set(configSecretValues(config)), new Set(Object.values(SECRETS)));
  const masked = maskedConfig(config);
  assert.is(masked.channels.telegram?.bot_token, `********${SECRETS.telegram.slice(-4)}`);
  assert.equal(Object.keys(masked.mcp.servers.local?.env ?? {}), ['TOKEN']);
  assert.is(config.channels.telegram?.bot_token, SECRETS.telegram, 'the original is untouched');
});

test('a masked value sent back stands for the real one; a new value is taken', () => {
  const current = config.models.m!;
  const back = unmaskSecrets(modelEntrySchema, current, {
    api_key: `********${SECRETS.api.slice(-4)}`,
  });
  assert.is(back.api_key, SECRETS.api);
  assert.is(unmaskSecrets(modelEntrySchema, current, { api_key: 'sk-new' }).api_key, 'sk-new');
});

test('credentials inside any URL are masked, scrubbed and kept when sent back masked', () => {
  const pass = 'url-password-0123456789';
  const token = 'query-token-abcdef123456';
  const user = 'ghp_lone-user-token-987654';
  const withUrls = configSchema.parse({
    models: {
      m: { provider: 'custom', model: 'x', base_url: `https://u:${pass}@llm.example/v1` },
    },
    mcp: { servers: { remote: { url: `https://${user}@mcp.example/mcp?api_key=${token}&x=1` } } },
    browser: { cdp_url: `ws://127.0.0.1:9222/devtools?token=${token}` },
  });
  const shown = JSON.stringify(maskedConfig(withUrls));
  for (const v of [pass, token, user]) assert.not.ok(shown.includes(v), `${v} is not shown`);
  const masked = maskedConfig(withUrls);
  assert.is(masked.models.m?.base_url, `https://u:********${pass.slice(-4)}@llm.example/v1`);
  assert.match(
    masked.mcp.servers.remote?.url ?? '',
    /^https:\/\/\*{8}.+@mcp\.example\/mcp\?api_key=\*{8}.+&x=1$/,
  );
  // what is not a credential stays readable: host, path, other parameters
  assert.match(masked.browser.cdp_url ?? '', /^ws:\/\/127\.0\.0\.1:9222\/devtools\?token=/);
  for (const v of [pass, token, user])
    assert.ok(configSecretValues(withUrls).includes(v), `the log scrubber knows ${v}`);
  // A form that sends the masked URL back keeps the real one; a changed URL is taken as sent.
  const current = withUrls.models.m!;
  const back = unmaskSecrets(modelEntrySchema, current, { base_url: masked.models.m!.base_url });
  assert.is(back.base_url, current.base_url);
  const changed = unmaskSecrets(modelEntrySchema, current, { base_url: 'https://other/v1' });
  assert.is(changed.base_url, 'https://other/v1');
  // a plain URL is untouched
  assert.is(maskedConfig(config).models.m?.base_url, 'http://h');
});

test.run();
