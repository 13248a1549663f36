import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * The package root: the nearest folder above this module whose package.json names a package.
 * Found, not counted, because this module runs from dist/src/shared/ or, bundled, from a file
 * under dist/bundle/ (whose own nameless package.json only says its files are CommonJS).
 */
export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (namesPackage(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return join(from, '..', '..', '..'); // no package.json: the layout's guess
  }
}

function namesPackage(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const pkg: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof pkg === 'object' && pkg !== null && 'name' in pkg;
  } catch {
    return false;
  }
}

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
