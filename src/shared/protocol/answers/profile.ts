import { z } from 'zod';

/** The answers of /api/profile/{soul,user} and /api/memories. zod and node-free. */

export const profileFile = z.lazy(() =>
  z.object({
    name: z.enum(['soul', 'user']),
    path: z.string(),
    /** false: the file is missing; content is then "". */
    exists: z.boolean(),
    /** At most the first 256 KiB; truncated says when cut. */
    content: z.string(),
    /** The file's size in bytes. */
    size: z.number().int(),
    updated_at: z.string().nullable(),
    truncated: z.boolean(),
  }),
);

export const memoriesView = z.lazy(() =>
  z.object({
    /** MEMORY.md's text, or "". */
    index: z.string(),
    index_truncated: z.boolean(),
    /** The notes, sorted by name. */
    files: z.array(
      z.object({
        name: z.string(),
        file: z.string(),
        size: z.number().int(),
        updated_at: z.string(),
      }),
    ),
  }),
);
