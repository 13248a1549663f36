import { z } from 'zod';

const MiB = 1024 * 1024;

/** config.yml. Strict, so a misspelt key is reported instead of silently ignored. */
export const configSchema = z
  .object({
    addr: z.string().optional().describe('listen address; the -addr flag wins'),
    access_key: z.string().min(16, 'the access key must be at least 16 characters').regex(/^\S+$/, 'the access key must not contain spaces').optional(),
    cors: z.array(z.string()).default([]),
    limits: z
      .object({
        json_body_bytes: z.number().int().positive().default(1 * MiB),
        upload_bytes: z.number().int().positive().default(512 * MiB),
        ws_frame_bytes: z.number().int().positive().default(4 * MiB),
      })
      .strict()
      .prefault({}),
    restart: z
      .object({ drain_seconds: z.number().positive().max(600).default(30) })
      .strict()
      .prefault({}),
    agent: z
      .object({ max_workers: z.number().int().min(1).max(32).default(2) })
      .strict()
      .prefault({}),
    log: z
      .object({ level: z.enum(['debug', 'info', 'warn', 'error']).default('info') })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
