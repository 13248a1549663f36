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

/** Query parameters that carry a credential in a URL (`?token=…`, `&api_key=…`). */
const CREDENTIAL_PARAM = /token|key|secret|passw|auth|sig|credential/i;

/**
 * The credentials a URL carries: the password of its userinfo (or a lone user name, which is
 * how tokens ride in `https://TOKEN@host`) and credential-named query parameters. Any string in
 * config is read so, not only fields marked secret: a `cdp_url`, an MCP server's `url` or a
 * model's `base_url` take them, and a new URL field cannot forget it.
 */
export function urlCredentials(value: string): string[] {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return [];
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return [];
  }
  const found: string[] = [];
  if (u.password) found.push(decodeURIComponent(u.password));
  else if (u.username) found.push(decodeURIComponent(u.username));
  for (const [k, v] of u.searchParams) if (v && CREDENTIAL_PARAM.test(k)) found.push(v);
  return found;
}

/** `value` with each credential of its URL masked; other strings as they are. */
function maskUrl(value: string): string {
  if (urlCredentials(value).length === 0) return value;
  const u = new URL(value);
  if (u.password) u.password = maskSecret(decodeURIComponent(u.password));
  else if (u.username) u.username = maskSecret(decodeURIComponent(u.username));
  for (const [k, v] of [...u.searchParams])
    if (v && CREDENTIAL_PARAM.test(k)) u.searchParams.set(k, maskSecret(v));
  return u.toString();
}

/** Every string in `value` and where it sits. */
function allStrings(value: unknown): Path[] {
  const out: Path[] = [];
  stringLeaves(value, [], out);
  return out;
}

/** A copy of `value` with every secret the schema marks masked (enough to recognise, not to use). */
export function maskSecrets<T>(schema: z.ZodType, value: T): T {
  const copy = structuredClone(value);
  const marked = secretPaths(schema, copy);
  for (const p of marked) setAt(copy, p, maskSecret(getAt(copy, p) as string));
  const done = new Set(marked.map((p) => JSON.stringify(p)));
  for (const p of allStrings(copy))
    if (!done.has(JSON.stringify(p)) && p.length > 0)
      setAt(copy, p, maskUrl(getAt(copy, p) as string));
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
  for (const p of allStrings(copy)) {
    const cur = getAt(current, p);
    if (typeof cur === 'string' && cur !== getAt(copy, p) && getAt(copy, p) === maskUrl(cur))
      setAt(copy, p, cur);
  }
  return copy;
}

/** Every secret value a config holds. */
export function configSecretValues(config: Config): string[] {
  const marked = secretPaths(configSchema, config).map((p) => getAt(config, p));
  const inUrls = allStrings(config).flatMap((p) => urlCredentials(getAt(config, p) as string));
  return [...marked, ...inUrls].filter((v): v is string => typeof v === 'string' && v.length > 0);
}

/** The effective configuration with every secret masked: what any answer carrying config parts starts from. */
export function maskedConfig(config: Config): Config {
  return maskSecrets(configSchema, config);
}

/** Every secret a config holds is scrubbed from this process's log lines from now on. */
export function redactConfigSecrets(config: Config): void {
  for (const value of configSecretValues(config)) redact(value);
}
