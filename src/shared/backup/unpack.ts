import { createReadStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import type yauzlModule from 'yauzl';
import { writeChunks } from '../write-chunks.js';
import { isAgeFile, open, openingError, type Opening } from './age.js';
import { hashing } from './hashing.js';
import { MANIFEST_NAME, Manifest } from './manifest.js';

const load = createRequire(import.meta.url);
const yauzl = () => load('yauzl') as typeof yauzlModule;

export interface Problem {
  path: string;
  problem: string;
}

export interface Unpacked {
  manifest?: Manifest;
  encrypted: boolean;
  problems: Problem[];
  files: number;
  bytes: number;
}

/** A path from an archive that stays inside the folder it is unpacked into. */
const SAFE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))(?!.*\\)[^\0]+$/;

function openZip(file: string): Promise<yauzlModule.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl().open(file, { lazyEntries: true, autoClose: false }, (err, zip) =>
      err || !zip ? reject(err ?? new Error('not a zip')) : resolve(zip),
    ),
  );
}

function entries(zip: yauzlModule.ZipFile): Promise<yauzlModule.Entry[]> {
  return new Promise((resolve, reject) => {
    const all: yauzlModule.Entry[] = [];
    zip.on('entry', (e: yauzlModule.Entry) => {
      all.push(e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(all));
    zip.on('error', reject);
    zip.readEntry();
  });
}

function entryStream(zip: yauzlModule.ZipFile, e: yauzlModule.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(e, (err, s) =>
      err || !s ? reject(err ?? new Error('no stream')) : resolve(s),
    ),
  );
}

async function readAll(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/**
 * Reads a backup whole and checks it against its manifest: every file there, of its size and
 * SHA-256, nothing more. Files `keep` accepts are written under `into` as they are read; the
 * others are only checked. An age-encrypted backup is first decrypted into a private temp
 * file (a zip is read from its end), which is removed afterwards.
 */
export async function unpackChecked(
  file: string,
  opts: { opening?: Opening; into?: string; keep?: (path: string) => boolean },
): Promise<Unpacked> {
  const out: Unpacked = { encrypted: false, problems: [], files: 0, bytes: 0 };
  let scratch: string | undefined;
  let zipFile = file;
  try {
    if (isAgeFile(file)) {
      out.encrypted = true;
      if (!opts.opening?.passphrase && !opts.opening?.identities?.length)
        throw new Error('this backup is encrypted: give its passphrase or an identity file');
      scratch = mkdtempSync(join(tmpdir(), 'svc-backup-open-'));
      zipFile = join(scratch, 'backup.zip');
      let plain: Readable;
      try {
        plain = await open(createReadStream(file), opts.opening);
        await writeChunks(zipFile, plain, { mode: 0o600 });
      } catch (err) {
        throw openingError(err, opts.opening);
      }
    }
    let zip: yauzlModule.ZipFile;
    try {
      zip = await openZip(zipFile);
    } catch (err) {
      throw new Error(`not an svc backup (not a readable zip: ${(err as Error).message})`);
    }
    try {
      const all = await entries(zip);
      const m = all.find((e) => e.fileName === MANIFEST_NAME);
      if (!m) throw new Error(`not an svc backup (no ${MANIFEST_NAME})`);
      let json: unknown;
      try {
        json = JSON.parse((await readAll(await entryStream(zip, m))).toString('utf8'));
      } catch (err) {
        throw new Error(`the manifest is damaged: ${(err as Error).message}`);
      }
      const parsed = Manifest.safeParse(json);
      if (!parsed.success)
        throw new Error(
          `the manifest is not one svc reads: ${parsed.error.issues[0]?.message ?? ''}`,
        );
      const manifest = parsed.data;
      out.manifest = manifest;
      const wanted = new Map(manifest.files.map((f) => [f.path, f]));
      const seen = new Set<string>();
      for (const e of all) {
        if (e.fileName === MANIFEST_NAME || e.fileName.endsWith('/')) continue;
        const f = wanted.get(e.fileName);
        if (!f || !SAFE_PATH.test(e.fileName)) {
          out.problems.push({
            path: e.fileName,
            problem: 'in the archive but not in its manifest',
          });
          continue;
        }
        seen.add(e.fileName);
        const pass = hashing();
        try {
          const s = await entryStream(zip, e);
          s.on('error', (err) => pass.destroy(err));
          s.pipe(pass);
          if (opts.into && (opts.keep?.(f.path) ?? true)) {
            const dest = join(opts.into, f.path);
            mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
            await writeChunks(dest, pass, { mode: 0o600 });
          } else for await (const _ of pass);
        } catch (err) {
          out.problems.push({ path: f.path, problem: `unreadable: ${(err as Error).message}` });
          continue;
        }
        const sum = pass.digest();
        const size = pass.size;
        if (size !== f.size)
          out.problems.push({ path: f.path, problem: `size ${size}, the manifest says ${f.size}` });
        else if (sum !== f.sha256)
          out.problems.push({
            path: f.path,
            problem: `SHA-256 ${sum}, the manifest says ${f.sha256}`,
          });
        out.files++;
        out.bytes += size;
      }
      for (const f of manifest.files)
        if (!seen.has(f.path))
          out.problems.push({ path: f.path, problem: 'missing from the archive' });
    } finally {
      zip.close();
    }
    return out;
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
