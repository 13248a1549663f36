import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BackupConfig } from '../config/backup.js';
import type { Db } from '../store/db.js';
import { recordBackup, type BackupResult } from '../store/backups.js';
import type { Sealing } from './age.js';
import { createBackup, type Created } from './create.js';
import { BACKUP_NAME } from './manifest.js';

/** Where the configured backups go. */
export const backupDir = (home: string, cfg: BackupConfig): string =>
  resolve(home, cfg.dir ?? 'backups');

function sealingOf(cfg: BackupConfig): Sealing | undefined {
  if (!cfg.encrypt) return undefined;
  if (cfg.recipients.length > 0) return { recipients: cfg.recipients };
  const text = readFileSync(cfg.passphrase_file ?? '', 'utf8').split('\n')[0] ?? '';
  if (text === '') throw new Error(`${cfg.passphrase_file} holds no passphrase`);
  return { passphrase: text };
}

/** `svc-backup-20261127-030000-2.zip` → `20261127-030000-000002`: the order archives were made in. */
const orderOf = (name: string) => {
  const m = /^svc-backup-(\d{8}-\d{6})(?:-(\d+))?/.exec(name);
  return `${m?.[1] ?? ''}-${(m?.[2] ?? '1').padStart(6, '0')}`;
};

/** The archives in a folder, newest first. */
export function listArchives(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => BACKUP_NAME.test(n))
      .sort((a, b) => (orderOf(a) < orderOf(b) ? 1 : orderOf(a) > orderOf(b) ? -1 : 0));
  } catch {
    return [];
  }
}

/**
 * One backup as config.yml describes it (the scheduler's and the API's), with its result
 * recorded; a scheduled one then keeps only the newest `keep` archives of its folder.
 */
export async function runConfiguredBackup(
  home: string,
  db: Db,
  cfg: BackupConfig,
  trigger: BackupResult['trigger'],
): Promise<Created> {
  const started = new Date();
  const dir = backupDir(home, cfg);
  try {
    const seal = sealingOf(cfg);
    const made = await createBackup({
      home,
      to: dir,
      uploads: cfg.uploads,
      ...(seal ? { seal } : {}),
    });
    if (trigger === 'schedule')
      for (const old of listArchives(dir).slice(cfg.keep)) rmSync(join(dir, old), { force: true });
    recordBackup(db, {
      trigger,
      started_at: started.toISOString(),
      ended_at: new Date().toISOString(),
      ok: true,
      file: made.file,
      size: made.size,
      ms: made.ms,
      error: null,
    });
    return made;
  } catch (err) {
    recordBackup(db, {
      trigger,
      started_at: started.toISOString(),
      ended_at: new Date().toISOString(),
      ok: false,
      file: null,
      size: null,
      ms: Date.now() - started.getTime(),
      error: (err as Error).message,
    });
    throw err;
  }
}
