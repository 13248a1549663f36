import { lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { Paths } from '../paths.js';
import type { skillInfoSchema } from '../protocol/events.js';
import type { Db } from '../store/db.js';
import { packageRoot } from '../version.js';
import { parseSkillMd, SKILL_NAME } from './format.js';
import { disabledSkills } from './state.js';

/** A skill as GET /api/skills shows it: its schema is the /ws catalogue's. */
export type SkillInfo = z.infer<typeof skillInfoSchema>;
export type SkillSource = SkillInfo['source'];

export interface Skill extends SkillInfo {
  dir: string;
}

/** SKILL.md bigger than this is refused: it goes whole into a turn when loaded. */
export const SKILL_MD_MAX = 256 * 1024;
/** Walks stop counting here, so a huge folder cannot stall a listing. */
const WALK_MAX = 5000;

export const builtinSkillsDir = join(packageRoot, 'builtin', 'skills');

export function userSkillsDir(paths: Pick<Paths, 'home'>): string {
  return join(paths.home, 'skills');
}

/** Every skill on disk, read fresh (so a change shows at once); a user skill hides a built-in of the same name. */
export function listSkills(db: Db, paths: Pick<Paths, 'home'>): Skill[] {
  const off = disabledSkills(db);
  const byName = new Map<string, Skill>();
  for (const [root, source] of [
    [builtinSkillsDir, 'builtin'],
    [userSkillsDir(paths), 'user'],
  ] as const) {
    for (const folder of folders(root))
      byName.set(folder, readSkill(join(root, folder), folder, source, !off.has(folder)));
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function findSkill(db: Db, paths: Pick<Paths, 'home'>, name: string): Skill | undefined {
  return listSkills(db, paths).find((s) => s.name === name);
}

/** What the model may use: enabled and valid. */
export function usableSkills(db: Db, paths: Pick<Paths, 'home'>): Skill[] {
  return listSkills(db, paths).filter((s) => s.enabled && s.valid);
}

function folders(root: string): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.filter((n) => {
    if (n.startsWith('.')) return false; // staging folders of an import in flight
    try {
      return statSync(join(root, n)).isDirectory();
    } catch {
      return false;
    }
  });
}

export function readSkill(
  dir: string,
  folder: string,
  source: SkillSource,
  enabled: boolean,
): Skill {
  const { files, bytes } = measure(dir);
  const base = {
    name: folder,
    description: '',
    source,
    enabled,
    file_count: files,
    size_bytes: bytes,
    dir,
  };
  if (!SKILL_NAME.test(folder))
    return {
      ...base,
      valid: false,
      why: `the folder name "${folder}" is not a safe skill name (lowercase letters, digits and single hyphens)`,
    };
  let text: string;
  try {
    const st = statSync(join(dir, 'SKILL.md'));
    if (!st.isFile()) return { ...base, valid: false, why: 'SKILL.md is not a regular file' };
    if (st.size > SKILL_MD_MAX)
      return { ...base, valid: false, why: `SKILL.md is larger than ${SKILL_MD_MAX} bytes` };
    text = readFileSync(join(dir, 'SKILL.md'), 'utf8');
  } catch {
    return { ...base, valid: false, why: 'the folder has no SKILL.md' };
  }
  const parsed = parseSkillMd(text);
  if (!parsed.ok)
    return { ...base, description: parsed.description ?? '', valid: false, why: parsed.why };
  if (parsed.name !== folder)
    return {
      ...base,
      description: parsed.description,
      valid: false,
      why: `SKILL.md names the skill "${parsed.name}" but its folder is "${folder}"; they must match`,
    };
  return { ...base, description: parsed.description, valid: true, why: null };
}

/** Files and bytes under a folder; symbolic links count as files and are not followed. */
function measure(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      if (files >= WALK_MAX) return;
      const p = join(d, n);
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else {
        files++;
        bytes += st.size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

/** The body of a usable skill's SKILL.md (frontmatter removed). */
export function skillBody(skill: Skill): string {
  const parsed = parseSkillMd(readFileSync(join(skill.dir, 'SKILL.md'), 'utf8'));
  return parsed.ok ? parsed.body : '';
}

/** Relative paths of a skill's regular files (SKILL.md included), sorted; symlinks are left out. */
export function skillFiles(dir: string, max = WALK_MAX): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      if (out.length >= max) return;
      const st = lstatSync(join(d, n));
      const r = rel ? `${rel}/${n}` : n;
      if (st.isDirectory()) walk(join(d, n), r);
      else if (st.isFile()) out.push(r);
    }
  };
  walk(dir, '');
  return out;
}
