import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { copyFile, chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type yauzlModule from 'yauzl';
import type yazlModule from 'yazl';
import { ApiError } from '../errors.js';
import { writeChunks } from '../write-chunks.js';
import { skillFiles, SKILL_MD_MAX } from './catalog.js';
import { parseSkillMd, SKILL_NAME } from './format.js';

// The zip libraries load with the first import or export, not with the gateway.
const load = createRequire(import.meta.url);
let zips: { yauzl: typeof yauzlModule; yazl: typeof yazlModule } | undefined;
const zipLibs = () =>
  (zips ??= {
    yauzl: load('yauzl') as typeof yauzlModule,
    yazl: load('yazl') as typeof yazlModule,
  });

/** Limits of an imported skill; each refusal names its rule so a person knows what to fix. */
export const ARCHIVE_LIMITS = {
  entries: 1000,
  unpackedBytes: 64 * 1024 * 1024,
  ratio: 100,
} as const;

export type ArchiveRule =
  | 'not_a_zip'
  | 'path_escape'
  | 'absolute_path'
  | 'drive_letter'
  | 'symlink'
  | 'device_file'
  | 'encrypted'
  | 'too_many_entries'
  | 'too_large'
  | 'compression_ratio'
  | 'skill_md_missing'
  | 'invalid_skill_md'
  | 'unsafe_name';

export function refused(
  rule: ArchiveRule,
  message: string,
  extra: Record<string, unknown> = {},
): ApiError {
  return new ApiError('invalid_request', `The skill was refused (${rule}): ${message}`, {
    rule,
    ...extra,
  });
}

export interface UnpackedFile {
  path: string;
  size: number;
  sha256: string;
}

export interface Unpacked {
  name: string;
  description: string;
  files: UnpackedFile[];
}

interface Planned {
  entry: yauzlModule.Entry;
  /** Path inside the skill folder (the top-level folder, if any, removed). */
  rel: string;
  dir: boolean;
  executable: boolean;
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** Checks one entry name; a name that could land outside the skill folder is refused. */
function checkName(name: string): string[] {
  if (name.includes('\0'))
    throw refused('path_escape', `the entry name ${JSON.stringify(name)} holds a NUL byte`);
  if (/^[A-Za-z]:/.test(name))
    throw refused('drive_letter', `the entry "${name}" starts with a drive letter`, {
      entry: name,
    });
  if (name.startsWith('/') || name.startsWith('\\'))
    throw refused('absolute_path', `the entry "${name}" is an absolute path`, { entry: name });
  const parts = name.split(/[/\\]/);
  if (parts.includes('..'))
    throw refused('path_escape', `the entry "${name}" climbs out of the folder with ".."`, {
      entry: name,
    });
  if (name.includes('\\'))
    throw refused(
      'path_escape',
      `the entry "${name}" uses a backslash, which some systems read as a folder separator`,
      { entry: name },
    );
  return parts.filter((p) => p !== '' && p !== '.');
}

function entryMode(e: yauzlModule.Entry): number {
  return (e.externalFileAttributes >>> 16) & 0xffff;
}

/**
 * Reads a zip's central directory and checks every rule before anything is written: names,
 * types, count, declared sizes and ratios, and where SKILL.md is. Then SKILL.md itself is read
 * (into memory) and its frontmatter checked; only then are files extracted, into `stage`.
 * Sizes are enforced again while inflating, since a header can lie.
 */
export async function unpackSkillZip(zipPath: string, stage: string): Promise<Unpacked> {
  let zip: yauzlModule.ZipFile;
  try {
    zip = await zipLibs().yauzl.openPromise(zipPath, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (err) {
    throw refused(
      'not_a_zip',
      `the file is not a readable zip archive (${(err as Error).message})`,
    );
  }
  try {
    if (zip.entryCount > ARCHIVE_LIMITS.entries)
      throw refused(
        'too_many_entries',
        `it has ${zip.entryCount} entries; at most ${ARCHIVE_LIMITS.entries} are allowed`,
      );
    const entries: Array<{ entry: yauzlModule.Entry; parts: string[]; dir: boolean }> = [];
    let total = 0;
    try {
      for await (const entry of zip.eachEntry()) {
        const name = zipLibs().yauzl.getFileNameLowLevel(
          entry.generalPurposeBitFlag,
          entry.fileNameRaw,
          entry.extraFields,
          false,
        );
        const parts = checkName(name);
        if (parts[0] === '__MACOSX') continue; // resource forks macOS adds to every zip it makes
        const mode = entryMode(entry);
        const type = mode & S_IFMT;
        const dir = name.endsWith('/') || type === S_IFDIR;
        if (type === S_IFLNK)
          throw refused(
            'symlink',
            `the entry "${name}" is a symbolic link; a skill holds regular files only`,
            { entry: name },
          );
        if (type !== 0 && type !== S_IFREG && type !== S_IFDIR)
          throw refused(
            'device_file',
            `the entry "${name}" is a device, pipe or socket; a skill holds regular files only`,
            { entry: name },
          );
        if (entry.isEncrypted())
          throw refused('encrypted', `the entry "${name}" is encrypted`, { entry: name });
        total += entry.uncompressedSize;
        if (total > ARCHIVE_LIMITS.unpackedBytes)
          throw refused(
            'too_large',
            `it unpacks to more than ${ARCHIVE_LIMITS.unpackedBytes} bytes`,
          );
        if (
          !dir &&
          entry.uncompressedSize > 0 &&
          (entry.compressedSize === 0 ||
            entry.uncompressedSize / entry.compressedSize > ARCHIVE_LIMITS.ratio)
        ) {
          throw refused(
            'compression_ratio',
            `the entry "${name}" expands more than ${ARCHIVE_LIMITS.ratio}:1 (${entry.compressedSize} → ${entry.uncompressedSize} bytes)`,
            { entry: name },
          );
        }
        if (parts.length > 0) entries.push({ entry, parts, dir });
      }
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw refused('not_a_zip', `the archive is damaged (${(err as Error).message})`);
    }

    // SKILL.md at the root, or at the root of the one top-level folder that holds everything.
    const tops = new Set(entries.map((e) => (e.parts.length === 1 && !e.dir ? '' : e.parts[0])));
    const atRoot = entries.find((e) => !e.dir && e.parts.length === 1 && e.parts[0] === 'SKILL.md');
    const single = tops.size === 1 && !tops.has('') ? [...tops][0] : undefined;
    const inFolder =
      single === undefined
        ? undefined
        : entries.find((e) => !e.dir && e.parts.length === 2 && e.parts[1] === 'SKILL.md');
    const skillMd = atRoot ?? inFolder;
    if (!skillMd)
      throw refused(
        'skill_md_missing',
        'SKILL.md must be at the root of the archive or of its one top-level folder',
      );
    const strip = atRoot ? 0 : 1;

    const mdText = await readEntry(zip, skillMd.entry, SKILL_MD_MAX);
    const parsed = parseSkillMd(mdText);
    if (!parsed.ok) {
      if (parsed.name !== undefined && !SKILL_NAME.test(parsed.name))
        throw refused(
          'unsafe_name',
          `the name "${parsed.name}" in SKILL.md is not a safe folder name (lowercase letters, digits and single hyphens)`,
        );
      throw refused('invalid_skill_md', parsed.why);
    }

    const plan: Planned[] = entries
      .map((e) => ({
        entry: e.entry,
        rel: e.parts.slice(strip).join('/'),
        dir: e.dir,
        executable: (entryMode(e.entry) & 0o111) !== 0,
      }))
      .filter((p) => p.rel !== '');
    mkdirSync(stage, { recursive: true, mode: 0o700 });
    const files: UnpackedFile[] = [];
    let written = 0;
    for (const p of plan) {
      const target = join(stage, p.rel);
      if (p.dir) {
        mkdirSync(target, { recursive: true, mode: 0o755 });
        continue;
      }
      mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
      const hash = createHash('sha256');
      let size = 0;
      // The entry is opened once its file is: its stream can fail (a size that lies) as soon as
      // it exists, and must have a reader by then.
      const counted = async function* () {
        const src = await zip.openReadStreamPromise(p.entry);
        for await (const chunk of src as AsyncIterable<Buffer>) {
          size += chunk.length;
          written += chunk.length;
          if (written > ARCHIVE_LIMITS.unpackedBytes)
            throw refused(
              'too_large',
              `it unpacks to more than ${ARCHIVE_LIMITS.unpackedBytes} bytes`,
            );
          hash.update(chunk);
          yield chunk;
        }
      };
      await writeChunks(target, counted(), { mode: p.executable ? 0o755 : 0o644 }).catch(
        (err: unknown) => {
          if (err instanceof ApiError) throw err;
          throw refused(
            'not_a_zip',
            `the entry "${p.rel}" could not be unpacked (${(err as Error).message})`,
          );
        },
      );
      files.push({ path: p.rel, size, sha256: hash.digest('hex') });
    }
    return {
      name: parsed.name,
      description: parsed.description,
      files: files.sort((a, b) => a.path.localeCompare(b.path)),
    };
  } finally {
    zip.close();
  }
}

async function readEntry(
  zip: yauzlModule.ZipFile,
  entry: yauzlModule.Entry,
  cap: number,
): Promise<string> {
  if (entry.uncompressedSize > cap)
    throw refused('invalid_skill_md', `SKILL.md is larger than ${cap} bytes`);
  const chunks: Buffer[] = [];
  let n = 0;
  const stream: Readable = await zip.openReadStreamPromise(entry);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    n += chunk.length;
    if (n > cap) {
      stream.destroy();
      throw refused('invalid_skill_md', `SKILL.md is larger than ${cap} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Copies a skill folder on this machine into `stage` under the same rules as an archive:
 * regular files only (a symlink or device is refused, not followed), the same count and size
 * limits, SKILL.md at its root with valid frontmatter, all checked before the first copy.
 */
export async function copySkillFolder(src: string, stage: string): Promise<Unpacked> {
  const found: Array<{ rel: string; size: number; mode: number }> = [];
  let total = 0;
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const r = rel ? `${rel}/${n}` : n;
      const st = lstatSync(p);
      if (st.isSymbolicLink())
        throw refused('symlink', `"${r}" is a symbolic link; a skill holds regular files only`, {
          entry: r,
        });
      if (st.isDirectory()) walk(p, r);
      else if (!st.isFile())
        throw refused(
          'device_file',
          `"${r}" is a device, pipe or socket; a skill holds regular files only`,
          { entry: r },
        );
      else {
        found.push({ rel: r, size: st.size, mode: st.mode });
        total += st.size;
        if (found.length > ARCHIVE_LIMITS.entries)
          throw refused('too_many_entries', `it has more than ${ARCHIVE_LIMITS.entries} files`);
        if (total > ARCHIVE_LIMITS.unpackedBytes)
          throw refused('too_large', `it holds more than ${ARCHIVE_LIMITS.unpackedBytes} bytes`);
      }
    }
  };
  walk(src, '');
  const md = found.find((f) => f.rel === 'SKILL.md');
  if (!md) throw refused('skill_md_missing', 'the folder has no SKILL.md at its root');
  if (md.size > SKILL_MD_MAX)
    throw refused('invalid_skill_md', `SKILL.md is larger than ${SKILL_MD_MAX} bytes`);
  const parsed = parseSkillMd(readFileSync(join(src, 'SKILL.md'), 'utf8'));
  if (!parsed.ok) {
    if (parsed.name !== undefined && !SKILL_NAME.test(parsed.name))
      throw refused(
        'unsafe_name',
        `the name "${parsed.name}" in SKILL.md is not a safe folder name (lowercase letters, digits and single hyphens)`,
      );
    throw refused('invalid_skill_md', parsed.why);
  }
  mkdirSync(stage, { recursive: true, mode: 0o700 });
  const files: UnpackedFile[] = [];
  for (const f of found) {
    const target = join(stage, f.rel);
    mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
    await copyFile(join(src, f.rel), target);
    await chmod(target, f.mode & 0o111 ? 0o755 : 0o644);
    files.push({
      path: f.rel,
      size: f.size,
      sha256: createHash('sha256').update(readFileSync(target)).digest('hex'),
    });
  }
  return {
    name: parsed.name,
    description: parsed.description,
    files: files.sort((a, b) => a.path.localeCompare(b.path)),
  };
}

/** A zip of a skill folder with entries under `<name>/`, regular files only; resolves with the bytes. */
export async function packSkill(dir: string, name: string): Promise<Buffer> {
  const zip = new (zipLibs().yazl.ZipFile)();
  for (const rel of skillFiles(dir)) {
    const st = statSync(join(dir, rel));
    zip.addFile(join(dir, rel), `${name}/${rel}`, { mode: st.mode & 0o100777, mtime: st.mtime });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
