import { z } from 'zod';
import { skillInfoSchema } from '../events.js';

/** The answers of /api/skills (src/gateway/routes/skills.ts). zod and node-free, like answers.ts. */

export const skillList = z.lazy(() => z.object({ items: z.array(skillInfoSchema) }));
export const skillDeleted = z.lazy(() => z.object({ deleted: z.string(), trash_id: z.string() }));

/** What an import installed: the skill's files as unpacked, and the trash item of the one it replaced. */
export const skillImported = z.lazy(() =>
  z.object({
    name: z.string(),
    description: z.string(),
    files: z.array(z.object({ path: z.string(), size: z.number(), sha256: z.string() })),
    /** The trash item holding the skill this import replaced (force), or null. */
    replaced: z.string().nullable(),
  }),
);

/** The JSON body of POST /api/skills/import. */
export const skillImportJson = z.lazy(() =>
  z.strictObject({
    source: z
      .string()
      .trim()
      .min(
        1,
        'source names an upload (from POST /api/upload) or an absolute path to a skill folder or zip on this machine',
      )
      .max(4096)
      .describe(
        "An upload's name (from POST /api/upload, or its /api/uploads/<name> address), or the absolute path of a skill folder or .zip on this machine.",
      ),
    force: z
      .boolean()
      .optional()
      .describe('Replace a skill of the same name (the old one goes to the trash); else 409.'),
  }),
);
