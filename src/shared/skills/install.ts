import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../errors.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { copySkillFolder, unpackSkillZip, type UnpackedFile } from './archive.js';
import { findSkill, userSkillsDir } from './catalog.js';
import { trashSkill } from './trash.js';

export interface Imported {
  name: string;
  description: string;
  files: UnpackedFile[];
  /** The trash item holding the skill this import replaced (force), or null. */
  replaced: string | null;
}

/**
 * Installs a skill from a zip or a folder on this machine. Everything is checked and unpacked
 * into a hidden staging folder first; only a complete, valid skill is renamed into place, so a
 * failed import leaves nothing behind. An existing skill of that name is a 409 unless `force`,
 * which moves the old one to the trash.
 */
export async function importSkill(
  db: Db,
  paths: Paths,
  source: { zip: string } | { folder: string },
  force: boolean,
): Promise<Imported> {
  const root = userSkillsDir(paths);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const stage = join(root, `.incoming-${randomBytes(8).toString('hex')}`);
  try {
    const got =
      'zip' in source
        ? await unpackSkillZip(source.zip, stage)
        : await copySkillFolder(source.folder, stage);
    const existing = findSkill(db, paths, got.name);
    if (existing && !force) {
      const what = existing.source === 'builtin' ? 'a built-in skill has' : 'a skill already has';
      throw new ApiError(
        'conflict',
        `Not imported: ${what} the name "${got.name}". Send "force": true to replace it${existing.source === 'user' ? ' (the old one goes to the trash)' : ''}.`,
        { reason: 'exists', skill: got.name, source: existing.source },
      );
    }
    const target = join(root, got.name);
    const replaced = existsSync(target) ? trashSkill(db, paths, got.name).id : null;
    renameSync(stage, target);
    return { ...got, replaced };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
