import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { log } from '../shared/log.js';

export type KeySource = 'flag' | 'env' | 'config' | 'file' | 'generated';

/** A key the user gave must be usable as a secret: long enough and without spaces. */
export function checkKeyShape(key: string, where: string): string {
  if (key.length < 16) throw new Error(`${where}: the access key must be at least 16 characters`);
  if (/\s/.test(key)) throw new Error(`${where}: the access key must not contain spaces`);
  return key;
}

/**
 * Resolves the access key, first found wins: `--access-key` → `SVC_ACCESS_KEY` → `access_key`
 * in config.yml → `$SVC_HOME/access_key`, generated (256 bits, 64 hex) and written 0600 on first start.
 */
export function resolveAccessKey(opts: {
  flag?: string;
  env?: string;
  config?: string;
  file: string;
}): { key: string; source: KeySource } {
  if (opts.flag !== undefined)
    return { key: checkKeyShape(opts.flag, '--access-key'), source: 'flag' };
  if (opts.env !== undefined && opts.env !== '')
    return { key: checkKeyShape(opts.env, 'SVC_ACCESS_KEY'), source: 'env' };
  if (opts.config !== undefined) return { key: opts.config, source: 'config' };
  try {
    const mode = statSync(opts.file).mode & 0o777;
    if (mode !== 0o600) {
      chmodSync(opts.file, 0o600);
      log.warn('the access key file was readable by others; its mode is now 0600', {
        file: opts.file,
        was: mode.toString(8),
      });
    }
    const key = readFileSync(opts.file, 'utf8').trim();
    return { key: checkKeyShape(key, opts.file), source: 'file' };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32).toString('hex');
  // 'wx': never clobber a key file another start created a moment ago
  writeFileSync(opts.file, key + '\n', { mode: 0o600, flag: 'wx' });
  return { key, source: 'generated' };
}
