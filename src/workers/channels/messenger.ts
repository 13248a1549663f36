import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import type { MessengerConfig } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { Adapter, AdapterEvents, InboundFile } from './adapter.js';
import { PlatformError } from './adapter.js';
import { markdownToPlain, splitText } from './format.js';
import type { ContextTokens, MessengerCredentials } from './messenger-state.js';
import {
  cdnUpload,
  IlinkClient,
  IlinkError,
  ILINK_RATE_LIMITED,
  ILINK_SESSION_EXPIRED,
  type IlinkMessage,
} from './ilink.js';
import {
  decryptStream,
  downloadUrl,
  encrypt,
  ITEM,
  itemAesKey,
  MEDIA_TYPE,
  mediaKindOf,
  parseAesKey,
  uploadUrl,
  type CdnMedia,
} from './ilink-media.js';

/** A file is encrypted in memory before its upload: this much at most. */
const MAX_SEND_BYTES = 100 * 1024 * 1024;
/** The protocol wants this much time between two sends to a user. */
const SEND_GAP_MS = 2000;
const RETRY_MS = [2000, 4000, 8000];
/** Typing tickets stay valid a day. */
const TICKET_TTL_MS = 24 * 3600_000;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Where a file sent to the bot is and its key, carried in InboundFile.ref until it is fetched. */
const fileRefSchema = z.object({ url: z.string(), key: z.string() });

/**
 * An inbound message as words plus files: text items and voice transcripts become the text;
 * images, files, videos and voice notes that name their ciphertext become files to fetch. Media
 * that name none (or carry no key) stay a note in the text, so the model knows something came.
 */
export function contentOf(
  m: IlinkMessage,
  cdnBase: string,
): { text: string; files: InboundFile[] } {
  const words: string[] = [];
  const files: InboundFile[] = [];
  const id = String(m.message_id ?? m.seq ?? m.create_time_ms ?? Date.now());
  const add = (
    media: CdnMedia | undefined,
    key: string | undefined,
    name: string,
    note: string,
    size?: number,
  ) => {
    const url = media ? downloadUrl(cdnBase, media) : undefined;
    if (!url || !key) return void words.push(note);
    files.push({
      ref: JSON.stringify({ url, key }),
      name,
      ...(size === undefined ? {} : { size }),
    });
  };
  const media = m.item_list.filter((i) => i.type !== ITEM.text);
  for (const i of m.item_list) {
    // Several media in one message get numbered names; one keeps the plain name.
    const suffix = media.length > 1 ? `-${media.indexOf(i) + 1}` : '';
    if (i.type === ITEM.text) words.push(i.text_item?.text ?? '');
    else if (i.type === ITEM.image)
      add(
        i.image_item?.media,
        i.image_item?.aeskey || i.image_item?.media?.aes_key,
        `image-${id}${suffix}.jpg`,
        '[image]',
      );
    else if (i.type === ITEM.voice) {
      if (i.voice_item?.text) words.push(`[voice] ${i.voice_item.text}`);
      add(
        i.voice_item?.media,
        i.voice_item?.media?.aes_key,
        `voice-${id}${suffix}.silk`,
        i.voice_item?.text ? '' : '[voice]',
      );
    } else if (i.type === ITEM.file) {
      const len = Number(i.file_item?.len);
      add(
        i.file_item?.media,
        i.file_item?.media?.aes_key,
        i.file_item?.file_name || `file-${id}${suffix}`,
        `[file: ${i.file_item?.file_name ?? 'file'}]`,
        Number.isSafeInteger(len) && len >= 0 ? len : undefined,
      );
    } else if (i.type === ITEM.video)
      add(i.video_item?.media, i.video_item?.media?.aes_key, `video-${id}${suffix}.mp4`, '[video]');
  }
  return { text: words.filter(Boolean).join('\n'), files };
}

/**
 * WeChat through iLink: getupdates long poll, replies as whole plain-text messages (the protocol
 * cannot edit), at least two seconds apart, retried on its rate-limit code.
 */
export class MessengerAdapter implements Adapter {
  readonly platform = 'messenger' as const;
  readonly canEdit = false;
  readonly hasButtons = false;
  readonly textCap = 2000;
  private readonly client: IlinkClient;
  private readonly abort = new AbortController();
  private sending: Promise<unknown> = Promise.resolve();
  private lastSend = 0;
  private readonly tickets = new Map<string, { ticket: string; at: number }>();
  private readonly typingChain = new Map<string, Promise<void>>();

  constructor(
    private readonly creds: MessengerCredentials,
    private readonly config: MessengerConfig,
    private readonly contexts: ContextTokens,
  ) {
    this.client = new IlinkClient(creds.base_url, creds.token);
  }

  async run(events: AdapterEvents): Promise<void> {
    const signal = this.abort.signal;
    let cursor = '';
    let failures = 0;
    events.connected(this.creds.user_id);
    while (!signal.aborted) {
      let batch;
      try {
        batch = await this.client.getUpdates(cursor, signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof IlinkError && (err.code === ILINK_SESSION_EXPIRED || err.code === 401))
          throw new PlatformError(
            'the WeChat login expired; scan a new QR code (POST /api/channels/messenger/login with {"force": true})',
          );
        failures++;
        if (failures >= 5)
          throw new PlatformError(`iLink keeps failing: ${(err as Error).message}`);
        log.warn('iLink getupdates failed; trying again', {
          error: (err as Error).message,
          failures,
        });
        await sleep(Math.min(30_000, 5000 * failures), signal);
        continue;
      }
      for (const m of batch.msgs) {
        if (m.message_type !== 1 || !m.from_user_id || !m.context_token) continue;
        this.contexts.set(m.from_user_id, m.context_token);
        const { text, files } = contentOf(m, this.config.cdn_base_url);
        const key = String(
          m.message_id ?? m.seq ?? `${m.from_user_id}:${m.create_time_ms ?? ''}:${text}`,
        );
        await events
          .message({
            platform: 'messenger',
            chatId: m.from_user_id,
            userId: m.from_user_id,
            name: m.from_user_id,
            text,
            msgKey: key,
            ...(files.length ? { files } : {}),
          })
          .catch((err: Error) => log.warn('iLink message not handled', { error: err.message }));
      }
      cursor = batch.cursor;
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
  }

  async sendText(chatId: string, text: string): Promise<string | null> {
    const token = this.contexts.get(chatId);
    if (!token)
      throw new PlatformError(
        `no conversation with ${chatId} yet: WeChat lets a bot write only to users who wrote to it first`,
      );
    let last: string | null = null;
    for (const piece of splitText(markdownToPlain(text), this.textCap))
      last = await this.queue(() => this.client.sendText(chatId, token, piece));
    return last;
  }

  async editText(): Promise<void> {
    throw new PlatformError('WeChat messages cannot be edited');
  }

  /**
   * A file goes through the CDN: encrypted with a fresh key, its upload asked for (getuploadurl),
   * the ciphertext POSTed, then a message with an image, video or file item (by extension) that
   * names the CDN's download param and the key.
   */
  async sendFile(chatId: string, path: string, name: string): Promise<string | null> {
    const token = this.contexts.get(chatId);
    if (!token)
      throw new PlatformError(
        `no conversation with ${chatId} yet: WeChat lets a bot write only to users who wrote to it first`,
      );
    if ((await stat(path)).size > MAX_SEND_BYTES)
      throw new PlatformError(
        `${name} is larger than the ${MAX_SEND_BYTES / 1024 / 1024} MiB svc sends to WeChat`,
      );
    const plain = await readFile(path);
    const key = randomBytes(16);
    const cipher = encrypt(plain, key);
    const kind = mediaKindOf(name);
    const filekey = randomBytes(16).toString('hex');
    const param = await this.client.uploadParam({
      filekey,
      media_type: MEDIA_TYPE[kind],
      to_user_id: chatId,
      rawsize: plain.length,
      rawfilemd5: createHash('md5').update(plain).digest('hex'),
      filesize: cipher.length,
      aeskey: key.toString('hex'),
    });
    const download = await cdnUpload(
      uploadUrl(this.config.cdn_base_url, param, filekey),
      cipher,
      this.abort.signal,
    );
    const media = { encrypt_query_param: download, aes_key: itemAesKey(key), encrypt_type: 1 };
    const item =
      kind === 'image'
        ? { type: ITEM.image, image_item: { media, mid_size: cipher.length } }
        : kind === 'video'
          ? { type: ITEM.video, video_item: { media, video_size: cipher.length } }
          : { type: ITEM.file, file_item: { media, file_name: name, len: String(plain.length) } };
    log.info('iLink file sent through the CDN', { kind, bytes: plain.length });
    return this.queue(() => this.client.sendItem(chatId, token, item));
  }

  /** A file a user sent: its ciphertext fetched from the CDN and decrypted as it streams. */
  async downloadFile(file: InboundFile): Promise<AsyncIterable<Uint8Array>> {
    const ref = fileRefSchema.parse(JSON.parse(file.ref));
    const key = parseAesKey(ref.key);
    const res = await fetch(ref.url, { signal: this.abort.signal }).catch((err: Error) => {
      throw new PlatformError(`the file could not be fetched from the WeChat CDN (${err.message})`);
    });
    if (!res.ok || !res.body)
      throw new PlatformError(`the WeChat CDN answered ${res.status} for the file`);
    return decryptStream(res.body, key);
  }

  /** "Typing…" while a turn runs: a ticket from getconfig (kept a day per user), then sendtyping. Failures only cost the indicator. */
  async typing(chatId: string): Promise<void> {
    await this.setTyping(chatId, 1);
  }

  async stopTyping(chatId: string): Promise<void> {
    await this.setTyping(chatId, 2);
  }

  /** In order per chat, so a stop never overtakes the start it ends. */
  private setTyping(chatId: string, status: 1 | 2): Promise<void> {
    const p = (this.typingChain.get(chatId) ?? Promise.resolve()).then(() =>
      this.sendTyping(chatId, status),
    );
    this.typingChain.set(chatId, p);
    void p.finally(() => {
      if (this.typingChain.get(chatId) === p) this.typingChain.delete(chatId);
    });
    return p;
  }

  private async sendTyping(chatId: string, status: 1 | 2): Promise<void> {
    const token = this.contexts.get(chatId);
    if (!token) return;
    try {
      let t = this.tickets.get(chatId);
      if (!t || Date.now() - t.at > TICKET_TTL_MS) {
        if (status === 2) return; // never shown
        t = { ticket: await this.client.typingTicket(chatId, token), at: Date.now() };
        this.tickets.set(chatId, t);
      }
      await this.client.sendTyping(chatId, t.ticket, status);
    } catch (err) {
      this.tickets.delete(chatId);
      log.debug('iLink typing not shown', { error: (err as Error).message });
    }
  }

  /** One send at a time, two seconds apart; the rate-limit code and network errors are retried. */
  private queue<T>(send: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      for (let attempt = 0; ; attempt++) {
        await sleep(Math.max(0, this.lastSend + SEND_GAP_MS - Date.now()));
        this.lastSend = Date.now();
        try {
          return await send();
        } catch (err) {
          const retry =
            err instanceof IlinkError &&
            (err.code === ILINK_RATE_LIMITED || err.code === 0) &&
            attempt < RETRY_MS.length;
          if (!retry) throw err;
          await sleep(RETRY_MS[attempt]!);
        }
      }
    };
    const p = this.sending.then(run, run);
    this.sending = p.catch(() => undefined);
    return p;
  }
}
