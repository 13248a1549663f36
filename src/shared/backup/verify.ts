import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Opening } from './age.js';
import type { Manifest } from './manifest.js';
import { integrityProblems, knownSchema } from './schema.js';
import { unpackChecked, type Problem } from './unpack.js';

export interface VerifyReport {
  ok: boolean;
  file: string;
  encrypted: boolean;
  manifest?: Pick<Manifest, 'svc_version' | 'schema_version' | 'created_at' | 'uploads'>;
  files: number;
  bytes: number;
  problems: Problem[];
  /** Whether this svc can restore it (an archive of a newer svc cannot be). */
  restorable: boolean;
}

/**
 * Checks a backup without restoring it: the manifest, every file's size and SHA-256, and the
 * database's `PRAGMA integrity_check` on a copy unpacked into a private temp folder.
 */
export async function verifyBackup(file: string, opening?: Opening): Promise<VerifyReport> {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-backup-verify-'));
  try {
    const r = await unpackChecked(file, {
      ...(opening ? { opening } : {}),
      into: scratch,
      keep: (p) => p === 'svc.db',
    });
    const problems = [...r.problems];
    const hasDb = r.manifest?.files.some((f) => f.path === 'svc.db') ?? false;
    if (hasDb && !problems.some((p) => p.path === 'svc.db'))
      for (const p of integrityProblems(join(scratch, 'svc.db')))
        problems.push({ path: 'svc.db', problem: `integrity check: ${p}` });
    const m = r.manifest;
    return {
      ok: problems.length === 0,
      file,
      encrypted: r.encrypted,
      ...(m
        ? {
            manifest: {
              svc_version: m.svc_version,
              schema_version: m.schema_version,
              created_at: m.created_at,
              uploads: m.uploads,
            },
          }
        : {}),
      files: r.files,
      bytes: r.bytes,
      problems,
      restorable: m !== undefined && m.schema_version <= knownSchema(),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
