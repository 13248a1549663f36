import { z } from 'zod';

/**
 * The one mark of a secret config field. Every answer that carries config is masked by walking
 * the schema for this mark (config/secrets.ts), and a unit test walks the whole config schema so
 * a new field named like a secret cannot go out unmarked. A registry, not `.meta()`, so the mark
 * stays out of the OpenAPI document; zod's registries follow clones (.describe, .trim…) to the parent.
 */
const secretRegistry = z.registry<{ secret: true }>();

/** Marks a field's schema secret: a string is masked, a record (env, headers) has each value masked. */
export function secret<T extends z.ZodType>(schema: T): T {
  secretRegistry.add(schema, { secret: true });
  return schema;
}

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
};

/** Whether a schema, or any wrapper layer of it (optional, default, pipe…), carries the mark. */
export function isSecret(schema: z.ZodType): boolean {
  if (secretRegistry.get(schema)?.secret) return true;
  const def = schema._zod.def as Def;
  if (def.innerType) return isSecret(def.innerType);
  if (def.type === 'pipe') return isSecret(def.in as z.ZodType) || isSecret(def.out as z.ZodType);
  return false;
}

/** A secret as the API shows it: enough to recognise, never enough to use. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '********' : `********${value.slice(-4)}`;
}

/** What maskSecret answers, for the answer schemas: eight stars, then at most the last 4 characters. */
export const maskedSecretSchema = z
  .string()
  .regex(/^\*{8}[\s\S]{0,4}$/)
  .describe('A secret, masked: eight stars and its last 4 characters; send it back to keep it.');
