import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { z } from 'zod';
import { skillBody, skillFiles, usableSkills } from '../../../../shared/skills/catalog.js';
import { skillMountPath } from '../../sandbox/skills-mount.js';
import { defineTool } from '../registry.js';

/** A file of a skill read through this tool is cut here. */
const FILE_CAP = 256 * 1024;

/**
 * Loads a skill on demand: its SKILL.md instructions and the list of its files, or one of those
 * files. Only enabled, valid skills answer, read fresh from disk on every call.
 */
export const skillTool = defineTool({
  name: 'skill',
  purpose: 'Loads one of your enabled skills (its instructions and files).',
  description:
    'Loads one of the skills listed in the system prompt: without `file`, answers its SKILL.md instructions and the files it holds; with `file` (a path relative to the skill folder), answers that file. Load a skill before doing the task it describes.',
  args: z
    .object({
      name: z.string().min(1).max(64).describe('The skill name, as listed under "Skills".'),
      file: z
        .string()
        .min(1)
        .max(1024)
        .optional()
        .describe('A file of the skill, relative to its folder (e.g. "scripts/check.sh").'),
    })
    .strict(),
  run: ({ name, file }, ctx) => {
    const usable = usableSkills(ctx.db, ctx.paths);
    const skill = usable.find((s) => s.name === name);
    if (!skill) {
      return {
        output: `There is no enabled skill named "${name}". Available: ${usable.map((s) => s.name).join(', ') || 'none'}.`,
        isError: true,
      };
    }
    if (file === undefined) {
      const others = skillFiles(skill.dir).filter((f) => f !== 'SKILL.md');
      const list = others.length
        ? `\n\n## Files of this skill (read one with the skill tool and \`file\`)\n${others.map((f) => `- ${f}`).join('\n')}`
        : '';
      const where = `\n\n## Its folder\nIn terminal commands this skill's folder is ${skillMountPath(skill.name)} (read-only): run its scripts from there, e.g. \`${skillMountPath(skill.name)}/scripts/…\`. Paths in the instructions above are relative to it.`;
      return {
        output: `# Skill: ${skill.name}\n${skill.description}\n\n${skillBody(skill).trim()}${list}${where}`,
      };
    }
    let real: string;
    try {
      const root = realpathSync(skill.dir);
      real = realpathSync(join(skill.dir, file));
      if (!real.startsWith(root + sep) || !statSync(real).isFile()) throw new Error('outside');
    } catch {
      return {
        output: `The skill "${name}" has no file "${file}". Call skill with only the name to list its files.`,
        isError: true,
      };
    }
    const bytes = readFileSync(real);
    if (bytes.subarray(0, 8000).includes(0))
      return {
        output: `"${file}" is a binary file (${bytes.length} bytes); it cannot be shown as text.`,
        isError: true,
      };
    const text = bytes.subarray(0, FILE_CAP).toString('utf8');
    return {
      output:
        bytes.length > FILE_CAP ? `${text}\n[… cut at ${FILE_CAP} bytes of ${bytes.length}]` : text,
    };
  },
});
