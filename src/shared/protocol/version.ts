import { z } from 'zod';

/** GET /api/version: the running version and what the automatic check found. */
export const versionInfoSchema = z.object({
  name: z.literal('svc'),
  version: z.string(),
  /** A version with a suffix: never offered an update. */
  dev_build: z.boolean(),
  latest: z.string().nullable(),
  update_available: z.boolean(),
  checked_at: z.string().nullable(),
  release_url: z.string().nullable(),
  /** The release notes' first lines. */
  notes: z.array(z.string()),
  check_enabled: z.boolean(),
  check_error: z.string().nullable(),
  upgrading: z.boolean(),
});
export type VersionInfo = z.infer<typeof versionInfoSchema>;

/** One step of an upgrade: `svc upgrade --json` prints these, /ws (topic server, type upgrade) carries them. */
export const upgradeProgressSchema = z.object({
  stage: z.enum([
    'checking',
    'downloading',
    'verifying',
    'installing',
    'restarting',
    'done',
    'failed',
  ]),
  message: z.string().max(2000).optional(),
  bytes: z.number().int().nonnegative().optional(),
  total: z.number().int().nonnegative().optional(),
  version: z.string().max(100).optional(),
});
export type UpgradeProgress = z.infer<typeof upgradeProgressSchema>;
