import { lazyEntries } from './lazy.js';
import { z } from 'zod';

/** What a client may set of `backup:` in config.yml; the whole section is replaced, then checked. */
export const backupSettings = z.strictObject({
  schedule: z.string().min(1).max(200).nullable().optional(),
  dir: z.string().min(1).max(4096).nullable().optional(),
  keep: z.number().int().min(1).max(1000).optional(),
  uploads: z.boolean().optional(),
  encrypt: z.boolean().optional(),
  recipients: z.array(z.string().max(200)).max(20).optional(),
  passphrase_file: z.string().min(1).max(4096).nullable().optional(),
});
export type BackupSettings = z.infer<typeof backupSettings>;

/** The request types of backups; ipc.ts spreads them into its table. */
export const backupRequestMakers = {
  /** gateway → supervisor: write `backup:` in config.yml (the cron worker picks the schedule up). */
  'config.backup.set': () => ({ payload: backupSettings, result: z.object({}) }),
  /** gateway → cron worker (started on demand): make a backup now as config.yml's `backup:` says. conflict while one runs. */
  'backup.create': () => ({
    payload: z.object({}),
    result: z.object({ file: z.string(), size: z.number(), files: z.number(), ms: z.number() }),
  }),
} as const;
export const backupRequestDefs = lazyEntries(backupRequestMakers);

/** The last backup svc made (scheduled or asked for), for `svc status`, `svc doctor` and the API. */
export const BackupResult = z.object({
  trigger: z.enum(['schedule', 'manual']),
  started_at: z.string(),
  ended_at: z.string(),
  ok: z.boolean(),
  file: z.string().nullable(),
  size: z.number().nullable(),
  ms: z.number(),
  error: z.string().nullable(),
});
export type BackupResult = z.infer<typeof BackupResult>;
