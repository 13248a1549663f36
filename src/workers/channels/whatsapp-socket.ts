import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { AuthenticationState } from '@whiskeysockets/baileys';
import { log } from '../../shared/log.js';
import { packageRoot } from '../../shared/version.js';
import { importPackage } from '../../shared/import-package.js';

/**
 * The part of Baileys svc uses, as a small interface: a socket (its event emitter, sends,
 * presence, end) and the media download. The adapter and the login talk only to this, so a test
 * can put a fake socket with Baileys' event shape at exactly this boundary.
 */

interface WaConnectionUpdate {
  connection?: 'open' | 'connecting' | 'close';
  /** A fresh login code (the text the QR encodes). */
  qr?: string;
  lastDisconnect?: { error?: Error | undefined; date?: Date };
  isNewLogin?: boolean;
}

interface WaMessagesUpsert {
  messages: unknown[];
  type: string;
}

interface WaEvents {
  on(event: 'connection.update', fn: (u: WaConnectionUpdate) => void): void;
  on(event: 'creds.update', fn: (u: unknown) => void): void;
  on(event: 'messages.upsert', fn: (u: WaMessagesUpsert) => void): void;
}

interface WaKey {
  remoteJid: string;
  fromMe: boolean;
  id: string;
}

/** What svc sends: text (or an edit of a sent text), or a document read from a local file. */
export type WaContent =
  | { text: string; edit?: WaKey }
  | { document: { url: string }; fileName: string; mimetype: string; caption?: string };

export interface WaSocket {
  ev: WaEvents;
  /** Who is logged in, once the connection is open ("4915…:12@s.whatsapp.net"). */
  user?: { id: string; name?: string | undefined } | undefined;
  sendMessage(
    jid: string,
    content: WaContent,
  ): Promise<{ key: { id?: string | null | undefined } } | undefined>;
  sendPresenceUpdate(type: 'composing' | 'paused', jid: string): Promise<void>;
  end(error: Error | undefined): void;
}

/** A Baileys message as svc reads it (parsed with this, never trusted as typed). */
export const waMessageSchema = z.looseObject({
  key: z.looseObject({
    remoteJid: z.string().nullish(),
    remoteJidAlt: z.string().nullish(),
    fromMe: z.boolean().nullish(),
    id: z.string().nullish(),
    participant: z.string().nullish(),
  }),
  pushName: z.string().nullish(),
  message: z
    .looseObject({
      conversation: z.string().nullish(),
      extendedTextMessage: z.looseObject({ text: z.string().nullish() }).nullish(),
      imageMessage: z
        .looseObject({
          caption: z.string().nullish(),
          mimetype: z.string().nullish(),
          fileLength: z.unknown(),
        })
        .nullish(),
      videoMessage: z
        .looseObject({
          caption: z.string().nullish(),
          mimetype: z.string().nullish(),
          fileLength: z.unknown(),
        })
        .nullish(),
      audioMessage: z
        .looseObject({ mimetype: z.string().nullish(), fileLength: z.unknown() })
        .nullish(),
      documentMessage: z
        .looseObject({
          caption: z.string().nullish(),
          fileName: z.string().nullish(),
          mimetype: z.string().nullish(),
          fileLength: z.unknown(),
        })
        .nullish(),
      documentWithCaptionMessage: z
        .looseObject({
          message: z
            .looseObject({
              documentMessage: z
                .looseObject({
                  caption: z.string().nullish(),
                  fileName: z.string().nullish(),
                  mimetype: z.string().nullish(),
                  fileLength: z.unknown(),
                })
                .nullish(),
            })
            .nullish(),
        })
        .nullish(),
    })
    .nullish(),
});
export type WaMessage = z.infer<typeof waMessageSchema>;

export interface WaLib {
  /** A socket logged in with (or logging in to) this auth state. */
  makeSocket(auth: AuthenticationState): WaSocket;
  /** The bytes of a media message a user sent. */
  download(message: unknown, socket: WaSocket): Promise<AsyncIterable<Uint8Array>>;
}

/** A pino-compatible logger that says nothing: Baileys logs keys and message contents at debug and trace. */
interface SilentLogger {
  level: string;
  child(obj: Record<string, unknown>): SilentLogger;
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  fatal(obj: unknown, msg?: string): void;
}
const nothing = () => {};
const silentLogger: SilentLogger = {
  level: 'silent',
  child: () => silentLogger,
  trace: nothing,
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  fatal: nothing,
};

/** Where the test-only socket may come from: the package's own compiled tests, nowhere else. */
const TEST_HOOK = 'SVC_WHATSAPP_TEST_SOCKET';
const fn = z.custom<(...args: never[]) => unknown>(
  (v) => typeof v === 'function',
  'must export a function',
);
const fakeModuleSchema = z.looseObject({ makeSocket: fn, download: fn });

/**
 * Baileys, loaded the first time WhatsApp starts (it is large; nothing else pays for it). The
 * environment variable SVC_WHATSAPP_TEST_SOCKET, which no API can set, swaps in a test socket
 * module; it must lie under this package's dist/test/, and a bad one fails WhatsApp's start
 * rather than falling back to the real protocol (fail closed).
 */
export async function loadWaLib(): Promise<{
  lib: WaLib;
  baileys: typeof import('@whiskeysockets/baileys');
}> {
  const baileys =
    await importPackage<typeof import('@whiskeysockets/baileys')>('@whiskeysockets/baileys');
  const hook = process.env[TEST_HOOK];
  if (hook !== undefined && hook !== '') {
    const file = resolve(hook);
    const rel = relative(join(packageRoot, 'dist', 'test'), file);
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${TEST_HOOK} must name a module under ${join(packageRoot, 'dist', 'test')}`);
    const mod = fakeModuleSchema.parse(
      await importPackage<unknown>(pathToFileURL(file).href),
    ) as unknown as WaLib;
    log.warn('whatsapp uses a test socket (SVC_WHATSAPP_TEST_SOCKET)');
    return { lib: mod, baileys };
  }
  const lib: WaLib = {
    makeSocket: (auth) =>
      baileys.makeWASocket({
        auth: {
          creds: auth.creds,
          keys: baileys.makeCacheableSignalKeyStore(auth.keys, silentLogger),
        },
        logger: silentLogger,
        browser: baileys.Browsers.ubuntu('svc'),
        markOnlineOnConnect: false,
        syncFullHistory: false,
        shouldSyncHistoryMessage: () => false,
      }) as unknown as WaSocket, // Baileys' socket has this shape and much more
    download: async (message, socket) => {
      const real = socket as unknown as ReturnType<typeof baileys.makeWASocket>;
      return baileys.downloadMediaMessage(
        message as Parameters<typeof baileys.downloadMediaMessage>[0],
        'stream',
        {},
        { logger: silentLogger, reuploadRequest: (m) => real.updateMediaMessage(m) },
      );
    },
  };
  return { lib, baileys };
}
