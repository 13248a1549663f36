import { issueLine } from '../errors.js';
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { configSchema, type Config } from './schema.js';

/** A config file that cannot be used; the message names the file, the key and what is wrong. */
export class ConfigError extends Error {}

function describeIssue(file: string, issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length > 0 ? ` under ${issue.path.join('.')}` : '';
    return `${file}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}${where}`;
  }
  return `${file}: ${issueLine(issue)}`;
}

/** Parses config text; throws ConfigError with every problem, one a line. */
export function parseConfig(text: string, file: string): Config {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const pos = first?.linePos?.[0];
    throw new ConfigError(
      `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: not valid YAML: ${(first?.message.split('\n')[0] ?? 'parse error').replace(/\s*at line \d+, column \d+:?\s*$/, '')}`,
    );
  }
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError(`${file}: the top level must be a mapping of keys`);
  const result = configSchema.safeParse(raw);
  if (!result.success)
    throw new ConfigError(result.error.issues.map((i) => describeIssue(file, i)).join('\n'));
  return result.data;
}

/** Reads config.yml; a missing file is an empty config. */
export function loadConfig(file: string): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return configSchema.parse({});
    throw new ConfigError(`${file}: cannot read: ${(err as Error).message}`);
  }
  return parseConfig(text, file);
}
