import { z } from 'zod';
import { viewSummary } from '../../shared/event-summaries.js';
import { fileTrashKind } from '../../shared/store/file-trash.js';
import { sessionTrashKind } from '../../shared/store/session-trash.js';
import { skillTrashKind } from '../../shared/skills/trash.js';
import {
  CRON_TRASH_KIND,
  cronTaskTrashKind,
  cronTaskView,
  type CronTask,
} from '../../shared/store/cron.js';
import type { Session } from '../../shared/store/sessions.js';
import {
  deleteFromTrash,
  emptyTrash,
  getTrashItem,
  listTrashPage,
  notInTrash,
  parseTrashCursor,
  restoreFromTrash,
  trashTotals,
  trashView,
  type TrashKinds,
} from '../../shared/store/trash.js';
import {
  trashEmptied,
  trashItemDeleted,
  trashPage,
  trashRestored,
} from '../../shared/protocol/answers/trash.js';
import type { Deps } from '../deps.js';
import { route, type Route } from '../route.js';
import { badCursor, pageQuery } from './sessions/sessions.js';

/** How each kind of item goes back; later kinds (files, skills, recordings, tasks) add a line here. */
export const trashKinds: TrashKinds = {
  session: sessionTrashKind,
  file: fileTrashKind,
  skill: skillTrashKind,
  [CRON_TRASH_KIND]: cronTaskTrashKind,
};

const restoreBody = z
  .strictObject({
    as_new: z.boolean(),
    new_name: z
      .string()
      .trim()
      .min(1, 'new_name must not be empty')
      .max(200, 'new_name is at most 200 characters'),
  })
  .partial();

/** The trash: list, restore, delete for good, empty. Events go to the `trash` topic. */
export function trashRoutes(deps: Deps): Route[] {
  const days = () => deps.config().trash.retention_days;
  return [
    route({
      method: 'GET',
      path: '/api/trash',
      summary:
        'Deleted items, newest first, a page at a time (items carry no payload). Query: limit (1-200, default 50), cursor (next_cursor of the previous page). Answers {items: [{id, kind, name, original, size_bytes, deleted_at, expires_at}], next_cursor, total_items, total_bytes}.',
      query: pageQuery,
      response: trashPage,
      handler: ({ query: q }) => {
        const after = q.cursor === undefined ? undefined : parseTrashCursor(q.cursor);
        if (q.cursor !== undefined && !after) throw badCursor();
        const page = listTrashPage(deps.db, { limit: q.limit, after });
        const totals = trashTotals(deps.db);
        return {
          body: {
            items: page.items.map((i) => trashView(i, days())),
            next_cursor: page.next_cursor,
            total_items: totals.count,
            total_bytes: totals.bytes,
          },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/trash/:id/restore',
      summary:
        'Puts an item back where it was. 409 with a reason when that place is taken; then send {"as_new": true} (or {"new_name": "..."}) to restore it beside, under a new id or name.',
      body: restoreBody,
      response: trashRestored,
      errors: [409],
      handler: async ({ params, body }) => {
        // Kinds whose place is config.yml go back through the supervisor, its only writer.
        if (getTrashItem(deps.db, params.id)?.kind === 'mcp_server') {
          const r = await deps.endpoint.request('trash.restore', { id: params.id, options: body });
          deps.publish('trash', 'trash.restored', {
            id: params.id,
            kind: 'mcp_server',
            restored_to: r.restored_to,
          });
          deps.publish('mcp', 'mcp.config', { names: [r.restored_to] });
          return { body: { id: params.id, kind: 'mcp_server', restored_to: r.restored_to } };
        }
        if (getTrashItem(deps.db, params.id)?.kind === 'channel_config') {
          const r = await deps.endpoint.request('trash.restore', { id: params.id, options: body });
          deps.publish('trash', 'trash.restored', {
            id: params.id,
            kind: 'channel_config',
            restored_to: r.restored_to,
          });
          deps.publish('channels', 'channels.changed', { platform: r.restored_to });
          return { body: { id: params.id, kind: 'channel_config', restored_to: r.restored_to } };
        }
        const { item, result } = restoreFromTrash(deps.db, deps.paths, trashKinds, params.id, body);
        deps.publish('trash', 'trash.restored', {
          id: item.id,
          kind: item.kind,
          restored_to: result.restored_to,
        });
        const answer = { id: item.id, kind: item.kind, restored_to: result.restored_to };
        if (item.kind === 'session') {
          const s = result.session as Session;
          deps.publish('sessions', 'session.restored', s);
          deps.publish(`session:${s.id}`, 'session.restored', s);
          return { body: { ...answer, session: s } };
        }
        if (item.kind === 'skill') {
          deps.publish('skills', 'skill.created', { name: result.restored_to, restored: true });
          return { body: { ...answer, skill: result.restored_to } };
        }
        if (item.kind === CRON_TRASH_KIND) {
          const task = cronTaskView(deps.db, result.task as CronTask);
          deps.publish('tasks', 'task.created', viewSummary({ ...task, restored: true }));
          await deps.endpoint
            .request('cron.changed', { id: result.restored_to })
            .catch(() => undefined);
          return { body: { ...answer, task } };
        }
        // A file: the same content was there already, or the changed one went to the trash.
        return {
          body: {
            ...answer,
            ...(result.unchanged === true ? { unchanged: true as const } : {}),
            ...(typeof result.backed_up_as === 'string'
              ? { backed_up_as: result.backed_up_as }
              : {}),
          },
        };
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/trash/:id',
      summary: 'Deletes one item for good.',
      response: trashItemDeleted,
      handler: ({ params }) => {
        if (!deleteFromTrash(deps.db, deps.paths, params.id)) throw notInTrash(params.id);
        deps.publish('trash', 'trash.deleted', { id: params.id });
        return { body: { deleted: params.id } };
      },
    }),
    route({
      method: 'POST',
      path: '/api/trash/empty',
      summary: 'Deletes every item for good: {deleted: n}.',
      body: z.strictObject({}),
      response: trashEmptied,
      handler: () => {
        const n = emptyTrash(deps.db, deps.paths);
        deps.publish('trash', 'trash.emptied', { deleted: n });
        return { body: { deleted: n } };
      },
    }),
  ];
}
