import { z } from 'zod';
import { BackupResult } from '../backup.js';

/** The answers of /api/backups. zod and node-free. */

export const backupList = z.lazy(() =>
  z.object({
    /** The folder the archives are in. */
    dir: z.string(),
    /** The cron line of scheduled backups, or null for none. */
    schedule: z.string().nullable(),
    keep: z.number().int(),
    encrypt: z.boolean(),
    /** The last backup svc made, scheduled or asked for. */
    last: BackupResult.nullable(),
    /** Newest first. */
    items: z.array(
      z.object({
        name: z.string(),
        size: z.number(),
        created_at: z.string(),
        /** An age-encrypted archive (.age). */
        encrypted: z.boolean(),
      }),
    ),
  }),
);

/** POST /api/backups: the archive, once it is whole. */
export const backupMade = z.lazy(() =>
  z.object({
    name: z.string(),
    size: z.number(),
    /** How many files it holds. */
    files: z.number(),
    ms: z.number(),
  }),
);

/** PUT /api/backups/settings: what config.yml now says. */
export const backupSettingsView = z.lazy(() =>
  z.object({
    schedule: z.string().nullable(),
    dir: z.string(),
    keep: z.number().int(),
    uploads: z.boolean(),
    encrypt: z.boolean(),
  }),
);
