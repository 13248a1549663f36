import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from './errors.js';
import { mimeOf } from './mime.js';
import type { Db } from './store/db.js';
import { insertUpload, type Upload } from './store/uploads.js';
import { isoNow } from './store/util.js';
import { writeChunks } from './write-chunks.js';

/**
 * Storing a file as an upload ($SVC_HOME/uploads/<stamp>-<rand>_<name> plus its row), shared by
 * POST /api/upload and the channels worker (files sent to a bot), so both name, type and record
 * files the same way and a turn gets either as an attachment.
 */

const MAX_NAME_BYTES = 255;
const PREFIX_BYTES = '20261122-030102-ab12cd_'.length;

/** A file went past its byte limit while it was written; what was written is removed. */
export class FileTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the file is larger than ${limit} bytes`);
  }
}

export interface WrittenTemp {
  size: number;
  sha256: string;
  /** The first 16 bytes, for the type check. */
  head: Buffer;
}

/** Writes a stream to a new temp file (0600), hashing it; throws FileTooLarge past `maxBytes`. */
export async function writeTemp(
  source: AsyncIterable<Uint8Array>,
  tmp: string,
  maxBytes = Infinity,
): Promise<WrittenTemp> {
  const hash = createHash('sha256');
  const out: WrittenTemp = { size: 0, sha256: '', head: Buffer.alloc(0) };
  async function* counted() {
    for await (const raw of source) {
      const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
      out.size += chunk.length;
      if (out.size > maxBytes) throw new FileTooLarge(maxBytes);
      hash.update(chunk);
      if (out.head.length < 16)
        out.head = Buffer.concat([out.head, chunk.subarray(0, 16 - out.head.length)]);
      yield chunk;
    }
  }
  await writeChunks(tmp, counted(), { mode: 0o600 });
  out.sha256 = hash.digest('hex');
  return out;
}

/** A fresh temp file path under the uploads folder's `.tmp` (made 0700 when missing). */
export async function tempPath(uploadsDir: string): Promise<string> {
  const dir = join(uploadsDir, '.tmp');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${Date.now()}-${randomBytes(8).toString('hex')}.part`);
}

/**
 * Links the temp file under a fresh unique name (a link never replaces an existing file, unlike
 * rename) and answers that name: `20261122-030102-ab12cd_report.pdf`.
 */
export async function placeUpload(dir: string, tmp: string, original: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const d = new Date().toISOString();
    const stamp = `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 19)}`;
    const rand = BigInt(`0x${randomBytes(5).toString('hex')}`)
      .toString(36)
      .padStart(6, '0')
      .slice(-6);
    const name = `${stamp}-${rand}_${truncateBytes(original, MAX_NAME_BYTES - PREFIX_BYTES)}`;
    try {
      await link(tmp, join(dir, name));
      return name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err;
    }
  }
}

/**
 * Stores one file as an upload, all or nothing: written to a temp file (at most `maxBytes`),
 * typed, named, recorded. Throws FileTooLarge past the limit.
 */
export async function storeUpload(
  db: Db,
  uploadsDir: string,
  source: AsyncIterable<Uint8Array>,
  opts: { filename: string | undefined; contentType: string | undefined; maxBytes: number },
): Promise<Upload> {
  const original = sanitizeFileName(opts.filename);
  const tmp = await tempPath(uploadsDir);
  let final: string | undefined;
  try {
    const w = await writeTemp(source, tmp, opts.maxBytes);
    final = await placeUpload(uploadsDir, tmp, original);
    const declared = opts.contentType?.split(';')[0]?.trim().toLowerCase();
    const valid =
      declared && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(declared) ? declared : undefined;
    const row: Upload = {
      name: final,
      original_name: original,
      mime: detectMime(valid, original, w.head),
      size: w.size,
      sha256: w.sha256,
      created_at: isoNow(),
    };
    insertUpload(db, row);
    return row;
  } catch (err) {
    if (final) await unlink(join(uploadsDir, final)).catch(() => {});
    throw err;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/**
 * A client's file name made safe to store and show: basename only (either slash), no control or
 * bidi-override characters (they disguise extensions), no leading dots, at most 255 bytes with
 * the extension kept; "upload" when nothing is left. A NUL is refused outright.
 */
export function sanitizeFileName(raw: string | undefined): string {
  if (raw === undefined) return 'upload';
  if (raw.includes('\0'))
    throw new ApiError(
      'invalid_request',
      'A file name contains a NUL character; rename the file and upload it again.',
    );
  let name = raw.normalize('NFC').split(/[/\\]/).pop() ?? '';
  name = name.replace(/[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');
  name = name.trim().replace(/^[.\s]+/, '');
  return truncateBytes(name, MAX_NAME_BYTES) || 'upload';
}

/** Cuts a name to `max` UTF-8 bytes at a character boundary, keeping a short extension. */
function truncateBytes(name: string, max: number): string {
  if (Buffer.byteLength(name) <= max) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 32 ? name.slice(dot) : '';
  let out = '';
  let bytes = Buffer.byteLength(ext);
  for (const ch of name.slice(0, name.length - ext.length)) {
    bytes += Buffer.byteLength(ch);
    if (bytes > max) break;
    out += ch;
  }
  return out + ext;
}

/** Signatures of the types served as themselves, so a claimed image that is not one is not kept as one. */
function sniff(head: Buffer): string | undefined {
  const hex = head.toString('hex');
  if (hex.startsWith('89504e470d0a1a0a')) return 'image/png';
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex.startsWith('474946383761') || hex.startsWith('474946383961')) return 'image/gif';
  if (hex.startsWith('52494646') && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  if (hex.startsWith('255044462d')) return 'application/pdf';
  return undefined;
}

/** The declared Content-Type, else the extension's; a binary type must match the file's signature. */
export function detectMime(declared: string | undefined, name: string, head: Buffer): string {
  const claimed =
    declared !== undefined && declared !== 'application/octet-stream' ? declared : mimeOf(name);
  const sniffed = sniff(head);
  if (
    sniffed &&
    (claimed === 'application/octet-stream' ||
      claimed.startsWith('image/') ||
      claimed === 'application/pdf')
  )
    return sniffed;
  if (
    claimed === 'application/pdf' ||
    ['image/png', 'image/jpeg', 'image/gif', 'image/webp'].includes(claimed)
  )
    return 'application/octet-stream';
  return claimed;
}

/** 512 MiB, 20 MiB, 1500 bytes: for messages about limits. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1 && n % 1024 === 0) (n /= 1024), i++;
  return `${n} ${units[i]}`;
}
