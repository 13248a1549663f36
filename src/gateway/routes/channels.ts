import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import {
  maskSecret,
  platformFieldLabels,
  platformFields,
  platformInfo,
  platformNames,
  platformNameSchema,
  platformSchemas,
  secretFields,
  type PlatformName,
} from '../../shared/config/channels.js';
import { maskSecrets } from '../../shared/config/secrets.js';
import { ApiError, invalidInput } from '../../shared/errors.js';
import { channelTestLabels } from '../../shared/form-labels.js';
import {
  channelDeleted,
  channelList,
  channelLogin,
  channelSaveBodies,
  channelsAvailable,
  channelSent,
  channelTested,
  channelView,
  pairingList,
  pairingView,
} from '../../shared/protocol/answers/channels.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import type { ChannelStatus } from '../../shared/protocol/channels.js';
import { getArtifactById } from '../../shared/store/artifacts.js';
import { answerPairing, listPairings } from '../../shared/store/channels.js';
import { getTrashItem, trashView } from '../../shared/store/trash.js';
import { resolveUpload } from '../../shared/store/uploads.js';
import type { Deps } from '../deps.js';
import { requestBodyDoc } from '../request-doc.js';
import { route, type Route } from '../route.js';

const chatId = z.string().trim().min(1, 'must not be empty').max(128);
const saveBody = z
  .looseObject({ enabled: z.boolean().optional() })
  .describe(
    '{"enabled"?: boolean, …the platform\'s fields (GET /api/channels/available lists them)}; a secret sent back masked, or left out, keeps its value.',
  );
const sendBody = z.strictObject({
  chat_id: chatId,
  text: z.string().min(1, 'text must not be empty').max(100_000),
});
const sendFileBody = z
  .strictObject({
    chat_id: chatId,
    upload: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe('The name of a file uploaded with POST /api/upload.'),
    artifact: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('The id of a file the agent wrote (GET /api/sessions/{id}/artifacts lists them).'),
  })
  .refine((b) => (b.upload === undefined) !== (b.artifact === undefined), {
    message: "give exactly one of upload (an uploaded file's name) or artifact (an artifact id)",
    path: ['upload'],
  });
const testBody = z.strictObject({ chat_id: chatId.optional() }).optional();
const pairingBody = z.strictObject({
  code: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9]{6}$/, 'a pairing code is 6 letters and digits'),
  decision: z.enum(['approve', 'reject']),
});
const loginBody = z.strictObject({ force: z.boolean().optional() }).optional();

/**
 * Messaging channels: each platform's configuration (config.yml, written by the supervisor,
 * secrets masked), its live state (from the channels worker), test/send/send-file, pairing
 * requests, and the QR login of the platforms that log in by one (messenger, whatsapp). Adapters hold outbound connections only: no route here
 * is reachable by a platform.
 */
export function channelRoutes(deps: Deps): Route[] {
  const platformOr404 = (name: string | undefined): PlatformName => {
    const p = platformNameSchema.safeParse(name);
    if (!p.success)
      throw new ApiError(
        'not_found',
        `There is no channel platform "${name}"; GET /api/channels/available lists them (${platformNames.join(', ')}).`,
      );
    return p.data;
  };
  const qrPlatformOr404 = (name: string | undefined): PlatformName => {
    const p = platformOr404(name);
    if (platformInfo[p].login !== 'qr')
      throw new ApiError(
        'not_found',
        `${platformInfo[p].label} does not log in by a QR code (${platformNames.filter((q) => platformInfo[q].login === 'qr').join(' and ')} do); POST /api/channels/${p} with its fields connects it.`,
      );
    return p;
  };
  const entryOf = (p: PlatformName) => deps.config().channels[p];
  const configuredOr404 = (p: PlatformName) => {
    const e = entryOf(p);
    if (!e)
      throw new ApiError(
        'not_found',
        `${platformInfo[p].label} is not configured; POST /api/channels/${p} with its fields connects it.`,
      );
    return e;
  };
  const live = async (): Promise<Map<string, ChannelStatus>> => {
    if (!platformNames.some((p) => entryOf(p)?.enabled)) return new Map();
    try {
      const r = await deps.endpoint.request('channels.status', {});
      return new Map(r.platforms.map((s) => [s.platform, s]));
    } catch {
      return new Map();
    }
  };
  const masked = (p: PlatformName, entry: Record<string, unknown>) =>
    maskSecrets(platformSchemas[p], entry);
  const view = (p: PlatformName, status: ChannelStatus | undefined) => {
    const e = entryOf(p)!;
    const { enabled, ...fields } = e;
    return {
      platform: p,
      label: platformInfo[p].label,
      enabled,
      state: !enabled ? 'stopped' : (status?.state ?? 'starting'),
      error: enabled ? (status?.error ?? null) : null,
      connected_since: enabled ? (status?.connected_since ?? null) : null,
      last_message_at: status?.last_message_at ?? null,
      restarts: status?.restarts ?? 0,
      account: enabled ? (status?.account ?? null) : null,
      fields: masked(p, fields),
    };
  };
  const one = async (p: PlatformName) => {
    configuredOr404(p);
    return view(p, (await live()).get(p));
  };
  const uploadFile = (name: string) => {
    const u = resolveUpload(deps.db, deps.paths, name);
    if (!u)
      throw new ApiError(
        'not_found',
        `There is no uploaded file "${name}"; upload it first with POST /api/upload (it answers the name).`,
      );
    return { path: u.path, name: u.original_name };
  };
  const artifactFile = (id: string) => {
    const a = getArtifactById(deps.db, id);
    if (!a)
      throw new ApiError(
        'not_found',
        `There is no artifact ${JSON.stringify(id)}; GET /api/sessions/{id}/artifacts lists a session's artifacts.`,
      );
    try {
      if (!statSync(a.path).isFile()) throw new Error('not a file');
    } catch {
      throw new ApiError(
        'not_found',
        `The artifact's file ${a.path} is gone (moved or deleted since the agent wrote it).`,
      );
    }
    return { path: a.path, name: basename(a.path) };
  };
  const changed = (p: PlatformName) =>
    deps.publish('channels', 'channels.changed', { platform: p });
  /** The worker's refusals keep their code; a worker that is not there means the platform is not running. */
  const toWorker = async <T>(p: PlatformName, call: () => Promise<T>): Promise<T> => {
    const e = configuredOr404(p);
    if (!e.enabled)
      throw new ApiError(
        'conflict',
        `${platformInfo[p].label} is disabled; enable it (POST /api/channels/${p} {"enabled": true}) first.`,
      );
    try {
      return await call();
    } catch (err) {
      if (err instanceof IpcCallError && err.code === 'unavailable')
        throw new ApiError(
          'conflict',
          `${platformInfo[p].label} is not running yet; try again in a moment.`,
        );
      throw err;
    }
  };

  const save = async (p: PlatformName, body: Record<string, unknown>) => {
    const current = entryOf(p) as Record<string, unknown> | undefined;
    const { fields, ...flat } = body;
    const incoming: Record<string, unknown> = {
      ...(typeof fields === 'object' && fields !== null && !Array.isArray(fields)
        ? (fields as Record<string, unknown>)
        : {}),
      ...flat,
    };
    // A secret sent back as shown (masked), or empty, keeps its value; so does one left out.
    for (const f of secretFields(p)) {
      const v = incoming[f];
      const cur = current?.[f];
      if (v === undefined || v === '' || (typeof cur === 'string' && v === maskSecret(cur))) {
        if (typeof cur === 'string') incoming[f] = cur;
        else delete incoming[f];
      }
    }
    // An empty optional field means "the default".
    for (const [k, v] of Object.entries(incoming))
      if (v === '' && !secretFields(p).includes(k)) delete incoming[k];
    const merged = { ...(current ?? {}), ...incoming };
    if (!('enabled' in incoming) && current === undefined) merged.enabled = true; // configuring a platform connects it
    const parsed = platformSchemas[p].safeParse(merged);
    if (!parsed.success) {
      throw invalidInput(parsed.error, {
        what: `${platformInfo[p].label} configuration`,
        labels: platformFieldLabels(p),
        hint: `fields: ${platformInfo[p].fields.map((f) => f.name).join(', ')}`,
      });
    }
    await deps.endpoint.request('config.channels.save', {
      platform: p,
      entry: parsed.data as Record<string, unknown>,
    });
    changed(p);
    return view(p, undefined);
  };

  return [
    route({
      method: 'GET',
      path: '/api/channels',
      summary:
        "Each configured platform: enabled, state (running, starting, stopped, error with the reason in words, needs_login), connected since, last message at, the bot's account; secrets masked.",
      response: channelList,
      handler: async () => {
        const statuses = await live();
        return {
          body: {
            channels: platformNames.filter((p) => entryOf(p)).map((p) => view(p, statuses.get(p))),
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/channels/available',
      summary:
        'Every platform svc can connect: its label, how it logs in (token or qr) and its fields (name, label, required, secret, description; a closed choice lists its choices and default).',
      response: channelsAvailable,
      handler: () => ({
        body: {
          platforms: platformNames.map((p) => ({
            platform: p,
            label: platformInfo[p].label,
            login: platformInfo[p].login,
            configured: entryOf(p) !== undefined,
            fields: platformFields(p),
          })),
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/api/channels/:platform/login',
      summary:
        'The QR login of a platform that logs in by one (messenger, whatsapp): idle, pending (qr_url, the text the code encodes, and qr_png, a PNG data URL), scanned, confirmed (user_id), expired, failed (error), cancelled, or logged_in.',
      response: channelLogin,
      handler: async ({ params }) => {
        const p = qrPlatformOr404(params.platform);
        if (!entryOf(p)?.enabled)
          return {
            body: {
              platform: p,
              status: 'idle' as const,
              qr_url: null,
              qr_png: null,
              user_id: null,
              error: null,
              codes: 0,
              started_at: null,
            },
          };
        return {
          body: await toWorker(p, () =>
            deps.endpoint.request('channels.login.get', { platform: p }),
          ),
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform/login',
      summary:
        'Starts the QR login of a platform that logs in by one (connecting it first if needed), or answers the running flow; {"force": true} starts over even when logged in. Poll GET for the state.',
      body: loginBody,
      response: channelLogin,
      errors: [409],
      handler: async ({ params, body }) => {
        const p = qrPlatformOr404(params.platform);
        if (!entryOf(p)?.enabled) await save(p, { enabled: true });
        const state = await toWorker(p, () =>
          deps.endpoint.request('channels.login.start', {
            platform: p,
            force: body?.force === true,
          }),
        );
        changed(p);
        return { body: state };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/channels/:platform/login',
      summary:
        'Cancels the running QR login, or logs out (the saved credentials or session keys are removed) when logged in.',
      response: channelLogin,
      errors: [409],
      handler: async ({ params }) => {
        const p = qrPlatformOr404(params.platform);
        const state = await toWorker(p, () =>
          deps.endpoint.request('channels.login.cancel', { platform: p }),
        );
        changed(p);
        return { body: state };
      },
    }),
    route({
      method: 'GET',
      path: '/api/channels/:platform',
      summary: 'One platform: its configuration (secrets masked) and state.',
      response: channelView,
      handler: async ({ params }) => ({ body: await one(platformOr404(params.platform)) }),
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform',
      summary:
        "Saves a platform's configuration (merged into what is saved; a masked or absent secret keeps its value) and applies it at once: the adapter restarts, svc does not. 400 names the field.",
      body: saveBody,
      requestBody: () => requestBodyDoc({ 'application/json': channelSaveBodies() }, true),
      response: channelView,
      handler: async ({ params, body }) => ({
        body: await save(platformOr404(params.platform), body),
      }),
    }),
    route({
      method: 'DELETE',
      path: '/api/channels/:platform',
      summary:
        'Disconnects a platform: its adapter stops and its configuration goes to the trash (POST /api/trash/{id}/restore brings it back).',
      response: channelDeleted,
      handler: async ({ params }) => {
        const p = platformOr404(params.platform);
        configuredOr404(p);
        const { trash_id } = await deps.endpoint.request('config.channels.delete', { platform: p });
        changed(p);
        const item = getTrashItem(deps.db, trash_id);
        if (item)
          deps.publish('trash', 'trash.added', trashView(item, deps.config().trash.retention_days));
        return { body: { deleted: p, trash_id } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform/test',
      summary:
        "Sends a real test message to chat_id, else to the most recent allowed chat; answers what the platform said. 409 when the platform is not running, 502 with the platform's reason when it refuses.",
      body: testBody,
      fields: { what: 'test message', labels: channelTestLabels },
      response: channelTested,
      errors: [409, 502],
      handler: async ({ params, body }) => {
        const p = platformOr404(params.platform);
        const r = await toWorker(p, () =>
          deps.endpoint.request('channels.test', {
            platform: p,
            ...(body?.chat_id ? { chat_id: body.chat_id } : {}),
          }),
        );
        return { body: { ok: true as const, ...r } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform/send',
      summary:
        'Sends {chat_id, text} (Markdown, rendered for the platform). 409 when the platform is not running, 502 with its reason when delivery fails.',
      body: sendBody,
      response: channelSent,
      errors: [409, 502],
      handler: async ({ params, body }) => {
        const p = platformOr404(params.platform);
        const r = await toWorker(p, () =>
          deps.endpoint.request('channels.send', {
            platform: p,
            chat_id: body.chat_id,
            text: body.text,
          }),
        );
        return { body: { sent: true as const, ...r } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform/send-file',
      summary:
        'Sends a file: {chat_id, upload} (the name POST /api/upload answered) or {chat_id, artifact} (the id of a file the agent wrote). 404 for an unknown one; 409 when the platform is not running, 502 with its reason when delivery fails.',
      body: sendFileBody,
      response: channelSent,
      errors: [409, 502],
      handler: async ({ params, body }) => {
        const p = platformOr404(params.platform);
        const file =
          body.artifact !== undefined ? artifactFile(body.artifact) : uploadFile(body.upload ?? '');
        const r = await toWorker(p, () =>
          deps.endpoint.request('channels.send_file', {
            platform: p,
            chat_id: body.chat_id,
            path: file.path,
            name: file.name,
          }),
        );
        return { body: { sent: true as const, ...r } };
      },
    }),
    route({
      method: 'GET',
      path: '/api/channels/:platform/pairings',
      summary:
        'Pairing requests of the last hour and their answers: people not in allowed_users who wrote to the bot and were given a code.',
      response: pairingList,
      handler: ({ params }) => ({
        body: { items: listPairings(deps.db, platformOr404(params.platform)) },
      }),
    }),
    route({
      method: 'POST',
      path: '/api/channels/:platform/pairings',
      summary:
        'Approves (the user may talk to the agent from now on) or rejects a pairing code: {"code", "decision": "approve"|"reject"}. The user is told in the chat.',
      body: pairingBody,
      response: pairingView,
      handler: async ({ params, body }) => {
        const p = platformOr404(params.platform);
        const pairing = answerPairing(deps.db, p, body.code, body.decision === 'approve');
        if (!pairing)
          throw new ApiError(
            'not_found',
            `No pending pairing code ${body.code.toUpperCase()} for ${platformInfo[p].label} (codes last an hour); GET /api/channels/${p}/pairings lists them.`,
          );
        deps.publish('channels', 'channels.pairing', pairing);
        if (entryOf(p)?.enabled)
          await deps.endpoint
            .request('channels.paired', {
              platform: p,
              chat_id: pairing.chat_id,
              approved: pairing.status === 'approved',
            })
            .catch(() => undefined);
        return { body: pairing };
      },
    }),
  ];
}
