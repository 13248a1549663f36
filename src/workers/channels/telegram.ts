import { Api, GrammyError, HttpError, InputFile, type RawApi } from 'grammy';
import { z } from 'zod';
import type { TelegramConfig } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { Adapter, AdapterEvents, Button, InboundFile } from './adapter.js';
import { PlatformError } from './adapter.js';
import { markdownToTelegramHtml, splitText } from './format.js';

/** What svc reads of an update; anything else in it is ignored. */
const tgUser = z.object({
  id: z.number().int(),
  is_bot: z.boolean().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
});
const tgEntity = z
  .object({
    type: z.string(),
    offset: z.number().int().nonnegative(),
    length: z.number().int().nonnegative(),
    user: tgUser.optional(),
  })
  .loose();
const tgFile = z.object({
  file_id: z.string().min(1),
  file_unique_id: z.string().optional(),
  file_size: z.number().int().nonnegative().optional(),
});
const tgMessage = z.object({
  message_id: z.number().int(),
  from: tgUser.optional(),
  chat: z.object({ id: z.number().int(), type: z.string(), title: z.string().optional() }),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(tgEntity).optional(),
  caption_entities: z.array(tgEntity).optional(),
  /** The message this one answers (only who wrote it matters: a reply to the bot addresses it). */
  reply_to_message: z.object({ from: tgUser.optional() }).loose().optional(),
  document: tgFile
    .extend({ file_name: z.string().optional(), mime_type: z.string().optional() })
    .optional(),
  audio: tgFile
    .extend({ file_name: z.string().optional(), mime_type: z.string().optional() })
    .optional(),
  video: tgFile
    .extend({ file_name: z.string().optional(), mime_type: z.string().optional() })
    .optional(),
  voice: tgFile.extend({ mime_type: z.string().optional() }).optional(),
  /** One photo in several sizes, smallest first. */
  photo: z.array(tgFile).optional(),
});
const tgFilePath = z.object({ file_path: z.string().min(1) });
const tgUpdate = z.object({
  update_id: z.number().int(),
  message: tgMessage.optional(),
  callback_query: z
    .object({
      id: z.string(),
      from: tgUser,
      data: z.string().optional(),
      message: tgMessage.optional(),
    })
    .optional(),
});

const POLL_TIMEOUT_S = 25;
/** grammY's Node build types its signals with an AbortController polyfill; Node's own works the same. */
type GrammySignal = Parameters<Api['getMe']>[0];
const grammySignal = (s: AbortSignal) => s as unknown as GrammySignal;
const MAX_429_RETRIES = 3;
const HTML_CAP = 4096;
/** getFile serves files up to 20 MB (core.telegram.org/bots/api#getfile). */
const BOT_API_FILE_CAP = 20 * 1024 * 1024;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

const nameOf = (u: z.infer<typeof tgUser>) =>
  [u.first_name, u.last_name].filter(Boolean).join(' ') ||
  (u.username ? `@${u.username}` : String(u.id));

/**
 * Telegram over the Bot API with grammY: long polling (getUpdates), replies edited in place as
 * they stream, inline buttons for approvals. 429s are waited out with the platform's retry_after;
 * a reply Telegram cannot parse as HTML is sent again as plain text.
 */
export class TelegramAdapter implements Adapter {
  readonly platform = 'telegram' as const;
  readonly canEdit = true;
  readonly hasButtons = true;
  readonly textCap = 4000;
  readonly fileCap = BOT_API_FILE_CAP;
  private readonly apiRoot: string;
  private readonly api: Api<RawApi>;
  private readonly abort = new AbortController();
  /** Who the bot is (getMe): group messages reach it only when they address it. */
  private me: { id: number; username: string } | undefined;

  constructor(private readonly config: TelegramConfig) {
    this.apiRoot = config.base_url.replace(/\/+$/, '');
    this.api = new Api(config.bot_token, { apiRoot: this.apiRoot });
    // Rate limits: wait what Telegram says (at most 30 s a time), up to three times.
    this.api.config.use(async (prev, method, payload, signal) => {
      for (let attempt = 0; ; attempt++) {
        const res = await prev(method, payload, signal);
        if (res.ok || res.error_code !== 429 || attempt >= MAX_429_RETRIES) return res;
        const wait = Math.min(30, Math.max(1, res.parameters?.retry_after ?? 1));
        log.info('telegram asked to slow down; waiting', { method, retry_after_s: wait });
        await sleep(wait * 1000, this.abort.signal);
        if (this.abort.signal.aborted) return res;
      }
    });
  }

  async run(events: AdapterEvents): Promise<void> {
    const signal = this.abort.signal;
    let me;
    try {
      me = await this.api.getMe(grammySignal(signal));
    } catch (err) {
      if (signal.aborted) return;
      throw new PlatformError(`Telegram did not accept the bot: ${reason(err)}`);
    }
    this.me = { id: me.id, username: me.username };
    events.connected(`@${me.username}`);
    let offset: number | undefined;
    let failures = 0;
    while (!signal.aborted) {
      let updates: unknown[];
      try {
        updates = await this.api.getUpdates(
          {
            timeout: POLL_TIMEOUT_S,
            allowed_updates: ['message', 'callback_query'],
            ...(offset === undefined ? {} : { offset }),
          },
          grammySignal(signal),
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404))
          throw new PlatformError(`Telegram refused the bot token: ${err.description}`);
        if (err instanceof GrammyError && err.error_code === 409)
          throw new PlatformError(
            `Another program is receiving this bot's updates (${err.description}); stop it or use another bot.`,
          );
        failures++;
        log.warn('telegram getUpdates failed; trying again', { error: reason(err), failures });
        await sleep(failures > 3 ? 30_000 : 5000, signal);
        continue;
      }
      for (const raw of updates) {
        const parsed = tgUpdate.safeParse(raw);
        if (!parsed.success) continue;
        const u = parsed.data;
        // Each update is handed over (and recorded) before the next poll confirms it to Telegram:
        // a worker killed in between gets it again, and the record says it was seen.
        await this.dispatch(u, events).catch((err: Error) =>
          log.warn('telegram update not handled', { error: err.message }),
        );
        offset = u.update_id + 1;
      }
    }
  }

  private async dispatch(u: z.infer<typeof tgUpdate>, events: AdapterEvents): Promise<void> {
    const key = String(u.update_id);
    if (u.callback_query) {
      const q = u.callback_query;
      const chat = q.message?.chat.id ?? q.from.id;
      await events.message({
        platform: 'telegram',
        chatId: String(chat),
        userId: String(q.from.id),
        name: nameOf(q.from),
        text: '',
        msgKey: key,
        buttonData: q.data ?? '',
        buttonQueryId: q.id,
        ...(q.message ? { buttonMessageId: String(q.message.message_id) } : {}),
      });
      return;
    }
    const m = u.message;
    if (!m || !m.from || m.from.is_bot) return;
    let text = m.text ?? m.caption ?? '';
    let chatTitle: string | undefined;
    if (m.chat.type === 'group' || m.chat.type === 'supergroup') {
      // In a group only what addresses the bot reaches it (each sender still passes the
      // allowed_users / pairing check on their own); the mention itself is not for the model.
      const addressed = this.me ? addressing(m, text, this.me) : undefined;
      if (addressed === undefined) return;
      text = addressed;
      chatTitle = m.chat.title ?? `group ${m.chat.id}`;
    } else if (m.chat.type !== 'private') return; // channels: no sender to bind
    const files = filesOf(m);
    await events.message({
      platform: 'telegram',
      chatId: String(m.chat.id),
      userId: String(m.from.id),
      name: nameOf(m.from),
      text,
      msgKey: key,
      ...(chatTitle ? { chatTitle } : {}),
      ...(files.length ? { files } : {}),
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
  }

  /** Long text goes as several messages, split on a natural boundary; buttons ride on the last. */
  async sendText(
    chatId: string,
    text: string,
    opts: { buttons?: Button[]; plain?: boolean } = {},
  ): Promise<string | null> {
    const pieces = splitText(text, this.textCap);
    let id: string | null = null;
    for (const [i, piece] of pieces.entries()) {
      const markup =
        opts.buttons?.length && i === pieces.length - 1
          ? { reply_markup: { inline_keyboard: rows(opts.buttons) } }
          : {};
      const sent = await this.withHtml(piece, opts.plain === true, (body, html) =>
        this.api.sendMessage(chatId, body, {
          ...markup,
          ...(html ? { parse_mode: 'HTML' as const } : {}),
          link_preview_options: { is_disabled: true },
        }),
      );
      id = String(sent.message_id);
    }
    return id;
  }

  async editText(
    chatId: string,
    messageId: string,
    text: string,
    opts: { plain?: boolean } = {},
  ): Promise<void> {
    try {
      await this.withHtml(text, opts.plain === true, (body, html) =>
        this.api.editMessageText(chatId, Number(messageId), body, {
          ...(html ? { parse_mode: 'HTML' as const } : {}),
          link_preview_options: { is_disabled: true },
        }),
      );
    } catch (err) {
      if (err instanceof PlatformError && /message is not modified/i.test(err.message)) return;
      throw err;
    }
  }

  async sendFile(chatId: string, path: string, name: string): Promise<string | null> {
    try {
      const sent = await this.api.sendDocument(chatId, new InputFile(path, name));
      return String(sent.message_id);
    } catch (err) {
      throw new PlatformError(reason(err));
    }
  }

  /** getFile answers the file's path; the bytes are at <apiRoot>/file/bot<token>/<file_path>. */
  async downloadFile(file: InboundFile): Promise<AsyncIterable<Uint8Array>> {
    let path: string;
    try {
      path = tgFilePath.parse(
        await this.api.getFile(file.ref, grammySignal(this.abort.signal)),
      ).file_path;
    } catch (err) {
      throw new PlatformError(`Telegram did not give the file: ${reason(err)}`);
    }
    // The URL holds the token: it never goes into a message or a log.
    const res = await fetch(
      `${this.apiRoot}/file/bot${this.config.bot_token}/${path.split('/').map(encodeURIComponent).join('/')}`,
      { signal: this.abort.signal },
    ).catch((err: Error) => {
      throw new PlatformError(
        `the file could not be fetched from Telegram (${err.message.split(this.config.bot_token).join('…')})`,
      );
    });
    if (!res.ok || !res.body)
      throw new PlatformError(`Telegram answered ${res.status} for the file`);
    return res.body;
  }

  async typing(chatId: string): Promise<void> {
    await this.api.sendChatAction(chatId, 'typing').catch(() => undefined);
  }

  async answerButton(queryId: string): Promise<void> {
    await this.api.answerCallbackQuery(queryId).catch(() => undefined);
  }

  /** HTML when configured and it fits; Telegram's "can't parse entities" gets the plain text instead. */
  private async withHtml<T>(
    text: string,
    plain: boolean,
    send: (body: string, html: boolean) => Promise<T>,
  ): Promise<T> {
    const html =
      !plain && this.config.parse_mode === 'HTML' ? markdownToTelegramHtml(text) : undefined;
    try {
      if (html !== undefined && html.length <= HTML_CAP) {
        try {
          return await send(html, true);
        } catch (err) {
          if (
            !(
              err instanceof GrammyError &&
              /can't parse entities|unsupported start tag|can't find end/i.test(err.description)
            )
          )
            throw err;
        }
      }
      return await send(text, false);
    } catch (err) {
      throw new PlatformError(reason(err));
    }
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A group message addressed to the bot, as the text the agent gets: it mentions @username (a
 * mention entity, a text mention of the bot, or the name typed where entities are missing), is a
 * /command@username, or replies to one of the bot's messages. The mention is taken out.
 * Undefined: the message is for the others in the group.
 */
export function addressing(
  m: z.infer<typeof tgMessage>,
  text: string,
  me: { id: number; username: string },
): string | undefined {
  const handle = `@${me.username}`.toLowerCase();
  const entities = m.entities ?? m.caption_entities ?? [];
  const cut: { offset: number; length: number }[] = entities.filter(
    (e) =>
      (e.type === 'mention' &&
        text.slice(e.offset, e.offset + e.length).toLowerCase() === handle) ||
      (e.type === 'text_mention' && e.user?.id === me.id),
  );
  const typed = new RegExp(`(^|[^\\w@])@${escapeRe(me.username)}(?!\\w)`, 'gi');
  const command = new RegExp(`^/[A-Za-z0-9_]+@${escapeRe(me.username)}(?!\\w)`, 'i').test(text);
  const replied = m.reply_to_message?.from?.id === me.id;
  if (!cut.length && !typed.test(text) && !command && !replied) return undefined;
  if (command) return text;
  let out = text;
  for (const e of [...cut].sort((a, b) => b.offset - a.offset))
    out = out.slice(0, e.offset) + out.slice(e.offset + e.length);
  out = out.replace(typed, '$1');
  return out
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/^[\s,:]+/, '')
    .trim();
}

/** The files of a message: a document, audio, video or voice note as sent, a photo at its largest size. */
function filesOf(m: z.infer<typeof tgMessage>): InboundFile[] {
  const out: InboundFile[] = [];
  const add = (f: z.infer<typeof tgFile> & { mime_type?: string | undefined }, name: string) =>
    out.push({
      ref: f.file_id,
      name,
      ...(f.mime_type ? { mime: f.mime_type } : {}),
      ...(f.file_size === undefined ? {} : { size: f.file_size }),
    });
  if (m.document) add(m.document, m.document.file_name ?? 'document');
  if (m.audio) add(m.audio, m.audio.file_name ?? 'audio');
  if (m.video) add(m.video, m.video.file_name ?? 'video.mp4');
  if (m.voice) add(m.voice, 'voice.ogg');
  const photo = m.photo?.at(-1);
  if (photo) add({ ...photo, mime_type: 'image/jpeg' }, `photo-${m.message_id}.jpg`);
  return out;
}

function rows(buttons: Button[]) {
  const out: { text: string; callback_data: string }[][] = [];
  for (let i = 0; i < buttons.length; i += 3)
    out.push(buttons.slice(i, i + 3).map((b) => ({ text: b.label, callback_data: b.data })));
  return out;
}

/** The platform's own words for a failure (never the token: grammY's messages include the method only). */
function reason(err: unknown): string {
  if (err instanceof GrammyError) return `${err.error_code} ${err.description}`;
  if (err instanceof HttpError)
    return `network error: ${(err.error as Error | undefined)?.message ?? err.message}`;
  return err instanceof Error ? err.message : String(err);
}
