import { readFileSync } from 'node:fs';
import { parseDocument, type Document } from 'yaml';
import { writeFileAtomic } from '../shared/atomic-write.js';
import { ConfigError, parseConfig } from '../shared/config/load.js';
import type { Config } from '../shared/config/schema.js';

/**
 * The only writer of config.yml. An edit is applied to the parsed YAML document, so the user's
 * comments and layout stay; the whole result is validated before anything touches the disk; the
 * write is a temp file (0600) renamed over the old one, so a crash leaves one or the other.
 */
export function editConfig(file: string, edit: (doc: Document) => void): Config {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigError(`${file}: cannot read: ${(err as Error).message}`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0)
    throw new ConfigError(
      `${file} is not valid YAML; fix it by hand before changing settings through the API`,
    );
  if (doc.contents === null) doc.contents = doc.createNode({}) as unknown as typeof doc.contents;
  edit(doc);
  const next = doc.toString();
  const config = parseConfig(next, file);
  writeFileAtomic(file, next);
  return config;
}
