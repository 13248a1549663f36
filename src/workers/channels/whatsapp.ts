import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { log } from '../../shared/log.js';
import { mimeOf } from '../../shared/mime.js';
import type { Adapter, AdapterEvents, InboundFile } from './adapter.js';
import { PlatformError } from './adapter.js';
import { splitText } from './format.js';
import type { WaAuthStore } from './whatsapp-auth.js';
import { phoneOf } from './whatsapp-auth.js';
import {
  waMessageSchema,
  type WaContent,
  type WaLib,
  type WaMessage,
  type WaSocket,
} from './whatsapp-socket.js';

type Baileys = typeof import('@whiskeysockets/baileys');

/** Baileys' close reasons svc acts on (DisconnectReason). */
const WA_LOGGED_OUT = 401;
export const WA_RESTART_REQUIRED = 515;
/** Files svc sends to WhatsApp, and accepts from it, up to this size. */
const FILE_CAP = 100 * 1024 * 1024;
/** Media messages kept for their download (a file is fetched right after it arrives). */
const MEDIA_KEPT = 200;

const boomSchema = z.object({ output: z.object({ statusCode: z.number() }) });
/** The status code of a close (a Boom error from Baileys), or undefined. */
export function closeCode(err: unknown): number | undefined {
  const b = boomSchema.safeParse(err);
  return b.success ? b.data.output.statusCode : undefined;
}

/** A phone number (as allowed_users and the API take it) or a jid → the jid to send to. */
function toJid(chatId: string): string {
  return chatId.includes('@') ? chatId : `${chatId.replace(/^\+/, '')}@s.whatsapp.net`;
}

/** Markdown as the model writes it → WhatsApp's markup (*bold*, _italic_, ~strike~, ``` blocks). */
function markdownToWhatsapp(md: string): string {
  return md
    .split('\n')
    .map((l) => {
      if (/^\s*```/.test(l)) return l.replace(/^(\s*```)[\w+-]+\s*$/, '$1');
      const heading = /^#{1,6}\s+(.*)$/.exec(l);
      let s = heading ? `**${heading[1]}**` : l.replace(/^(\s*)[-*+]\s+/, '$1• ');
      s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, '$1 ($2)');
      s = s
        .replace(/\*\*([^*\n]+)\*\*/g, '\u0001$1\u0001')
        .replace(/__([^_\n]+)__/g, '\u0001$1\u0001');
      s = s.replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,!?:;])/g, '$1_$2_');
      s = s.replace(/~~([^~\n]+)~~/g, '~$1~');
      return s.replace(/\u0001/g, '*');
    })
    .join('\n');
}

/** An inbound message's words and files (media become files to fetch; their captions words). */
function contentOf(m: WaMessage, id: string): { text: string; files: InboundFile[] } {
  const msg = m.message ?? {};
  const words = [msg.conversation, msg.extendedTextMessage?.text].filter(
    (t): t is string => typeof t === 'string' && t.length > 0,
  );
  const files: InboundFile[] = [];
  const size = (v: unknown) => {
    const n = Number(v);
    return Number.isSafeInteger(n) && n >= 0 ? { size: n } : {};
  };
  const add = (
    name: string,
    mime: string | null | undefined,
    length: unknown,
    caption?: string | null,
  ) => {
    if (caption) words.push(caption);
    files.push({ ref: id, name, ...(mime ? { mime } : {}), ...size(length) });
  };
  const ext = (mime: string | null | undefined, fallback: string) =>
    /^[a-z]+\/([a-z0-9]+)/.exec(mime ?? '')?.[1] ?? fallback;
  const doc = msg.documentMessage ?? msg.documentWithCaptionMessage?.message?.documentMessage;
  if (msg.imageMessage)
    add(
      `image-${id}.${ext(msg.imageMessage.mimetype, 'jpg').replace('jpeg', 'jpg')}`,
      msg.imageMessage.mimetype,
      msg.imageMessage.fileLength,
      msg.imageMessage.caption,
    );
  if (msg.videoMessage)
    add(
      `video-${id}.${ext(msg.videoMessage.mimetype, 'mp4')}`,
      msg.videoMessage.mimetype,
      msg.videoMessage.fileLength,
      msg.videoMessage.caption,
    );
  if (msg.audioMessage)
    add(
      `voice-${id}.${ext(msg.audioMessage.mimetype, 'ogg')}`,
      msg.audioMessage.mimetype,
      msg.audioMessage.fileLength,
    );
  if (doc) add(doc.fileName || `file-${id}`, doc.mimetype, doc.fileLength, doc.caption);
  return { text: words.join('\n'), files };
}

/**
 * WhatsApp through Baileys' socket (WhatsApp Web's multi-device protocol), logged in with the
 * keys the QR login left. Direct messages only (groups, broadcasts and channels are ignored);
 * replies stream by editing the sent message (WhatsApp lets a sender edit for 15 minutes), one
 * send at a time.
 */
export class WhatsappAdapter implements Adapter {
  readonly platform = 'whatsapp' as const;
  readonly canEdit = true;
  readonly hasButtons = false;
  readonly textCap = 4000;
  readonly fileCap = FILE_CAP;
  private socket: WaSocket | undefined;
  private open = false;
  private stopped = false;
  private stopRun: (() => void) | undefined;
  private sending: Promise<unknown> = Promise.resolve();
  private inbox: Promise<void> = Promise.resolve();
  private readonly media = new Map<string, unknown>();

  constructor(
    private readonly lib: WaLib,
    private readonly baileys: Baileys,
    private readonly store: WaAuthStore,
  ) {}

  async run(events: AdapterEvents): Promise<void> {
    const { state, saveCreds } = this.store.open(this.baileys);
    while (!this.stopped) {
      const sock = this.lib.makeSocket(state);
      this.socket = sock;
      const outcome = await new Promise<'stopped' | 'restart'>((resolve, reject) => {
        this.stopRun = () => resolve('stopped');
        sock.ev.on('creds.update', () => saveCreds());
        sock.ev.on('connection.update', (u) => {
          if (u.qr !== undefined) {
            this.open = false;
            sock.end(undefined);
            return reject(
              new PlatformError(
                'WhatsApp asked for a new QR login: the saved session is no longer valid; log in again (POST /api/channels/whatsapp/login)',
              ),
            );
          }
          if (u.connection === 'open') {
            this.open = true;
            events.connected(phoneOf(sock.user?.id ?? state.creds.me?.id ?? 'unknown'));
          } else if (u.connection === 'close') {
            this.open = false;
            if (this.stopped) return resolve('stopped');
            const code = closeCode(u.lastDisconnect?.error);
            if (code === WA_RESTART_REQUIRED) return resolve('restart');
            if (code === WA_LOGGED_OUT) {
              this.store.remove();
              return reject(
                new PlatformError(
                  'this device was logged out from the phone; log in again with a QR code',
                ),
              );
            }
            reject(
              new PlatformError(
                `the WhatsApp connection closed: ${u.lastDisconnect?.error?.message ?? 'no reason given'}${code ? ` (${code})` : ''}`,
              ),
            );
          }
        });
        sock.ev.on('messages.upsert', (u) => {
          if (u.type !== 'notify') return;
          // In the order they came, one after another (as the other adapters deliver them).
          for (const raw of u.messages)
            this.inbox = this.inbox
              .then(() => this.inbound(raw, events))
              .catch((err: Error) =>
                log.warn('whatsapp message not handled', { error: err.message }),
              );
        });
      });
      if (outcome === 'stopped') return;
      log.info('whatsapp reconnects as the protocol asked (restart required)');
    }
  }

  private async inbound(raw: unknown, events: AdapterEvents): Promise<void> {
    const parsed = waMessageSchema.safeParse(raw);
    if (!parsed.success)
      return void log.debug('whatsapp message not understood', { error: parsed.error.message });
    const m = parsed.data;
    const jid = m.key.remoteJid;
    const id = m.key.id;
    if (m.key.fromMe || !jid || !id || !m.message) return;
    // Direct chats only: a person is @s.whatsapp.net (phone) or @lid; groups (@g.us), status and channels are ignored.
    if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) return;
    const alt = m.key.remoteJidAlt;
    const userId =
      jid.endsWith('@lid') && alt?.endsWith('@s.whatsapp.net') ? phoneOf(alt) : phoneOf(jid);
    const { text, files } = contentOf(m, id);
    if (files.length) {
      this.media.set(id, raw);
      if (this.media.size > MEDIA_KEPT) this.media.delete(this.media.keys().next().value!);
    }
    await events
      .message({
        platform: 'whatsapp',
        chatId: jid,
        userId,
        name: m.pushName || userId,
        text,
        msgKey: id,
        ...(files.length ? { files } : {}),
      })
      .catch((err: Error) => log.warn('whatsapp message not handled', { error: err.message }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.open = false;
    this.stopRun?.();
    this.socket?.end(undefined);
  }

  async sendText(chatId: string, text: string, opts?: { plain?: boolean }): Promise<string | null> {
    const jid = toJid(chatId);
    let last: string | null = null;
    for (const piece of splitText(opts?.plain ? text : markdownToWhatsapp(text), this.textCap))
      last = await this.send(jid, { text: piece });
    return last;
  }

  async editText(
    chatId: string,
    messageId: string,
    text: string,
    opts?: { plain?: boolean },
  ): Promise<void> {
    const jid = toJid(chatId);
    await this.send(jid, {
      text: opts?.plain ? text : markdownToWhatsapp(text),
      edit: { remoteJid: jid, fromMe: true, id: messageId },
    });
  }

  /** A file goes as a document (any type, its name kept), read from disk by Baileys as it uploads. */
  async sendFile(chatId: string, path: string, name: string): Promise<string | null> {
    if ((await stat(path)).size > FILE_CAP)
      throw new PlatformError(
        `${name} is larger than the ${FILE_CAP / 1024 / 1024} MiB svc sends to WhatsApp`,
      );
    return this.send(toJid(chatId), {
      document: { url: path },
      fileName: name,
      mimetype: mimeOf(name),
    });
  }

  async downloadFile(file: InboundFile): Promise<AsyncIterable<Uint8Array>> {
    const raw = this.media.get(file.ref);
    const sock = this.socket;
    if (!raw || !sock)
      throw new PlatformError(
        'the file is no longer at hand (svc restarted since it came); send it again',
      );
    try {
      return await this.lib.download(raw, sock);
    } catch (err) {
      throw new PlatformError(`WhatsApp did not give the file: ${(err as Error).message}`);
    }
  }

  async typing(chatId: string): Promise<void> {
    if (this.open)
      await this.socket?.sendPresenceUpdate('composing', toJid(chatId)).catch(() => undefined);
  }

  async stopTyping(chatId: string): Promise<void> {
    if (this.open)
      await this.socket?.sendPresenceUpdate('paused', toJid(chatId)).catch(() => undefined);
  }

  /** One send at a time (WhatsApp bans bursts); a refusal becomes a PlatformError with its reason. */
  private send(jid: string, content: WaContent): Promise<string | null> {
    const run = async (): Promise<string | null> => {
      const sock = this.socket;
      if (!sock || !this.open) throw new PlatformError('WhatsApp is not connected');
      try {
        const sent = await sock.sendMessage(jid, content);
        return sent?.key.id ?? null;
      } catch (err) {
        throw new PlatformError((err as Error).message || 'the send failed');
      }
    };
    const p = this.sending.then(run, run);
    this.sending = p.catch(() => undefined);
    return p;
  }
}
