import { z } from 'zod';
import { sessionSchema } from '../events.js';
import { cronTaskSchema } from './tasks.js';

/** The answers of /api/trash. zod and node-free. */

/** An item in the trash, without its contents. */
export const trashEntry = z.lazy(() =>
  z
    .object({
      id: z.string(),
      /** session, file, skill, cron_task, mcp_server, channel_config, … */
      kind: z.string(),
      /** What a person recognises: a session title, a file name. */
      name: z.string(),
      /** Where it came from: a session id, an absolute path, a skill name. */
      original: z.string(),
      size_bytes: z.number(),
      deleted_at: z.string(),
      /** When retention deletes it for good. */
      expires_at: z.string(),
    })
    .meta({ id: 'TrashItem' }),
);

export const trashPage = z.lazy(() =>
  z.object({
    items: z.array(trashEntry),
    next_cursor: z.string().nullable(),
    total_items: z.number().int(),
    total_bytes: z.number(),
  }),
);

/** What went back, and where; each kind adds what a client shows next. */
export const trashRestored = z.lazy(() =>
  z.object({
    id: z.string(),
    kind: z.string(),
    /** The place it went back to: a session id, a path, a skill, task, server or platform name. */
    restored_to: z.string(),
    /** A session: as it is now. */
    session: sessionSchema.optional(),
    /** A scheduled task: as GET /api/tasks/{id} shows it. */
    task: cronTaskSchema.optional(),
    /** A skill: its name. */
    skill: z.string().optional(),
    /** A file whose place already holds the same content: nothing was written. */
    unchanged: z.literal(true).optional(),
    /** A file that replaced a changed one: the trash item the replaced content went to. */
    backed_up_as: z.string().optional(),
  }),
);

export const trashItemDeleted = z.lazy(() => z.object({ deleted: z.string() }));
export const trashEmptied = z.lazy(() =>
  z.object({
    /** How many items were deleted for good. */
    deleted: z.number().int(),
  }),
);
