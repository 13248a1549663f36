import { createCipheriv, createDecipheriv } from 'node:crypto';
import { extname } from 'node:path';
import { z } from 'zod';
import { PlatformError } from './adapter.js';

/**
 * iLink media: files travel through the WeChat CDN encrypted with AES-128-ECB (PKCS7), each
 * with its own key. Inbound items name the ciphertext (a full URL, or a query param for
 * <cdn>/downloadfile) and the key; outbound files are encrypted here, uploaded, and sent as an
 * item naming the CDN's download param and the key.
 */

/** Where an item's ciphertext is and how it is encrypted. */
export const cdnMediaSchema = z
  .object({
    encrypt_query_param: z.string().optional(),
    aes_key: z.string().optional(),
    encrypt_type: z.number().optional(),
    full_url: z.string().optional(),
  })
  .loose();
export type CdnMedia = z.infer<typeof cdnMediaSchema>;

/** iLink's item types (message item_list[].type). */
export const ITEM = { text: 1, image: 2, voice: 3, file: 4, video: 5 } as const;
/** getuploadurl's media_type. */
export const MEDIA_TYPE = { image: 1, video: 2, file: 3, voice: 4 } as const;

const IMAGE_EXT = new Set(['.png', '.jpg', '.jpeg', '.gif', '.webp', '.bmp']);
const VIDEO_EXT = new Set(['.mp4', '.mov', '.webm', '.mkv', '.avi']);

/** What a file is sent as, by its extension (as the protocol's own clients decide). */
export function mediaKindOf(name: string): 'image' | 'video' | 'file' {
  const ext = extname(name).toLowerCase();
  return IMAGE_EXT.has(ext) ? 'image' : VIDEO_EXT.has(ext) ? 'video' : 'file';
}

const HEX32 = /^[0-9a-fA-F]{32}$/;

/**
 * An inbound item's key: 32 hex digits, base64 of the 16 raw bytes, or base64 of the 32 hex
 * digits (all three occur). Anything else is refused rather than decrypted into garbage.
 */
export function parseAesKey(key: string): Buffer {
  const k = key.trim();
  if (HEX32.test(k)) return Buffer.from(k, 'hex');
  const raw = Buffer.from(k, 'base64');
  if (raw.length === 16) return raw;
  const text = raw.toString('latin1');
  if (raw.length === 32 && HEX32.test(text)) return Buffer.from(text, 'hex');
  throw new PlatformError('the file came with a key svc cannot read');
}

/** The key as an outbound item carries it: base64 of its hex digits. */
export const itemAesKey = (key: Buffer): string =>
  Buffer.from(key.toString('hex'), 'latin1').toString('base64');

export function encrypt(plain: Buffer, key: Buffer): Buffer {
  const c = createCipheriv('aes-128-ecb', key, null);
  return Buffer.concat([c.update(plain), c.final()]);
}

/** Decrypts a ciphertext stream as it arrives (so the upload's byte cap still cuts it short). */
export async function* decryptStream(
  source: AsyncIterable<Uint8Array>,
  key: Buffer,
): AsyncGenerator<Buffer> {
  const d = createDecipheriv('aes-128-ecb', key, null);
  for await (const chunk of source) {
    const out = d.update(chunk);
    if (out.length) yield out;
  }
  let last: Buffer;
  try {
    last = d.final();
  } catch {
    throw new PlatformError('the file did not decrypt with its key (damaged or incomplete)');
  }
  if (last.length) yield last;
}

/** The URL an item's ciphertext is fetched from; undefined when the item names none. */
export function downloadUrl(cdnBase: string, media: CdnMedia): string | undefined {
  if (media.full_url && /^https?:\/\//.test(media.full_url)) return media.full_url;
  if (media.encrypt_query_param)
    return `${cdnBase.replace(/\/+$/, '')}/downloadfile?${media.encrypt_query_param}`;
  return undefined;
}

/** Where a ciphertext is uploaded (the upload_param from getuploadurl and the file's key). */
export const uploadUrl = (cdnBase: string, uploadParam: string, fileKey: string): string =>
  `${cdnBase.replace(/\/+$/, '')}/upload?encrypted_query_param=${encodeURIComponent(uploadParam)}&filekey=${encodeURIComponent(fileKey)}`;
