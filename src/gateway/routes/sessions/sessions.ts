import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { modelIdSchema } from '../../../shared/config/schema.js';
import { ApiError } from '../../../shared/errors.js';
import { log } from '../../../shared/log.js';
import { networkSchema } from '../../../shared/sandbox/network.js';
import { listArtifacts } from '../../../shared/store/artifacts.js';
import { getGoal } from '../../../shared/store/goals.js';
import { sessionUsage } from '../../../shared/store/usage.js';
import { getMessage, listMessages, parseMessageCursor } from '../../../shared/store/messages.js';
import { trashSession } from '../../../shared/store/session-trash.js';
import {
  createSession,
  listSessionsJson,
  parseSessionCursor,
  permissionModes,
  reasoningEfforts,
  requireSession,
  sessionNotFound,
  updateSession,
  type Session,
  type SessionSettings,
} from '../../../shared/store/sessions.js';
import { trashView } from '../../../shared/store/trash.js';
import type { Deps } from '../../deps.js';
import { keyRequired, wideningFields } from '../../person.js';
import { messageSummarySchema, sessionSchema } from '../../../shared/protocol/events.js';
import {
  artifactList,
  messagePage,
  sessionDeleted,
  sessionDetail,
  sessionPage,
} from '../../../shared/protocol/answers.js';
import { route, type Route } from '../../route.js';

export const settingsShape = {
  title: z
    .string()
    .trim()
    .min(1, 'the title must not be empty')
    .max(200, 'the title is at most 200 characters'),
  model_id: modelIdSchema.nullable(),
  reasoning_effort: z.enum(reasoningEfforts),
  show_reasoning: z.boolean(),
  permission_mode: z.enum(permissionModes),
  working_dir: z.string().min(1, 'the working directory must not be empty').max(4096).nullable(),
  network: networkSchema
    .nullable()
    .describe(
      'The sandbox network for terminal commands: "on", "off", or a list of hosts reached through an allow-list proxy; null follows permissions.yml (else "on").',
    ),
};
const createBody = z.strictObject(settingsShape).partial();
const patchBody = z
  .strictObject(settingsShape)
  .partial()
  .refine(
    (b) => Object.keys(b).length > 0,
    `send at least one of: ${Object.keys(settingsShape).join(', ')}`,
  );

/** A page query: `limit` 1-200 (default 50) and an opaque `cursor` from the previous page. */
export const pageQuery = z.object({
  limit: z
    .string()
    .regex(/^\d{1,6}$/, 'limit must be a whole number from 1 to 200')
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, 'limit must be a whole number from 1 to 200')
        .max(200, 'limit must be a whole number from 1 to 200'),
    )
    .default(50),
  cursor: z.string().optional(),
});

export function badCursor(): ApiError {
  return new ApiError(
    'invalid_request',
    'Invalid query parameter cursor: it is not a cursor this list gave out; start again without it.',
    [{ path: 'cursor', message: 'unknown cursor' }],
  );
}

function fieldError(field: string, message: string): ApiError {
  return new ApiError('invalid_request', `Invalid request body: ${field}: ${message}.`, [
    { path: field, message },
  ]);
}

/** The checks a schema cannot make: the model entry exists in config, the folder exists on disk. */
export function checkSettings(deps: Deps, s: SessionSettings): SessionSettings {
  if (s.model_id != null && !Object.hasOwn(deps.config().models, s.model_id)) {
    const known = Object.keys(deps.config().models);
    throw fieldError(
      'model_id',
      `there is no model entry "${s.model_id}" (${known.length > 0 ? `known: ${known.join(', ')}` : 'none is configured yet'}); use null for the default slot`,
    );
  }
  if (s.working_dir != null) {
    if (!isAbsolute(s.working_dir))
      throw fieldError('working_dir', `"${s.working_dir}" is not an absolute path`);
    let isDir = false;
    try {
      isDir = statSync(s.working_dir).isDirectory();
    } catch {
      throw fieldError('working_dir', `"${s.working_dir}" does not exist (or cannot be read)`);
    }
    if (!isDir) throw fieldError('working_dir', `"${s.working_dir}" is not a folder`);
    return { ...s, working_dir: resolve(s.working_dir) };
  }
  return s;
}

/** Sessions: list, create, read, change, delete (to the trash), their messages and artifacts. */
export function sessionRoutes(deps: Deps): Route[] {
  const announce = (s: Session) => {
    deps.publish('sessions', 'session.updated', s);
    deps.publish(`session:${s.id}`, 'session.updated', s);
  };
  return [
    route({
      method: 'GET',
      path: '/api/sessions',
      summary:
        'Sessions, newest first. Query: limit (1-200, default 50), cursor (next_cursor of the previous page). Answers {items, next_cursor}.',
      query: pageQuery,
      response: sessionPage,
      handler: ({ query: q }) => {
        const after = q.cursor === undefined ? undefined : parseSessionCursor(q.cursor);
        if (q.cursor !== undefined && !after) throw badCursor();
        return {
          body: listSessionsJson(deps.db, { limit: q.limit, after }),
          headers: { 'Content-Type': 'application/json' },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/sessions',
      summary: 'Creates an empty session; every setting is optional. Answers 201 with the session.',
      body: createBody,
      status: 201,
      response: sessionSchema,
      handler: ({ body }) => {
        const s = createSession(deps.db, checkSettings(deps, body));
        deps.publish('sessions', 'session.created', s);
        return { status: 201, body: s };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id',
      summary:
        'One session, with its goal (null when it has none), so a client opening it needs no second request that may 404, and `spend`: what its model calls used and cost (see GET /api/usage).',
      response: sessionDetail,
      handler: ({ params }) => {
        const s = requireSession(deps.db, params.id);
        return {
          body: { ...s, goal: getGoal(deps.db, s.id) ?? null, spend: sessionUsage(deps.db, s.id) },
        };
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/sessions/:id',
      summary:
        'Changes any of: title, model_id (an entry under models, or null for the default slot), reasoning_effort, show_reasoning, permission_mode, working_dir (an existing absolute folder, or null), network (sandbox: on, off, or a host list; null follows permissions.yml). A change that lets the agent do more (a more permissive mode, a wider network, a folder outside the current one) needs the access key even on loopback: 403 key_required without it.',
      body: patchBody,
      response: sessionSchema,
      handler: ({ params, body, keyed }) => {
        const before = requireSession(deps.db, params.id);
        const change = checkSettings(deps, body);
        const wider = wideningFields(before, change);
        if (wider.length > 0 && !keyed)
          throw keyRequired(`Widening ${wider.join(', ')} of a session`);
        const s = updateSession(deps.db, params.id, change);
        if (!s) throw sessionNotFound(params.id);
        announce(s);
        return { body: s };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/sessions/:id',
      summary:
        "Ends the session's running turn (interrupted, keeping what it streamed), then moves the session, with its messages, artifacts and goal, to the trash. Answers {deleted, trash_id}.",
      response: sessionDeleted,
      handler: async ({ params }) => {
        requireSession(deps.db, params.id);
        // The turn ends first: the trash then holds the whole conversation, and no turn runs on (and spends tokens for) a deleted session.
        await deps.endpoint
          .request('turn.interrupt', { session_id: params.id, wait: true })
          .catch((err: Error) => {
            log.warn('the running turn of a deleted session could not be stopped first', {
              session: params.id,
              error: err.message,
            });
          });
        const r = trashSession(deps.db, deps.paths, params.id);
        if (!r) throw sessionNotFound(params.id);
        const data = { id: r.session.id, trash_id: r.item.id };
        deps.publish('sessions', 'session.deleted', data);
        deps.publish(`session:${r.session.id}`, 'session.deleted', data);
        deps.publish('trash', 'trash.added', trashView(r.item, deps.config().trash.retention_days));
        return { body: { deleted: r.session.id, trash_id: r.item.id } };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/messages',
      summary:
        'The transcript, oldest first. Query: limit (1-200, default 50), cursor. Answers {items, next_cursor}.',
      query: pageQuery,
      response: messagePage,
      handler: ({ params, query: q }) => {
        const afterSeq = q.cursor === undefined ? undefined : parseMessageCursor(q.cursor);
        if (q.cursor !== undefined && afterSeq === undefined) throw badCursor();
        requireSession(deps.db, params.id);
        return { body: listMessages(deps.db, params.id, { limit: q.limit, afterSeq }) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/messages/:message_id',
      summary:
        'One message, whole: a /ws event carries a message cut to 4 KB (`truncated: true`) and its id.',
      response: messageSummarySchema,
      handler: ({ params }) => {
        requireSession(deps.db, params.id!);
        const m = getMessage(deps.db, params.id!, params.message_id!);
        if (!m)
          throw new ApiError(
            'not_found',
            `There is no message ${JSON.stringify(params.message_id)} in session ${params.id}; GET /api/sessions/${params.id}/messages lists them.`,
          );
        return { body: m };
      },
    }),
    route({
      method: 'GET',
      path: '/api/sessions/:id/artifacts',
      summary:
        'Files this session produced: {items: [{id, path, size, mime, created_at, updated_at}]}.',
      response: artifactList,
      handler: ({ params }) => {
        requireSession(deps.db, params.id);
        return { body: { items: listArtifacts(deps.db, params.id) } };
      },
    }),
  ];
}
