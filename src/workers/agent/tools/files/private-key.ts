import { closeSync, openSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Private keys recognised by what they hold, not their names: a PEM or OpenSSH private key
 * header, a PuTTY key, or an armoured PGP private key block near the start of the file.
 */
const HEADER = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|^PuTTY-User-Key-File-\d+:/m;

export function looksLikePrivateKey(text: string): boolean {
  return HEADER.test(text.slice(0, 8192));
}

/** Whether the file at `path` starts like a private key; false when it cannot be read. */
export function fileIsPrivateKey(path: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(8192);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return looksLikePrivateKey(buf.subarray(0, n).toString('latin1'));
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/** Folders that hold keys whatever their file names. */
export function keyFolders(): string[] {
  return [join(homedir(), '.ssh'), join(homedir(), '.gnupg')];
}
