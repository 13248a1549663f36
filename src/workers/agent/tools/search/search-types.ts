import { z } from 'zod';

/** What the search pool's threads are asked to do and what they answer, checked on both sides. */
const limits = {
  root: z.string(),
  maxFiles: z.number().int().positive(),
  maxResults: z.number().int().positive(),
  /** How long the walk may take before it stops itself and reports what it found. */
  timeMs: z.number().int().positive(),
  /** Absolute paths never listed or read (svc's own secrets and state). */
  skip: z.array(z.string()),
};

export const globTaskSchema = z.object({
  op: z.literal('glob'),
  ...limits,
  pattern: z.string(),
  /** The pattern had a slash: it matches the path below root, not a name at any depth. */
  anchored: z.boolean(),
});

export const grepTaskSchema = z.object({
  op: z.literal('grep'),
  ...limits,
  pattern: z.string(),
  flags: z.string(),
  /** A glob the files must match (like glob's pattern). */
  include: z.string().nullable(),
  context: z.number().int().nonnegative(),
  maxLineChars: z.number().int().positive(),
  maxFileBytes: z.number().int().positive(),
});

export const searchTaskSchema = z.discriminatedUnion('op', [globTaskSchema, grepTaskSchema]);
export type GlobTask = z.infer<typeof globTaskSchema>;
export type GrepTask = z.infer<typeof grepTaskSchema>;
export type SearchTask = z.infer<typeof searchTaskSchema>;

const common = {
  scanned: z.number().int(),
  stopped: z.enum(['files', 'time']).nullable(),
  /** The worker thread that did the work (0 would be a main thread). */
  threadId: z.number().int(),
};

export const globResultSchema = z.object({
  op: z.literal('glob'),
  ...common,
  /** Newest first, at most maxResults. */
  files: z.array(z.object({ path: z.string(), mtimeMs: z.number() })),
  total: z.number().int(),
});

export const grepLineSchema = z.object({
  n: z.number().int(),
  text: z.string(),
  match: z.boolean(),
});

export const grepResultSchema = z.object({
  op: z.literal('grep'),
  ...common,
  /** By path, then line; context lines included, each file's lines in order. */
  files: z.array(z.object({ path: z.string(), lines: z.array(grepLineSchema) })),
  matches: z.number().int(),
  /** Stopped at maxResults matches (there may be more). */
  capped: z.boolean(),
  skippedBinary: z.number().int(),
  skippedLarge: z.number().int(),
});

export type GlobResult = z.infer<typeof globResultSchema>;
export type GrepResult = z.infer<typeof grepResultSchema>;
export type GrepLine = z.infer<typeof grepLineSchema>;
