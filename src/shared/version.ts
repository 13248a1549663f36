import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The package root: dist/src/shared/version.js sits three folders below it. */
export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function readVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
    if (pkg && typeof pkg === 'object' && 'version' in pkg && typeof pkg.version === 'string')
      return pkg.version;
  } catch {
    // fall through: a broken install still reports something rather than crashing
  }
  return '0.0.0-unknown';
}

export const version = readVersion();
