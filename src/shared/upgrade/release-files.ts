import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** What a release carries: one archive per platform, arch and Node major, and checksums.txt. */

export const CHECKSUMS_FILE = 'checksums.txt';
export const SIGNATURE_FILE = 'checksums.txt.sig';
/** The largest archive svc downloads (the peer's bound too). */
export const MAX_ARCHIVE_BYTES = 512 * 1024 * 1024;

export interface Target {
  platform: string;
  arch: string;
  nodeMajor: number;
}

export function thisTarget(): Target {
  return {
    platform: process.platform,
    arch: process.arch,
    nodeMajor: Number(process.versions.node.split('.')[0]),
  };
}

/** `svc-<version>-<platform>-<arch>-node<major>`: the archive's name without `.tar.gz`, and its one top folder. */
export function archiveStem(version: string, t: Target = thisTarget()): string {
  return `svc-${version}-${t.platform}-${t.arch}-node${t.nodeMajor}`;
}

export function archiveName(version: string, t: Target = thisTarget()): string {
  return `${archiveStem(version, t)}.tar.gz`;
}

/** One `<sha256>  <file>` line (sha256sum's format, so `sha256sum -c checksums.txt` checks a release). */
export function checksumLine(sha256: string, file: string): string {
  return `${sha256}  ${file}\n`;
}

/**
 * checksums.txt as file → digest. A line must be exactly a 64-hex digest and a file name (an
 * optional `*` for binary mode); anything else is ignored rather than guessed at.
 */
export function parseChecksums(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length !== 2) continue;
    const [digest, file] = fields as [string, string];
    if (!/^[0-9a-fA-F]{64}$/.test(digest)) continue;
    out.set(file.replace(/^\*/, ''), digest.toLowerCase());
  }
  return out;
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (c) => hash.update(c))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
