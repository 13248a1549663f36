import { z } from 'zod';
import type { FieldLabels } from '../errors.js';
import { platformLabels, type PlatformName } from './platform-labels.js';
import { isSecret, secret } from './secret-marker.js';

export { maskSecret } from './secret-marker.js';

/**
 * Messaging channels under `channels` in config.yml: one record per platform, each with `enabled`
 * plus the platform's fields. The messenger's login credentials are not here: they live in a 0600
 * file under $SVC_HOME (see channelCredentialsFile).
 */

/** A user id list: a YAML list, or one string of ids separated by commas or spaces (the form's field). */
const userList = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter((s) => s.length > 0) : v),
  z
    .array(
      z
        .string()
        .regex(/^[A-Za-z0-9_@.:=+-]{1,128}$/, 'a user id is 1-128 letters, digits or @._:=+-'),
    )
    .max(1000),
);

// Messages name no key: a form puts the field's label before them, config.yml its path.
const httpUrl = () =>
  z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' });

export const telegramConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  bot_token: z
    .string()
    .regex(
      /^\d{3,20}:[A-Za-z0-9_-]{20,100}$/,
      'a bot token looks like 123456789:AAH… (from @BotFather)',
    )
    .apply(secret),
  base_url: httpUrl().default('https://api.telegram.org'),
  parse_mode: z.enum(['HTML', 'plain']).default('HTML'),
  allowed_users: userList.default([]),
});
export type TelegramConfig = z.infer<typeof telegramConfigSchema>;

export const messengerConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  base_url: httpUrl().default('https://ilinkai.weixin.qq.com'),
  /** Where media (images, files, video, voice) are uploaded to and downloaded from, encrypted. */
  cdn_base_url: httpUrl().default('https://novac2c.cdn.weixin.qq.com/c2c'),
  allowed_users: userList.default([]),
});
export type MessengerConfig = z.infer<typeof messengerConfigSchema>;

// slack: Socket Mode (an outbound WebSocket) plus the Web API, with an app-level and a bot token.
export const slackConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  app_token: z
    .string()
    .regex(
      /^xapp-[A-Za-z0-9-]{10,250}$/,
      "the app-level token starts with xapp- (the app's Basic Information → App-Level Tokens, with the connections:write scope)",
    )
    .apply(secret),
  bot_token: z
    .string()
    .regex(
      /^xoxb-[A-Za-z0-9-]{10,250}$/,
      "the Bot User OAuth Token starts with xoxb- (the app's OAuth & Permissions page, after installing it)",
    )
    .apply(secret),
  api_base_url: httpUrl().default('https://slack.com/api/'),
  allowed_users: userList.default([]),
});
export type SlackConfig = z.infer<typeof slackConfigSchema>;

// --- discord ---
export const discordConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  bot_token: z
    .string()
    .trim()
    .regex(
      /^[A-Za-z0-9_-]{18,40}\.[A-Za-z0-9_-]{4,10}\.[A-Za-z0-9_-]{20,80}$/,
      'a Discord bot token is three parts joined by dots (Developer Portal → your application → Bot → Reset Token); the application id or public key is not it',
    )
    .apply(secret),
  /** The REST API root (the version is added): Discord's, or a local test server. */
  api_base_url: httpUrl()
    .refine(
      (u) => !/\/v\d+\/*$/.test(u),
      'give the API root without the version (https://discord.com/api): svc adds /v10',
    )
    .default('https://discord.com/api'),
  /** The Gateway; absent: the address Discord's GET /gateway/bot names. */
  gateway_url: z
    .url({
      protocol: /^wss?$/,
      error: 'must be a ws:// or wss:// address (or empty for the one Discord names)',
    })
    .optional(),
  /** Discord user ids (snowflakes): a username in their place would never match anyone. */
  allowed_users: userList
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^\d{17,20}$/,
            'a Discord user id is 17-20 digits (Developer Mode on, right-click the user → Copy User ID), not a username',
          ),
      ),
    )
    .default([]),
});
export type DiscordConfig = z.infer<typeof discordConfigSchema>;
// whatsapp: WhatsApp Web (multi-device) through Baileys; logged in by a QR code, its session keys
// kept 0600 under $SVC_HOME/channels/whatsapp (never in config.yml). allowed_users: phone numbers.
export const whatsappConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  allowed_users: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter((s) => s.length > 0) : v),
      z
        .array(
          z
            .string()
            .transform((s) => s.replace(/^\+/, ''))
            .pipe(
              z
                .string()
                .regex(
                  /^\d{5,20}$/,
                  'a WhatsApp user is a phone number with its country code, digits only (e.g. 4915123456789)',
                ),
            ),
        )
        .max(1000),
    )
    .default([]),
});

export interface FieldSpec {
  /** The key under the platform in config.yml and in the API's body. */
  name: string;
  /** What a person reads beside the field. */
  label: string;
  description: string;
  /** Words for the values of a closed choice; the values themselves come from the schema. */
  choiceLabels?: Record<string, string>;
}

/** A field as GET /api/channels/available answers it: whether it is required or secret, and a closed choice's values, all read from the schema. */
export interface FieldView extends Omit<FieldSpec, 'choiceLabels'> {
  required: boolean;
  secret: boolean;
  /** The allowed values (an enum in the platform's schema), each with its words. */
  choices?: Array<{ value: string; label: string }>;
  /** The value used when the field is left out, when the schema has one. */
  default?: string;
}

/** The values a schema field allows when it is an enum (behind a default or optional), else none. */
function enumValues(field: z.ZodType): string[] | undefined {
  let t: z.ZodType = field;
  while (t instanceof z.ZodDefault || t instanceof z.ZodOptional) t = t.unwrap() as z.ZodType;
  return t instanceof z.ZodEnum ? t.options.map(String) : undefined;
}

/** A platform's form: its fields with their closed choices and defaults read from its schema. */
export function platformFields(platform: PlatformName): FieldView[] {
  const shape: Record<string, z.ZodType> = platformSchemas[platform].shape;
  return platformInfo[platform].fields.map(({ choiceLabels, ...f }) => {
    const field = shape[f.name];
    const values = field ? enumValues(field) : undefined;
    const fallback = field?.safeParse(undefined);
    const def = fallback?.success && typeof fallback.data === 'string' ? fallback.data : undefined;
    return {
      name: f.name,
      label: f.label,
      required: fallback?.success === false,
      secret: field !== undefined && isSecret(field),
      description: f.description,
      ...(values
        ? { choices: values.map((v) => ({ value: v, label: choiceLabels?.[v] ?? v })) }
        : {}),
      ...(def !== undefined ? { default: def } : {}),
    };
  });
}

/** One platform as svc knows it: its config schema, on-screen name, login and form. */
interface PlatformSpec {
  schema: z.ZodObject;
  label: string;
  login: 'token' | 'qr';
  fields: FieldSpec[];
}

/**
 * Every platform svc can connect, declared once: the platform names, the `channels` section of
 * config.yml, the schemas the routes check, GET /api/channels/available and which fields are
 * secret all come from this table. A new platform is a schema above and one entry here.
 */
const platforms = {
  telegram: {
    schema: telegramConfigSchema,
    label: platformLabels.telegram,
    login: 'token',
    fields: [
      {
        name: 'bot_token',
        label: 'Bot token',
        description: 'The bot token @BotFather gave you (123456789:AAH…).',
      },
      {
        name: 'base_url',
        label: 'Bot API server',
        description:
          'The Bot API server; leave empty for api.telegram.org, or give your self-hosted Bot API server.',
      },
      {
        name: 'parse_mode',
        label: 'Message format',
        description: 'How replies look in Telegram.',
        choiceLabels: {
          HTML: 'Formatted (Markdown shown as bold, lists, code)',
          plain: 'Plain text',
        } satisfies Record<TelegramConfig['parse_mode'], string>,
      },
      {
        name: 'allowed_users',
        label: 'Who may talk to the agent',
        description:
          'Telegram user ids that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.',
      },
    ],
  },
  messenger: {
    schema: messengerConfigSchema,
    label: platformLabels.messenger,
    login: 'qr',
    fields: [
      {
        name: 'base_url',
        label: 'Bot server',
        description: 'The iLink bot server; leave empty for the default.',
      },
      {
        name: 'cdn_base_url',
        label: 'Media server',
        description:
          'The media CDN files are sent and fetched through; leave empty for the default (novac2c.cdn.weixin.qq.com/c2c).',
      },
      {
        name: 'allowed_users',
        label: 'Who may talk to the agent',
        description:
          'WeChat (iLink) user ids that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.',
      },
    ],
  },
  slack: {
    schema: slackConfigSchema,
    label: platformLabels.slack,
    login: 'token',
    fields: [
      {
        name: 'app_token',
        label: 'App-level token',
        description:
          "The app-level token (xapp-…) with the connections:write scope, from the app's Basic Information page; Socket Mode must be on.",
      },
      {
        name: 'bot_token',
        label: 'Bot token',
        description:
          'The Bot User OAuth Token (xoxb-…) from OAuth & Permissions, after installing the app to the workspace.',
      },
      {
        name: 'api_base_url',
        label: 'Web API address',
        description: 'The Web API address; leave empty for https://slack.com/api/.',
      },
      {
        name: 'allowed_users',
        label: 'Who may talk to the agent',
        description:
          "Slack member ids (U0…, in a profile's ⋮ menu: Copy member ID) that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.",
      },
    ],
  },
  // --- discord ---
  discord: {
    schema: discordConfigSchema,
    label: platformLabels.discord,
    login: 'token',
    fields: [
      {
        name: 'bot_token',
        label: 'Bot token',
        description:
          'The bot token from the Developer Portal (your application → Bot → Reset Token).',
      },
      {
        name: 'allowed_users',
        label: 'Who may talk to the agent',
        description:
          'Discord user ids that may talk to the agent (Developer Mode on, right-click a user → Copy User ID), separated by commas. Anyone else gets a pairing code to approve here.',
      },
      {
        name: 'api_base_url',
        label: 'REST API address',
        description: 'The REST API root; leave empty for https://discord.com/api.',
      },
      {
        name: 'gateway_url',
        label: 'Gateway address',
        description: 'The Gateway (wss://…); leave empty for the one Discord names.',
      },
    ],
  },
  whatsapp: {
    schema: whatsappConfigSchema,
    label: platformLabels.whatsapp,
    login: 'qr',
    fields: [
      {
        name: 'allowed_users',
        label: 'Who may talk to the agent',
        description:
          'Phone numbers (with country code, digits only) that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.',
      },
    ],
  },
} satisfies Record<PlatformName, PlatformSpec>;

export type { PlatformName };
export const platformNames = Object.keys(platforms) as [PlatformName, ...PlatformName[]];
export const platformNameSchema = z.enum(platformNames);
export const platformInfo: Record<PlatformName, PlatformSpec> = platforms;

type Schemas = { [P in PlatformName]: (typeof platforms)[P]['schema'] };
export const platformSchemas = Object.fromEntries(
  platformNames.map((p) => [p, platforms[p].schema]),
) as Schemas;

export const channelsConfigSchema = z
  .strictObject(
    Object.fromEntries(platformNames.map((p) => [p, platforms[p].schema.optional()])) as {
      [P in PlatformName]: z.ZodOptional<Schemas[P]>;
    },
  )
  .prefault({});
export type ChannelsConfig = z.infer<typeof channelsConfigSchema>;

/** The label each field of a platform's form shows, by key: a 400 about a field names it so. */
export function platformFieldLabels(platform: PlatformName): FieldLabels {
  return Object.fromEntries(platformInfo[platform].fields.map((f) => [f.name, f.label]));
}

/** Fields whose values the API never answers: those the platform's schema marks secret. */
export function secretFields(platform: PlatformName): string[] {
  return Object.entries(platformSchemas[platform].shape)
    .filter(([, s]) => isSecret(s))
    .map(([name]) => name);
}

/** Whether any platform is enabled (the channels worker runs only then). */
export function anyChannelEnabled(channels: ChannelsConfig): boolean {
  return platformNames.some((p) => channels[p]?.enabled === true);
}
