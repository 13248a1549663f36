import { z } from 'zod';

/** The archive's own description of itself: `manifest.json`, the last entry of every backup. */
export const MANIFEST_NAME = 'manifest.json';
export const BACKUP_FORMAT = 'svc-backup';
export const BACKUP_FORMAT_VERSION = 1;

export const ManifestFile = z.object({
  /** Relative to $SVC_HOME, always with forward slashes. */
  path: z.string().min(1),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

export const Manifest = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.number().int().positive(),
  svc_version: z.string(),
  /** The newest store migration applied in the snapshot of svc.db. */
  schema_version: z.number().int().nonnegative(),
  created_at: z.string(),
  uploads: z.boolean(),
  /** The archive holds secrets (keys, bot tokens, sign-ins): keep it like a password file. */
  secrets: z.boolean(),
  files: z.array(ManifestFile),
  /** What was seen but left out, and why (a socket, a symlink, a file gone while reading). */
  skipped: z.array(z.object({ path: z.string(), why: z.string() })),
});
export type Manifest = z.infer<typeof Manifest>;

/** `svc-backup-20261127-153012.zip`, `.zip.age` when encrypted; sorts by time. */
export const BACKUP_NAME = /^svc-backup-\d{8}-\d{6}(?:-\d+)?\.zip(?:\.age)?$/;

export function backupName(at: Date, encrypted: boolean): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getUTCFullYear()}${p(at.getUTCMonth() + 1)}${p(at.getUTCDate())}-${p(at.getUTCHours())}${p(at.getUTCMinutes())}${p(at.getUTCSeconds())}`;
  return `svc-backup-${stamp}.zip${encrypted ? '.age' : ''}`;
}
