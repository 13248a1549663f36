import { firstIssue } from '../errors.js';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * A skill is a folder holding SKILL.md: YAML frontmatter with `name` and `description`, then a
 * markdown body (the open Agent Skills layout, so skills move between agent tools).
 */

/** A safe folder name, as the Agent Skills layout asks: lowercase letters, digits and single hyphens. */
export const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}$/;
export const skillNameSchema = z
  .string()
  .regex(
    SKILL_NAME,
    'a skill name is 1-64 lowercase letters, digits and single hyphens, starting with a letter or digit',
  );

const frontmatterSchema = z.looseObject({
  name: skillNameSchema,
  description: z
    .string()
    .trim()
    .min(1, 'description must not be empty')
    .max(1024, 'description is at most 1024 characters'),
});

export type ParsedSkill =
  | { ok: true; name: string; description: string; body: string }
  | { ok: false; why: string; name?: string; description?: string };

const FRONTMATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Reads SKILL.md text; an invalid one says why in a sentence a person can act on. */
export function parseSkillMd(text: string): ParsedSkill {
  const m = FRONTMATTER.exec(text);
  if (!m)
    return {
      ok: false,
      why: 'SKILL.md does not start with YAML frontmatter between two "---" lines',
    };
  let data: unknown;
  try {
    data = parseYaml(m[1] ?? '');
  } catch (err) {
    return {
      ok: false,
      why: `the frontmatter of SKILL.md is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  const parsed = frontmatterSchema.safeParse(data);
  if (!parsed.success) {
    const loose = z
      .looseObject({ name: z.string().optional(), description: z.string().optional() })
      .safeParse(data);
    return {
      ok: false,
      why: `SKILL.md frontmatter: ${firstIssue(parsed.error, '(frontmatter)')}`,
      ...(loose.success && loose.data.name ? { name: loose.data.name } : {}),
      ...(loose.success && loose.data.description ? { description: loose.data.description } : {}),
    };
  }
  return {
    ok: true,
    name: parsed.data.name,
    description: parsed.data.description,
    body: text.slice(m[0].length),
  };
}
