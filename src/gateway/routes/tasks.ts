import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { getSession } from '../../shared/store/sessions.js';
import { createTask, deleteTask, listTasks, taskFields, taskKinds, taskStatuses, updateTask, type Task } from '../../shared/store/tasks.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';

const listQuery = z.object({
  kind: z.enum(taskKinds).optional(),
  session: z.string().min(1).max(100).optional(),
  status: z.enum(taskStatuses).optional(),
});
const createBody = z.strictObject({
  kind: z.enum(taskKinds).default('graph'),
  subject: taskFields.subject,
  description: taskFields.description.optional(),
  status: taskFields.status.optional(),
  blocked_by: taskFields.blocked_by.optional(),
  owner_session: z.string().min(1).max(100).nullable().optional(),
});
const patchFields = { subject: taskFields.subject, description: taskFields.description, status: taskFields.status, blocked_by: taskFields.blocked_by };
const patchBody = z
  .strictObject(patchFields)
  .partial()
  .refine((b) => Object.keys(b).length > 0, `send at least one of: ${Object.keys(patchFields).join(', ')}`);

/** The task list (kind 'graph': the agent's plan; 'cron' comes later), with events on topic `tasks`. */
export function taskRoutes(deps: Deps): Route[] {
  const announce = (type: string, data: Task | { id: string; kind: string; owner_session: string | null }) => deps.publish('tasks', type, data);
  return [
    route({
      method: 'GET',
      path: '/api/tasks',
      summary: 'Tasks in creation order. Query: kind (graph), session (owner session id), status (pending, in_progress, completed). Answers {items}.',
      query: listQuery,
      handler: ({ query }) => ({ body: { items: listTasks(deps.db, query) } }),
    }),
    route({
      method: 'POST',
      path: '/api/tasks',
      summary: 'Creates a task: subject (required), description, status (default pending), blocked_by (existing task ids), owner_session, kind (default graph). Answers 201 with the task.',
      body: createBody,
      handler: ({ body }) => {
        if (body.owner_session != null && !getSession(deps.db, body.owner_session)) {
          throw new ApiError('invalid_request', `Invalid request body: owner_session: there is no session ${body.owner_session}.`, [{ path: 'owner_session', message: 'unknown session' }]);
        }
        const t = createTask(deps.db, body);
        announce('task.created', t);
        return { status: 201, body: t };
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/tasks/:id',
      summary: 'Changes any of: subject, description, status, blocked_by. A task may be in_progress or completed only once its blockers are completed (409 otherwise); an unknown blocker or a cycle is a 400.',
      body: patchBody,
      handler: ({ params, body }) => {
        const t = updateTask(deps.db, params.id!, body);
        announce('task.updated', t);
        return { body: t };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/tasks/:id',
      summary: 'Deletes a task and removes it from the blocked_by of the tasks it blocked. Answers {deleted}.',
      handler: ({ params }) => {
        const { deleted, unblocked } = deleteTask(deps.db, params.id!);
        announce('task.deleted', { id: deleted.id, kind: deleted.kind, owner_session: deleted.owner_session });
        for (const t of unblocked) announce('task.updated', t);
        return { body: { deleted: deleted.id } };
      },
    }),
  ];
}
