import { BackupResult } from '../protocol/backup.js';
import type { Db } from './db.js';
import { MetaStore } from './meta.js';

export { BackupResult };

const KEY = 'backup.last';

export function lastBackup(db: Db): BackupResult | undefined {
  const raw = new MetaStore(db).get(KEY);
  if (raw === undefined) return undefined;
  try {
    const parsed = BackupResult.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function recordBackup(db: Db, r: BackupResult): void {
  new MetaStore(db).set(KEY, JSON.stringify(r));
}
