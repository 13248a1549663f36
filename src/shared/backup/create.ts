import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  unlinkSync,
  createReadStream,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type yazlModule from 'yazl';
import { openDb } from '../store/db.js';
import { version } from '../version.js';
import { writeChunks } from '../write-chunks.js';
import { seal, type Sealing } from './age.js';
import { hashing } from './hashing.js';
import { planContents } from './contents.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  backupName,
  MANIFEST_NAME,
  type Manifest,
  type ManifestFile,
} from './manifest.js';
import { schemaVersionOf } from './schema.js';

const load = createRequire(import.meta.url);

export interface BackupProgress {
  stage: 'database' | 'files' | 'finishing';
  files_done: number;
  files_total: number;
  bytes_done: number;
  bytes_total: number;
}

export interface CreateOptions {
  home: string;
  to: string;
  uploads: boolean;
  seal?: Sealing;
  onProgress?: (p: BackupProgress) => void;
  now?: Date;
}

export interface Created {
  file: string;
  size: number;
  files: number;
  bytes: number;
  ms: number;
  encrypted: boolean;
  manifest: Manifest;
}

/** Deflate buys nothing on these; storing them keeps a large home's backup quick. */
const STORED =
  /\.(jpe?g|png|gif|webp|avif|heic|mp[34]|m4a|mov|webm|ogg|zip|gz|tgz|bz2|xz|zst|7z|rar|pdf|docx|xlsx|pptx|woff2?)$/i;

/** A partial of a backup run that is no longer alive: `.<name>.<pid>.partial`. */
function sweepPartials(dir: string): void {
  for (const name of readdirSync(dir)) {
    const m = /^\.svc-backup-.*\.(\d+)\.partial$|^\.svc-backup-staging-(\d+)-/.exec(name);
    const pid = Number(m?.[1] ?? m?.[2]);
    if (!m || !Number.isInteger(pid)) continue;
    try {
      process.kill(pid, 0);
      continue; // another backup is writing it
    } catch {
      rmSync(join(dir, name), { recursive: true, force: true });
    }
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * One archive of a home, taken while svc runs or not. The database is a snapshot through
 * SQLite's online backup (one step, so one read transaction: the committed state of a moment);
 * the files are read after it, so every upload the snapshot names is there. Written as a hidden
 * `.partial`, synced, then linked to its final name: a killed backup never leaves a file that
 * looks finished.
 */
export async function createBackup(opts: CreateOptions): Promise<Created> {
  const started = Date.now();
  mkdirSync(opts.to, { recursive: true, mode: 0o700 });
  sweepPartials(opts.to);
  const staging = mkdtempSync(join(opts.to, `.svc-backup-staging-${process.pid}-`));
  const encrypted = opts.seal !== undefined;
  let name = backupName(opts.now ?? new Date(), encrypted);
  for (let n = 2; existsSync(join(opts.to, name)); n++)
    name = name.replace(/^(svc-backup-\d{8}-\d{6})(?:-\d+)?/, `$1-${n}`);
  const partial = join(opts.to, `.${name}.${process.pid}.partial`);
  const progress: BackupProgress = {
    stage: 'database',
    files_done: 0,
    files_total: 0,
    bytes_done: 0,
    bytes_total: 0,
  };
  const tell = () => opts.onProgress?.({ ...progress });
  try {
    tell();
    const dbSource = join(opts.home, 'svc.db');
    const snapshot = join(staging, 'svc.db');
    let schema = 0;
    if (existsSync(dbSource)) {
      const db = openDb(dbSource);
      try {
        await db.backup(snapshot, { progress: () => 0x7fffffff });
      } finally {
        db.close();
      }
      schema = schemaVersionOf(snapshot);
    }
    const plan = planContents(opts.home, { uploads: opts.uploads });
    const sources = [
      ...(existsSync(snapshot) ? [{ rel: 'svc.db', abs: snapshot }] : []),
      ...plan.files.map((f) => ({ rel: f.rel, abs: join(opts.home, f.rel) })),
    ];
    progress.stage = 'files';
    progress.files_total = sources.length;
    progress.bytes_total = sources.reduce((n, s) => n + sizeOf(s.abs), 0);
    tell();

    const yazl = load('yazl') as typeof yazlModule;
    const zip = new yazl.ZipFile();
    let out: Readable = zip.outputStream as Readable;
    if (opts.seal) out = await seal(out, opts.seal);
    const written = writeChunks(partial, out, { mode: 0o600 });
    written.catch(() => {}); // awaited below; a failure while entries are added surfaces there
    const files: ManifestFile[] = [];
    const skipped = [...plan.skipped];
    for (const s of sources) {
      let fd: number;
      try {
        fd = openSync(s.abs, 'r');
      } catch (err) {
        skipped.push({
          path: s.rel,
          why: `gone while reading: ${(err as NodeJS.ErrnoException).code ?? err}`,
        });
        continue;
      }
      const pass = hashing((n) => (progress.bytes_done += n));
      const source = createReadStream('', { fd, autoClose: true });
      source.on('error', (err) => pass.destroy(err));
      source.pipe(pass);
      zip.addReadStream(pass, s.rel, { mode: 0o100600, compress: !STORED.test(s.rel) });
      await Promise.race([finished(pass), written]);
      files.push({ path: s.rel, size: pass.size, sha256: pass.digest() });
      progress.files_done++;
      tell();
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      svc_version: version,
      schema_version: schema,
      created_at: new Date().toISOString(),
      uploads: opts.uploads,
      secrets: true,
      files,
      skipped,
    };
    zip.addBuffer(Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`), MANIFEST_NAME, {
      mode: 0o100600,
    });
    zip.end();
    progress.stage = 'finishing';
    tell();
    await written;
    fsyncPath(partial);
    const file = join(opts.to, name);
    linkSync(partial, file); // never over an existing file
    unlinkSync(partial);
    fsyncPath(opts.to);
    return {
      file,
      size: statSync(file).size,
      files: files.length,
      bytes: files.reduce((n, f) => n + f.size, 0),
      ms: Date.now() - started,
      encrypted,
      manifest,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(partial, { force: true });
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
