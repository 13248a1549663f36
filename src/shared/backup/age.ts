import { openSync, readSync, closeSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadable } from 'node:stream/web';
import { importPackage } from '../import-package.js';

/**
 * Backups encrypted in the `age` format (age-encryption.org/v1), through the format's own
 * TypeScript implementation, so the standard `age` tool decrypts them without svc.
 */
export type Sealing = { passphrase: string } | { recipients: string[] };
export type Opening = { passphrase?: string; identities?: string[] };

const MAGIC = 'age-encryption.org/v1\n';

/** Whether a file is an age file, by its first line (not by its name). */
export function isAgeFile(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(MAGIC.length);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('latin1') === MAGIC;
  } finally {
    closeSync(fd);
  }
}

const toWeb = (r: Readable) => Readable.toWeb(r) as unknown as ReadableStream<Uint8Array>;
const fromWeb = (r: ReadableStream<Uint8Array>) => Readable.fromWeb(r as unknown as WebReadable);

export async function seal(plain: Readable, how: Sealing): Promise<Readable> {
  const age = await importPackage<typeof import('age-encryption')>('age-encryption');
  const e = new age.Encrypter();
  if ('passphrase' in how) e.setPassphrase(how.passphrase);
  else for (const r of how.recipients) e.addRecipient(r);
  return fromWeb(await e.encrypt(toWeb(plain)));
}

export async function open(sealed: Readable, how: Opening): Promise<Readable> {
  const age = await importPackage<typeof import('age-encryption')>('age-encryption');
  const d = new age.Decrypter();
  if (how.passphrase !== undefined) d.addPassphrase(how.passphrase);
  for (const id of how.identities ?? []) d.addIdentity(id);
  return fromWeb(await d.decrypt(toWeb(sealed)));
}

/** age's own words for a wrong passphrase or key, turned into one a person can act on. */
export function openingError(err: unknown, how: Opening): Error {
  const msg = err instanceof Error ? err.message : String(err);
  if (/no identity matched|incorrect passphrase|failed to decrypt|invalid/i.test(msg))
    return new Error(
      how.passphrase !== undefined
        ? 'the passphrase does not open this backup'
        : 'none of the given identities opens this backup',
    );
  return new Error(`the backup could not be decrypted: ${msg}`);
}
