import { open, stat } from 'node:fs/promises';
import { DiscordAPIError, HTTPError, RateLimitError, REST, type RouteLike } from '@discordjs/rest';
import { WebSocketManager, type SessionInfo } from '@discordjs/ws';
import { z } from 'zod';
import type { DiscordConfig } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { Adapter, AdapterEvents, Button, InboundFile, InboundMessage } from './adapter.js';
import { PlatformError } from './adapter.js';
import { markdownToPlain, splitText } from './format.js';

/** What svc reads of a gateway dispatch; anything else in it is ignored. */
const snowflake = z.string().regex(/^\d{1,20}$/);
const dcUser = z.object({
  id: snowflake,
  username: z.string(),
  global_name: z.string().nullish(),
  bot: z.boolean().optional(),
});
const dcAttachment = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number().int().nonnegative().optional(),
  url: z.string(),
  content_type: z.string().optional(),
});
const dcMessage = z.object({
  id: snowflake,
  channel_id: snowflake,
  guild_id: snowflake.optional(),
  author: dcUser,
  /** Absent for webhooks; set when a server member wrote it. */
  webhook_id: z.string().optional(),
  content: z.string().default(''),
  mentions: z.array(dcUser.loose()).default([]),
  attachments: z.array(dcAttachment.loose()).default([]),
  /** The message this one replies to (only who wrote it matters: a reply to the bot addresses it). */
  referenced_message: z.object({ author: dcUser.loose() }).loose().nullish(),
});
const dcInteraction = z.object({
  id: snowflake,
  /** 3: a message component (a button press); the others are slash commands and forms. */
  type: z.number().int(),
  /** Goes into the callback's path: a URL-safe string. */
  token: z.string().regex(/^[\w.-]{1,500}$/),
  channel_id: snowflake.optional(),
  /** In a server the presser is the member's user; in a DM, the user. */
  user: dcUser.loose().optional(),
  member: z.object({ user: dcUser.loose() }).loose().optional(),
  message: z.object({ id: snowflake }).loose().optional(),
  data: z
    .object({
      custom_id: z.string().max(100).optional(),
      component_type: z.number().int().optional(),
    })
    .loose()
    .optional(),
});
const dcSent = z.object({ id: z.string() }).loose();
const dcMe = z.object({ id: z.string(), username: z.string() }).loose();
const dcChannel = z.object({ name: z.string().nullish() }).loose();

/** Messages in servers (GUILD_MESSAGES) and in DMs (DIRECT_MESSAGES). Not the privileged MESSAGE_CONTENT: a bot gets the text of DMs and of messages that mention it without it. */
const INTENTS = (1 << 9) | (1 << 12);
const TEXT_CAP = 2000;
/** The most Discord takes in one upload (a server at boost level 3); beyond it, svc says so instead of reading the file. */
const UPLOAD_CAP = 100 * 1024 * 1024;
/** A 429 that asks for a longer wait than this fails the call (the reply is not held up for minutes). */
const MAX_RATE_LIMIT_WAIT_MS = 30_000;
/** How long the first connection (HELLO, IDENTIFY, READY) may take before the adapter fails and is restarted. */
const CONNECT_TIMEOUT_MS = 60_000;
const STOP_WAIT_MS = 3000;
/** Where Discord serves attachments; a file elsewhere is fetched only from the configured API's own host. */
const CDN_HOSTS = new Set(['cdn.discordapp.com', 'media.discordapp.net']);

const nameOf = (u: z.infer<typeof dcUser>) => u.global_name || u.username;

/**
 * Discord through its Gateway (events, @discordjs/ws) and REST API (sends, @discordjs/rest):
 * direct messages always, server channels only when the bot is mentioned or replied to; replies
 * edited in place as they stream; buttons (message components) for approvals; attachments both
 * ways. The libraries keep the session alive (heartbeats, RESUME after a dropped connection) and
 * wait out 429s with Discord's retry_after.
 */
export class DiscordAdapter implements Adapter {
  readonly platform = 'discord' as const;
  readonly canEdit = true;
  readonly hasButtons = true;
  readonly textCap = TEXT_CAP;
  private readonly rest: REST;
  private manager: WebSocketManager | undefined;
  private readonly abort = new AbortController();
  /** The gateway session (held here, not in the library's process-wide store, so a restarted adapter starts afresh). */
  private session: SessionInfo | null = null;
  private me: { id: string; username: string } | undefined;
  /** Messages are handled one at a time, in the order the gateway sent them. */
  private chain: Promise<void> = Promise.resolve();
  private readonly channelNames = new Map<string, string>();
  private readonly apiOrigin: string;

  constructor(private readonly config: DiscordConfig) {
    this.apiOrigin = new URL(config.api_base_url).origin;
    this.rest = new REST({
      api: config.api_base_url.replace(/\/+$/, ''),
      version: '10',
      timeout: 30_000,
      retries: 2,
      rejectOnRateLimit: (info) => info.retryAfter > MAX_RATE_LIMIT_WAIT_MS,
      // Node's own fetch: the library's bundled undici cannot send Node's FormData (a file upload
      // fails with "action is not a function"; nodejs/undici#5520), fetch and FormData match.
      makeRequest: (url, init) => fetch(url, init as RequestInit),
    }).setToken(config.bot_token);
    this.rest.on('rateLimited', (info) =>
      log.info('discord asked to slow down; waiting', {
        route: info.route,
        retry_after_ms: info.retryAfter,
      }),
    );
  }

  async run(events: AdapterEvents): Promise<void> {
    const signal = this.abort.signal;
    let me: z.infer<typeof dcMe>;
    try {
      me = dcMe.parse(await this.rest.get('/users/@me', { signal }));
    } catch (err) {
      if (signal.aborted) return;
      throw new PlatformError(`Discord did not accept the bot: ${reason(err)}`);
    }
    this.me = { id: me.id, username: me.username };
    const gatewayUrl = this.config.gateway_url;
    const manager = new (class extends WebSocketManager {
      // A configured gateway (a local test server, a proxy) replaces the one GET /gateway/bot names.
      override async fetchGatewayInformation(force?: boolean) {
        const info = await super.fetchGatewayInformation(force);
        return gatewayUrl ? { ...info, url: gatewayUrl.replace(/\/+$/, '') } : info;
      }
    })({
      token: this.config.bot_token,
      intents: INTENTS,
      rest: this.rest,
      shardCount: 1,
      retrieveSessionInfo: () => this.session,
      updateSessionInfo: (_shard, info) => {
        this.session = info;
      },
    });
    this.manager = manager;
    let fatal: (err: Error) => void = () => {};
    const failed = new Promise<never>((_, reject) => (fatal = reject));
    failed.catch(() => undefined);
    let lastSocketError = '';
    manager.on('error', (err) =>
      fatal(
        new PlatformError(
          `Discord closed the gateway: ${err.message}${/authentication/i.test(err.message) ? ' (the bot token was refused)' : /intents/i.test(err.message) ? ' (turn the intents on in the Developer Portal)' : ''}`,
        ),
      ),
    );
    manager.on('socketError', (err) => (lastSocketError = err.message));
    manager.on('resumed', () => log.info('discord gateway resumed'));
    manager.on('dispatch', (payload) => {
      const handled = (p: Promise<void>) =>
        p.catch((err: Error) =>
          log.warn('discord event not handled', { event: payload.t, error: err.message }),
        );
      // A button press must be acknowledged within 3 s: it does not wait behind a message still being handled.
      if (payload.t === 'INTERACTION_CREATE')
        void handled(this.dispatch(payload.t, payload.d, events));
      else this.chain = handled(this.chain.then(() => this.dispatch(payload.t, payload.d, events)));
    });
    const stopped = new Promise<void>((resolve) =>
      signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PlatformError(
              `the Discord gateway did not answer within ${CONNECT_TIMEOUT_MS / 1000} s${lastSocketError ? ` (${lastSocketError})` : ''}`,
            ),
          ),
        CONNECT_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([manager.connect(), failed, timeout, stopped]);
    } catch (err) {
      if (signal.aborted) return;
      throw err instanceof PlatformError
        ? err
        : new PlatformError(`could not connect to the Discord gateway: ${reason(err)}`);
    } finally {
      clearTimeout(timer);
    }
    if (signal.aborted) return;
    events.connected(`@${me.username}`);
    await Promise.race([stopped, failed]);
  }

  private async dispatch(type: string, data: unknown, events: AdapterEvents): Promise<void> {
    if (type === 'MESSAGE_CREATE') {
      const m = dcMessage.safeParse(data);
      if (m.success) await this.onMessage(m.data, events);
    } else if (type === 'INTERACTION_CREATE') {
      const i = dcInteraction.safeParse(data);
      if (i.success) await this.onInteraction(i.data, events);
    }
  }

  private async onMessage(m: z.infer<typeof dcMessage>, events: AdapterEvents): Promise<void> {
    const me = this.me;
    if (!me || m.author.bot || m.webhook_id || m.author.id === me.id) return;
    let text = m.content;
    let chatTitle: string | undefined;
    if (m.guild_id) {
      // In a server only what addresses the bot reaches it (each sender still passes the
      // allowed_users / pairing check on their own); the mention itself is not for the model.
      const mentioned = m.mentions.some((u) => u.id === me.id);
      const replied = m.referenced_message?.author.id === me.id;
      if (!mentioned && !replied) return;
      text = text.replaceAll(`<@${me.id}>`, ' ').replaceAll(`<@!${me.id}>`, ' ');
      // Without the privileged intent a reply that does not ping the bot has no text: nothing to answer.
      if (!text.trim() && m.attachments.length === 0) return;
      chatTitle = await this.channelTitle(m.channel_id);
    }
    // Other people mentioned read as @name, not as <@id>.
    for (const u of m.mentions)
      text = text
        .replaceAll(`<@${u.id}>`, `@${nameOf(u)}`)
        .replaceAll(`<@!${u.id}>`, `@${nameOf(u)}`);
    text = text.replace(/[ \t]{2,}/g, ' ').trim();
    const files: InboundFile[] = m.attachments.map((a) => ({
      ref: a.url,
      name: a.filename,
      ...(a.content_type ? { mime: a.content_type } : {}),
      ...(a.size === undefined ? {} : { size: a.size }),
    }));
    const msg: InboundMessage = {
      platform: 'discord',
      chatId: m.channel_id,
      userId: m.author.id,
      name: nameOf(m.author),
      text,
      msgKey: m.id,
      ...(chatTitle ? { chatTitle } : {}),
      ...(files.length ? { files } : {}),
    };
    await events.message(msg);
  }

  private async onInteraction(
    i: z.infer<typeof dcInteraction>,
    events: AdapterEvents,
  ): Promise<void> {
    const user = i.user ?? i.member?.user;
    if (i.type !== 3 || !user || !i.channel_id) return; // only button presses are svc's
    await events.message({
      platform: 'discord',
      chatId: i.channel_id,
      userId: user.id,
      name: nameOf(user),
      text: '',
      msgKey: `i${i.id}`,
      buttonData: i.data?.custom_id ?? '',
      buttonQueryId: `${i.id}:${i.token}`,
      ...(i.message ? { buttonMessageId: i.message.id } : {}),
    });
  }

  /** A server channel's name for the chat's title; its id when Discord will not say. */
  private async channelTitle(channelId: string): Promise<string> {
    const known = this.channelNames.get(channelId);
    if (known) return known;
    let title = `channel ${channelId}`;
    try {
      const c = dcChannel.parse(
        await this.rest.get(`/channels/${channelId}`, { signal: this.abort.signal }),
      );
      if (c.name) title = `#${c.name}`;
    } catch (err) {
      log.info('discord channel name not available', { error: reason(err) });
    }
    this.channelNames.set(channelId, title);
    return title;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const m = this.manager;
    this.manager = undefined;
    // A peer that never answers the close frame does not hold the worker's shutdown up.
    await Promise.race([
      m?.destroy({ code: 1000, reason: 'svc stopped the adapter' }),
      new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref()),
    ]);
    this.rest.clearHashSweeper();
    this.rest.clearHandlerSweeper();
  }

  /** Long text goes as several messages, split on a natural boundary; buttons ride on the last. */
  async sendText(
    chatId: string,
    text: string,
    opts: { buttons?: Button[]; plain?: boolean } = {},
  ): Promise<string | null> {
    const pieces = splitText(text, TEXT_CAP);
    let id: string | null = null;
    for (const [i, piece] of pieces.entries()) {
      const components =
        opts.buttons?.length && i === pieces.length - 1 ? actionRows(opts.buttons) : undefined;
      const sent = await this.withPlainFallback(piece, (content) =>
        this.rest.post(`/channels/${ids(chatId)}/messages`, {
          body: { content, allowed_mentions: { parse: [] }, ...(components ? { components } : {}) },
        }),
      );
      id = dcSent.parse(sent).id;
    }
    return id;
  }

  /** The full text each time; any buttons on the message go (an answered question keeps none). */
  async editText(chatId: string, messageId: string, text: string): Promise<void> {
    await this.withPlainFallback(text.slice(0, TEXT_CAP), (content) =>
      this.rest.patch(`/channels/${ids(chatId)}/messages/${ids(messageId)}`, {
        body: { content, allowed_mentions: { parse: [] }, components: [] },
      }),
    );
  }

  async sendFile(chatId: string, path: string, name: string): Promise<string | null> {
    const size = (await stat(path)).size;
    if (size > UPLOAD_CAP)
      throw new PlatformError(
        `${name} is ${Math.round(size / 1024 / 1024)} MiB; Discord takes at most 100 MiB in one upload`,
      );
    const fh = await open(path);
    let data: Buffer;
    try {
      data = await fh.readFile();
    } finally {
      await fh.close();
    }
    try {
      const sent = await this.rest.post(`/channels/${ids(chatId)}/messages`, {
        files: [{ name, data }],
        body: { attachments: [{ id: 0, filename: name }], allowed_mentions: { parse: [] } },
      });
      return dcSent.parse(sent).id;
    } catch (err) {
      throw new PlatformError(reason(err));
    }
  }

  /** An attachment's bytes, from Discord's CDN (or the configured API's own host) only. */
  async downloadFile(file: InboundFile): Promise<AsyncIterable<Uint8Array>> {
    let url: URL;
    try {
      url = new URL(file.ref);
    } catch {
      throw new PlatformError('the attachment has no valid address');
    }
    const cdn = url.protocol === 'https:' && CDN_HOSTS.has(url.hostname);
    if (!cdn && url.origin !== this.apiOrigin)
      throw new PlatformError(
        `attachments are fetched from Discord's CDN only, not ${url.hostname}`,
      );
    const res = await fetch(url, { signal: this.abort.signal, redirect: 'error' }).catch(
      (err: Error) => {
        throw new PlatformError(
          `the attachment could not be fetched from Discord (${err.message})`,
        );
      },
    );
    if (!res.ok || !res.body)
      throw new PlatformError(`Discord answered ${res.status} for the attachment`);
    return res.body;
  }

  async typing(chatId: string): Promise<void> {
    if (snowflake.safeParse(chatId).success)
      await this.rest.post(`/channels/${chatId}/typing`).catch(() => undefined);
  }

  /** Acknowledges a press without a new message (DEFERRED_UPDATE_MESSAGE); the question is edited with the answer after. */
  async answerButton(queryId: string): Promise<void> {
    const [id, token] = queryId.split(':');
    if (!id || !token) return;
    const route: RouteLike = `/interactions/${id}/${token}/callback`;
    await this.rest
      .post(route, { body: { type: 6 }, auth: false })
      .catch((err: unknown) =>
        log.warn('discord did not take the button acknowledgement', { error: reason(err) }),
      );
  }

  /** Discord shows Markdown itself; text it refuses (an invalid form body) goes again as plain text. */
  private async withPlainFallback<T>(
    text: string,
    send: (content: string) => Promise<T>,
  ): Promise<T> {
    try {
      try {
        return await send(text);
      } catch (err) {
        if (!(err instanceof DiscordAPIError && err.status === 400 && err.code === 50035))
          throw err;
        const plain = markdownToPlain(text).slice(0, TEXT_CAP);
        if (plain === text) throw err;
        return await send(plain);
      }
    } catch (err) {
      throw new PlatformError(reason(err));
    }
  }
}

/** A channel or message id as it goes into a REST path: Discord's ids are digits, anything else is refused. */
function ids(id: string): string {
  if (!snowflake.safeParse(id).success)
    throw new PlatformError(
      `"${id.slice(0, 40)}" is not a Discord id (a channel id is 17-20 digits: Developer Mode on, right-click the channel → Copy Channel ID)`,
    );
  return id;
}

/** Buttons in rows of five (Discord's limit), each a secondary (grey) button. */
function actionRows(buttons: Button[]) {
  const rows = [];
  for (let i = 0; i < buttons.length; i += 5) {
    rows.push({
      type: 1,
      components: buttons
        .slice(i, i + 5)
        .map((b) => ({ type: 2, style: 2, label: b.label.slice(0, 80), custom_id: b.data })),
    });
  }
  return rows;
}

/** Discord's own words for a failure (its messages name the status and the error, never the token). */
function reason(err: unknown): string {
  if (err instanceof DiscordAPIError)
    return err.message.startsWith(`${err.status}:`) ? err.message : `${err.status} ${err.message}`;
  if (err instanceof RateLimitError)
    return `rate limited for ${Math.round(err.retryAfter / 1000)} s`;
  if (err instanceof HTTPError) return `${err.status} ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
