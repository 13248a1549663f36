import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ApiError } from '../errors.js';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { moveBlob, putInTrash, type TrashItem, type TrashKind } from '../store/trash.js';
import { userSkillsDir } from './catalog.js';
import { skillNameSchema } from './format.js';

const payloadSchema = z.object({ name: skillNameSchema });

/** Moves a user skill's folder into the trash (blob under its own name). */
export function trashSkill(db: Db, paths: Paths, name: string): TrashItem {
  const dir = join(userSkillsDir(paths), name);
  return db
    .transaction(() =>
      putInTrash(db, paths, {
        kind: 'skill',
        name,
        original: name,
        payload: { name },
        blobFrom: dir,
      }),
    )
    .immediate();
}

/** Restore for kind `skill`: the folder goes back under its name, which must be free again. */
export const skillTrashKind: TrashKind = {
  restore({ paths, payload, blobDir, options }) {
    const { name } = payloadSchema.parse(payload);
    if (options.as_new || options.new_name !== undefined) {
      throw new ApiError(
        'invalid_request',
        'A skill is restored under its own name only (its SKILL.md names it); send no body.',
      );
    }
    if (!blobDir)
      throw new ApiError(
        'conflict',
        'This skill trash item has no files on disk; it cannot be restored.',
        { reason: 'no_blob' },
      );
    const target = join(userSkillsDir(paths), name);
    if (existsSync(target)) {
      throw new ApiError(
        'conflict',
        `A skill named "${name}" exists again; delete it (it goes to the trash too), then restore this one.`,
        { reason: 'original_taken', skill: name },
      );
    }
    mkdirSync(userSkillsDir(paths), { recursive: true, mode: 0o700 });
    moveBlob(join(blobDir, name), target);
    return { restored_to: name, skill: name };
  },
};
