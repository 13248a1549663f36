import { z } from 'zod';
import { viewSummary } from '../../../shared/event-summaries.js';
import { ApiError } from '../../../shared/errors.js';
import { getSession } from '../../../shared/store/sessions.js';
import {
  createTask,
  deleteTask,
  getTask,
  listTasks,
  taskNotFound,
  taskFields,
  taskKinds,
  taskStatuses,
  updateTask,
} from '../../../shared/store/tasks.js';
import { anyTaskSchema, taskDeleted, taskList } from '../../../shared/protocol/answers/tasks.js';
import type { Deps } from '../../deps.js';
import { requestBodyDoc } from '../../request-doc.js';
import { route, type Route } from '../../route.js';
import { createCron, cronRoutes, cronTaskApi, parseBody, patchCron } from './runs.js';

const listQuery = z.object({
  kind: z.enum([...taskKinds, 'cron']).optional(),
  session: z.string().min(1).max(100).optional(),
  status: z.enum(taskStatuses).optional(),
});
/** What each field means to a client (the agent's tools take the same fields without these). */
const graphFields = {
  subject: taskFields.subject.describe('What is to be done (1-200 characters).'),
  description: taskFields.description.describe('The details (at most 10,000 characters).'),
  status: taskFields.status.describe(
    'pending (the default), in_progress or completed; in_progress and completed only once every blocker is completed (409 otherwise).',
  ),
  blocked_by: taskFields.blocked_by.describe(
    'Ids of graph tasks that must be completed before this one starts (at most 50; an unknown id or a cycle is a 400).',
  ),
};
const createBody = z.strictObject({
  kind: z.enum(taskKinds).default('graph').describe('graph (the default): a task of a plan.'),
  subject: graphFields.subject,
  description: graphFields.description.optional(),
  status: graphFields.status.optional(),
  blocked_by: graphFields.blocked_by.optional(),
  owner_session: z
    .string()
    .min(1)
    .max(100)
    .nullable()
    .optional()
    .describe('The id of the session whose plan it is, or null.'),
});
const patchFields = graphFields;
const patchBody = z
  .strictObject(patchFields)
  .partial()
  .refine(
    (b) => Object.keys(b).length > 0,
    `send at least one of: ${Object.keys(patchFields).join(', ')}`,
  );

const kindOnly = z.looseObject({
  kind: z.enum([...taskKinds, 'cron'], 'kind is graph (the default) or cron').optional(),
});

/**
 * The task list, with events on topic `tasks`: kind 'graph' (the agent's plan) and kind 'cron'
 * (scheduled tasks, in ./runs.ts). A list without ?kind= shows the graph, as it always did.
 */
export function taskRoutes(deps: Deps): Route[] {
  const cron = cronTaskApi(deps);
  return [
    route({
      method: 'GET',
      path: '/api/tasks',
      summary:
        "Tasks in creation order. Query: kind (graph, the default, or cron), session (owner session id), status (pending, in_progress, completed). Answers {items}. Cron tasks carry next_run_at (UTC), next_run_local (the zone's wall time) and last_run.",
      query: listQuery,
      response: taskList,
      handler: ({ query }) => {
        if (query.kind === 'cron') {
          if (query.session !== undefined || query.status !== undefined)
            throw new ApiError(
              'invalid_request',
              'Invalid query parameter kind: session and status filter graph tasks only.',
              [{ path: 'kind', message: 'cron tasks take no session or status filter' }],
            );
          return { body: { items: cron.list() } };
        }
        return {
          body: {
            items: listTasks(
              deps.db,
              query as { kind?: 'graph'; session?: string; status?: (typeof taskStatuses)[number] },
            ),
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/api/tasks/:id',
      summary: 'One task of either kind.',
      response: anyTaskSchema,
      handler: ({ params }) => {
        if (cron.isCron(params.id)) return { body: cron.get(params.id) };
        const t = getTask(deps.db, params.id);
        if (!t) throw taskNotFound(params.id);
        return { body: t };
      },
    }),
    route({
      method: 'POST',
      path: '/api/tasks',
      summary:
        'Creates a task. Graph (kind omitted or "graph"): subject (required), description, status (default pending), blocked_by (existing task ids), owner_session. Cron (kind "cron"): name and schedule (required; 5 or 6 fields or a nickname such as @hourly), timezone (IANA, default the machine\'s), prompt or workflow with inputs, enabled (default true), model (id or slot, default the default slot), working_dir, permission_mode (default auto), session (new or reuse), notify [{platform, chat_id}], max_runtime_seconds (default 1800), catch_up (default true), approval_timeout_seconds (default config cron.approval_timeout_seconds). Answers 201 with the task.',
      body: kindOnly,
      // The handler parses the body by its kind: the document shows both bodies.
      requestBody: () =>
        requestBodyDoc(
          {
            'application/json': z.union([
              createBody.meta({ title: 'A graph task' }),
              createCron.meta({ title: 'A cron task' }),
            ]),
          },
          true,
        ),
      status: 201,
      response: anyTaskSchema,
      handler: async ({ body: raw }) => {
        if (raw.kind === 'cron') return { status: 201, body: await cron.create(raw) };
        const body = parseBody(createBody, raw);
        if (body.owner_session != null && !getSession(deps.db, body.owner_session)) {
          throw new ApiError(
            'invalid_request',
            `Invalid request body: owner_session: there is no session ${body.owner_session}.`,
            [{ path: 'owner_session', message: 'unknown session' }],
          );
        }
        const t = createTask(deps.db, body);
        deps.publish('tasks', 'task.created', viewSummary({ ...t }));
        return { status: 201, body: t };
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/tasks/:id',
      summary:
        'Changes any of: subject, description, status, blocked_by. A task may be in_progress or completed only once its blockers are completed (409 otherwise); an unknown blocker or a cycle is a 400. A cron task takes any subset of its fields (enabled to switch it on or off); the schedule changes at once.',
      body: z.unknown(),
      requestBody: () =>
        requestBodyDoc(
          {
            'application/json': z.union([
              patchBody.meta({ title: 'A graph task: any of its fields' }),
              patchCron.meta({ title: 'A cron task: any of its fields' }),
            ]),
          },
          true,
        ),
      response: anyTaskSchema,
      errors: [409],
      handler: async ({ params, body: raw }) => {
        if (cron.isCron(params.id)) return { body: await cron.patch(params.id, raw) };
        if (!getTask(deps.db, params.id)) throw taskNotFound(params.id);
        const body = parseBody(patchBody, raw);
        const t = updateTask(deps.db, params.id, body);
        deps.publish('tasks', 'task.updated', viewSummary({ ...t }));
        return { body: t };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/tasks/:id',
      summary:
        'Deletes a graph task and removes it from the blocked_by of the tasks it blocked. Answers {deleted}. A cron task goes to the trash (restorable with its schedule): {deleted, trash_id}.',
      response: taskDeleted,
      handler: async ({ params }) => {
        if (cron.isCron(params.id)) return { body: await cron.remove(params.id) };
        const { deleted, unblocked } = deleteTask(deps.db, params.id);
        deps.publish('tasks', 'task.deleted', {
          id: deleted.id,
          kind: deleted.kind,
          owner_session: deleted.owner_session,
        });
        for (const t of unblocked) deps.publish('tasks', 'task.updated', viewSummary({ ...t }));
        return { body: { deleted: deleted.id } };
      },
    }),
    ...cronRoutes(deps),
  ];
}
