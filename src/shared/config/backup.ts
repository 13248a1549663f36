import { z } from 'zod';
import { scheduleProblem } from '../cron/schedule.js';

/**
 * Scheduled backups (`backup:` in config.yml). No schedule, no scheduled backups; `svc backup`
 * and `POST /api/backups` work either way. An encrypted schedule needs a key that is not in
 * this file: age recipients (public keys) or a passphrase file.
 */
export const backupConfigSchema = z
  .object({
    schedule: z
      .string()
      .superRefine((s, ctx) => {
        const problem = scheduleProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /** Where archives go; default $SVC_HOME/backups (put it on another disk to survive this one). */
    dir: z.string().min(1).optional(),
    /** The newest this many scheduled archives are kept; older ones in `dir` are removed. */
    keep: z.number().int().min(1).max(1000).default(7),
    uploads: z.boolean().default(true),
    encrypt: z.boolean().default(false),
    recipients: z
      .array(z.string().regex(/^age1[0-9a-z]+$/, 'an age public key (age1…)'))
      .default([]),
    passphrase_file: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.encrypt && b.recipients.length === 0 && b.passphrase_file === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['encrypt'],
        message: 'encrypt needs recipients (age public keys) or passphrase_file',
      });
  })
  .prefault({});

export type BackupConfig = z.infer<typeof backupConfigSchema>;
