import type { z } from 'zod';
import { redact } from '../log.js';
import { isSecret, maskSecret } from './secret-marker.js';
import { configSchema, type Config } from './schema.js';

type Path = (string | number)[];
type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  items?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where every string under a secret sits (a secret record: each of its values). */
function stringLeaves(value: unknown, path: Path, out: Path[]): void {
  if (typeof value === 'string') out.push(path);
  else if (Array.isArray(value))
    for (const [i, v] of value.entries()) stringLeaves(v, [...path, i], out);
  else if (isRecord(value))
    for (const [k, v] of Object.entries(value)) stringLeaves(v, [...path, k], out);
}

/** The paths in `value` that hold a secret string, found by walking `schema` beside it. */
export function secretPaths(schema: z.ZodType, value: unknown, path: Path = []): Path[] {
  const out: Path[] = [];
  walk(schema, value, path, out);
  const seen = new Set<string>();
  return out.filter((p) => {
    const k = JSON.stringify(p);
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

function walk(schema: z.ZodType, value: unknown, path: Path, out: Path[]): void {
  if (value === undefined || value === null) return;
  if (isSecret(schema)) return stringLeaves(value, path, out);
  const def = schema._zod.def as Def;
  if (def.innerType) return walk(def.innerType, value, path, out);
  switch (def.type) {
    case 'pipe':
      walk(def.in!, value, path, out);
      walk(def.out!, value, path, out);
      return;
    case 'object':
      if (isRecord(value))
        for (const [k, v] of Object.entries(value))
          if (def.shape && Object.hasOwn(def.shape, k)) walk(def.shape[k]!, v, [...path, k], out);
      return;
    case 'record':
      if (isRecord(value))
        for (const [k, v] of Object.entries(value)) walk(def.valueType!, v, [...path, k], out);
      return;
    case 'array':
      if (Array.isArray(value))
        for (const [i, v] of value.entries()) walk(def.element!, v, [...path, i], out);
      return;
    case 'tuple':
      if (Array.isArray(value))
        for (const [i, s] of (def.items ?? []).entries()) walk(s, value[i], [...path, i], out);
      return;
    case 'union':
      for (const o of def.options ?? []) walk(o, value, path, out);
      return;
    case 'intersection':
      walk(def.left!, value, path, out);
      walk(def.right!, value, path, out);
      return;
    case 'lazy':
      return walk(def.getter!(), value, path, out);
  }
}

function getAt(value: unknown, path: Path): unknown {
  let v = value;
  for (const k of path) v = isRecord(v) || Array.isArray(v) ? (v as never)[k] : undefined;
  return v;
}

function setAt(value: unknown, path: Path, next: unknown): void {
  const parent = getAt(value, path.slice(0, -1));
  (parent as Record<string | number, unknown>)[path[path.length - 1]!] = next;
}

/** A copy of `value` with every secret the schema marks masked (enough to recognise, not to use). */
export function maskSecrets<T>(schema: z.ZodType, value: T): T {
  const copy = structuredClone(value);
  for (const p of secretPaths(schema, copy)) setAt(copy, p, maskSecret(getAt(copy, p) as string));
  return copy;
}

/**
 * `incoming` with every secret that was sent back as the API showed it (masked) replaced by the
 * value it stands for in `current`, so saving a form or a GET's answer never stores the mask.
 */
export function unmaskSecrets<T>(schema: z.ZodType, current: unknown, incoming: T): T {
  const copy = structuredClone(incoming);
  for (const p of secretPaths(schema, copy)) {
    const cur = getAt(current, p);
    if (typeof cur === 'string' && getAt(copy, p) === maskSecret(cur)) setAt(copy, p, cur);
  }
  return copy;
}

/** Every secret value a config holds. */
export function configSecretValues(config: Config): string[] {
  return secretPaths(configSchema, config)
    .map((p) => getAt(config, p))
    .filter((v): v is string => typeof v === 'string' && v.length > 0);
}

/** The effective configuration with every secret masked: what any answer carrying config parts starts from. */
export function maskedConfig(config: Config): Config {
  return maskSecrets(configSchema, config);
}

/** Every secret a config holds is scrubbed from this process's log lines from now on. */
export function redactConfigSecrets(config: Config): void {
  for (const value of configSecretValues(config)) redact(value);
}
