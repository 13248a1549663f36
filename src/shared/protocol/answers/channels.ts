import { z } from 'zod';
import {
  platformInfo,
  platformNames,
  platformNameSchema,
  platformSchemas,
  secretFields,
  type FieldView,
  type PlatformName,
} from '../../config/channels.js';
import { maskedSecretSchema } from '../../config/secret-marker.js';
import { channelsRequestDefs, channelStatusSchema, loginStateSchema } from '../channels.js';
import { pairingSchema } from '../events.js';

/**
 * The answers of /api/channels (src/gateway/routes/channels.ts), derived from the platforms'
 * config schemas (config/channels.ts) so a new field or platform is described without an edit
 * here. zod and node-free, like answers.ts.
 */

/** A platform's saved fields as the API shows them: its config entry but `enabled`, secrets masked. */
function savedFields<P extends PlatformName>(p: P) {
  const masked = Object.fromEntries(secretFields(p).map((f) => [f, maskedSecretSchema]));
  return (platformSchemas[p] as z.ZodObject).omit({ enabled: true }).extend(masked);
}

const channelBase = z.object({
  label: z.string(),
  enabled: z.boolean(),
  /** stopped: disabled; needs_login: a QR platform without credentials yet. */
  state: channelStatusSchema.shape.state,
  error: channelStatusSchema.shape.error,
  connected_since: channelStatusSchema.shape.connected_since,
  last_message_at: channelStatusSchema.shape.last_message_at,
  restarts: channelStatusSchema.shape.restarts,
  account: channelStatusSchema.shape.account,
});

/**
 * One configured platform: its state (from the channels worker) and its saved fields. The
 * document has each platform's fields (a oneOf by platform); the type here is wider, as the
 * route builds it for any platform.
 */
export type ChannelView = z.output<typeof channelBase> & {
  platform: PlatformName;
  fields: Record<string, unknown>;
};

export const channelView = z.lazy(
  () =>
    z
      .discriminatedUnion(
        'platform',
        platformNames.map((p) =>
          channelBase.extend({ platform: z.literal(p), fields: savedFields(p) }),
        ) as unknown as [z.ZodObject, ...z.ZodObject[]],
      )
      .meta({ id: 'Channel' }) as unknown as z.ZodType<ChannelView>,
);

export const channelList = z.lazy(() => z.object({ channels: z.array(channelView) }));

/** A field of a platform's form (GET /api/channels/available). */
const fieldView = z.object({
  name: z.string(),
  label: z.string(),
  required: z.boolean(),
  secret: z.boolean(),
  description: z.string(),
  /** A closed choice: its values, each with its words. */
  choices: z.array(z.object({ value: z.string(), label: z.string() })).optional(),
  /** The value used when the field is left out, when there is one. */
  default: z.string().optional(),
}) satisfies z.ZodType<FieldView>;

export const channelsAvailable = z.lazy(() =>
  z.object({
    platforms: z.array(
      z.object({
        platform: platformNameSchema,
        label: z.string(),
        login: z.enum(['token', 'qr']),
        configured: z.boolean(),
        fields: z.array(fieldView),
      }),
    ),
  }),
);

export const channelLogin = z.lazy(() => loginStateSchema.meta({ id: 'ChannelLogin' }));
export const channelDeleted = z.lazy(() =>
  z.object({ deleted: platformNameSchema, trash_id: z.string() }),
);
export const channelTested = z.lazy(() =>
  z.object({
    ok: z.literal(true),
    ...channelsRequestDefs['channels.test'].result.shape,
  }),
);
export const channelSent = z.lazy(() =>
  z.object({
    sent: z.literal(true),
    ...channelsRequestDefs['channels.send'].result.shape,
  }),
);
export const pairingView = z.lazy(() => pairingSchema.meta({ id: 'Pairing' }));
export const pairingList = z.lazy(() => z.object({ items: z.array(pairingView) }));

/** A list field that also takes one string of items (allowed_users: the form's text field). */
const takesText = (s: z.ZodType) => Array.isArray(s.safeParse('').data);

/** A field as POST takes it: its value, '' for its default, and a secret also as answered (masked). */
function postedField(s: z.ZodType, secret: boolean): z.ZodType {
  if (secret)
    return z.union([s, maskedSecretSchema, z.literal('').describe('keeps the saved value')]);
  const alternatives: z.ZodType[] = [s, z.literal('').describe('the default')];
  if (takesText(s))
    alternatives.push(
      z.string().describe('the items in one string, separated by commas or spaces'),
    );
  return z.union(alternatives as [z.ZodType, ...z.ZodType[]]);
}

/**
 * The body of POST /api/channels/{platform} for the document, one per platform, from the schema
 * the route validates with (after merging what is saved) and the descriptions of its form.
 */
export function channelSaveBodies(): z.ZodType {
  const one = (p: PlatformName) => {
    const shape: Record<string, z.ZodType> = (platformSchemas[p] as z.ZodObject).shape;
    const secrets = secretFields(p);
    const described = Object.fromEntries(
      Object.entries(shape).map(([name, s]) => {
        if (name === 'enabled')
          return [name, s.describe('Whether the platform runs; a newly configured one does.')];
        const f = platformInfo[p].fields.find((x) => x.name === name);
        const secret = secrets.includes(name);
        const what = `${f?.label ?? name}: ${f?.description ?? ''}`.trim();
        const note = secret
          ? ' A secret: answers show it masked; sent back masked, empty or left out, it keeps its saved value.'
          : '';
        return [name, postedField(s, secret).describe(`${what}${note}`)];
      }),
    );
    const fields = z.strictObject(described);
    return fields
      .extend({
        fields: fields
          .partial()
          .optional()
          .describe('The same fields nested, as GET answers them (a GET answer can be sent back).'),
      })
      .describe(
        `${platformInfo[p].label} (POST /api/channels/${p}). The required fields are required to configure it the first time; on a configured platform a field left out keeps its saved value.`,
      );
  };
  return z.union(platformNames.map(one) as unknown as [z.ZodType, ...z.ZodType[]]);
}
