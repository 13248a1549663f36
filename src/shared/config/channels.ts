import { z } from 'zod';

/**
 * Messaging channels under `channels` in config.yml: one record per platform, each with `enabled`
 * plus the platform's fields. The messenger's login credentials are not here: they live in a 0600
 * file under $SVC_HOME (see channelCredentialsFile).
 */
export const platformNames = [
  'telegram',
  'messenger',
  // whatsapp
  'whatsapp',
] as const;
export const platformNameSchema = z.enum(platformNames);
export type PlatformName = z.infer<typeof platformNameSchema>;

/** A user id list: a YAML list, or one string of ids separated by commas or spaces (the form's field). */
const userList = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter((s) => s.length > 0) : v),
  z.array(z.string().regex(/^[A-Za-z0-9_@.:=+-]{1,128}$/, 'a user id is 1-128 letters, digits or @._:=+-')).max(1000),
);

const httpUrl = (what: string) => z.url({ protocol: /^https?$/, error: `${what} must be an http:// or https:// address` });

export const telegramConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  bot_token: z.string().regex(/^\d{3,20}:[A-Za-z0-9_-]{20,100}$/, 'a bot token looks like 123456789:AAH… (from @BotFather)'),
  base_url: httpUrl('base_url').default('https://api.telegram.org'),
  parse_mode: z.enum(['HTML', 'plain']).default('HTML'),
  allowed_users: userList.default([]),
});
export type TelegramConfig = z.infer<typeof telegramConfigSchema>;

export const messengerConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  base_url: httpUrl('base_url').default('https://ilinkai.weixin.qq.com'),
  /** Where media (images, files, video, voice) are uploaded to and downloaded from, encrypted. */
  cdn_base_url: httpUrl('cdn_base_url').default('https://novac2c.cdn.weixin.qq.com/c2c'),
  allowed_users: userList.default([]),
});
export type MessengerConfig = z.infer<typeof messengerConfigSchema>;

// whatsapp: WhatsApp Web (multi-device) through Baileys; logged in by a QR code, its session keys
// kept 0600 under $SVC_HOME/channels/whatsapp (never in config.yml). allowed_users: phone numbers.
export const whatsappConfigSchema = z.strictObject({
  enabled: z.boolean().default(true),
  allowed_users: z.preprocess(
    (v) => (typeof v === 'string' ? v.split(/[\s,]+/).filter((s) => s.length > 0) : v),
    z.array(z.string().transform((s) => s.replace(/^\+/, '')).pipe(z.string().regex(/^\d{5,20}$/, 'a WhatsApp user is a phone number with its country code, digits only (e.g. 4915123456789)'))).max(1000),
  ).default([]),
});

export const channelsConfigSchema = z
  .strictObject({
    telegram: telegramConfigSchema.optional(),
    messenger: messengerConfigSchema.optional(),
    // whatsapp
    whatsapp: whatsappConfigSchema.optional(),
  })
  .prefault({});
export type ChannelsConfig = z.infer<typeof channelsConfigSchema>;

export const platformSchemas = {
  telegram: telegramConfigSchema,
  messenger: messengerConfigSchema,
  // whatsapp
  whatsapp: whatsappConfigSchema,
} as const;

export interface FieldSpec {
  name: string;
  required: boolean;
  secret: boolean;
  description: string;
}

/** What GET /api/channels/available shows: every platform svc can connect, with its form. */
export const platformInfo: Record<PlatformName, { label: string; login: 'token' | 'qr'; fields: FieldSpec[] }> = {
  telegram: {
    label: 'Telegram',
    login: 'token',
    fields: [
      { name: 'bot_token', required: true, secret: true, description: 'The bot token @BotFather gave you (123456789:AAH…).' },
      { name: 'base_url', required: false, secret: false, description: 'The Bot API server; leave empty for api.telegram.org, or give your self-hosted Bot API server.' },
      { name: 'parse_mode', required: false, secret: false, description: 'HTML (replies rendered from Markdown, the default) or plain.' },
      { name: 'allowed_users', required: false, secret: false, description: 'Telegram user ids that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.' },
    ],
  },
  messenger: {
    label: 'WeChat',
    login: 'qr',
    fields: [
      { name: 'base_url', required: false, secret: false, description: 'The iLink bot server; leave empty for the default.' },
      { name: 'cdn_base_url', required: false, secret: false, description: 'The media CDN files are sent and fetched through; leave empty for the default (novac2c.cdn.weixin.qq.com/c2c).' },
      { name: 'allowed_users', required: false, secret: false, description: 'WeChat (iLink) user ids that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.' },
    ],
  },
  // whatsapp
  whatsapp: {
    label: 'WhatsApp',
    login: 'qr',
    fields: [
      { name: 'allowed_users', required: false, secret: false, description: 'Phone numbers (with country code, digits only) that may talk to the agent, separated by commas. Anyone else gets a pairing code to approve here.' },
    ],
  },
};

/** Fields whose values the API never answers. */
export function secretFields(platform: PlatformName): string[] {
  return platformInfo[platform].fields.filter((f) => f.secret).map((f) => f.name);
}

/** A secret as the API shows it: enough to recognise, never enough to use. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '********' : `********${value.slice(-4)}`;
}

/** The secret values of every configured channel (for log scrubbing). */
export function channelSecretValues(channels: ChannelsConfig): string[] {
  return channels.telegram ? [channels.telegram.bot_token] : [];
}
