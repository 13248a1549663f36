import { SocketModeClient } from '@slack/socket-mode';
import { ErrorCode, LogLevel, WebClient, type Logger } from '@slack/web-api';
import { z } from 'zod';
import type { SlackConfig } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { Adapter, AdapterEvents, Button, InboundFile, InboundMessage } from './adapter.js';
import { PlatformError } from './adapter.js';
import { splitText } from './format.js';
import { escapeSlack, markdownToMrkdwn } from './slack-format.js';

/** What svc reads of an Events API event; anything else in it is ignored. */
const slackFile = z.object({
  id: z.string(),
  name: z.string().optional(),
  title: z.string().optional(),
  mimetype: z.string().optional(),
  size: z.number().int().nonnegative().optional(),
  url_private_download: z.string().optional(),
  url_private: z.string().optional(),
});
const slackEvent = z.object({
  type: z.string(),
  subtype: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().min(1),
  thread_ts: z.string().optional(),
  channel: z.string().min(1),
  channel_type: z.string().optional(),
  files: z.array(slackFile).optional(),
});
const eventsApiBody = z.object({ event: slackEvent });
/** A button press (the `interactive` envelope's block_actions payload). */
const blockActions = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string(), name: z.string().optional(), username: z.string().optional() }),
  channel: z.object({ id: z.string() }).optional(),
  container: z
    .object({ channel_id: z.string().optional(), message_ts: z.string().optional() })
    .optional(),
  message: z.object({ ts: z.string(), thread_ts: z.string().optional() }).optional(),
  trigger_id: z.string().optional(),
  actions: z
    .array(
      z.object({
        action_id: z.string(),
        value: z.string().optional(),
        action_ts: z.string().optional(),
      }),
    )
    .min(1),
});
/** A slash command the app registered (svc's /new, /stop, /status, /help), in a direct message. */
const slashCommand = z.object({
  command: z.string().min(2),
  text: z.string().default(''),
  user_id: z.string(),
  user_name: z.string().optional(),
  channel_id: z.string(),
  trigger_id: z.string().optional(),
});
const authTest = z.object({
  user: z.string().optional(),
  user_id: z.string(),
  team: z.string().optional(),
});
const userInfo = z.object({
  user: z.object({
    name: z.string().optional(),
    real_name: z.string().optional(),
    profile: z
      .object({ display_name: z.string().optional(), real_name: z.string().optional() })
      .optional(),
  }),
});
const posted = z.object({ ts: z.string() });
const uploaded = z.object({
  files: z.array(z.object({ files: z.array(z.object({ id: z.string() })).optional() })),
});
/** What the client library hands over for each envelope. */
interface Envelope {
  ack: () => Promise<void>;
  type: string;
  envelope_id?: string;
  body: unknown;
}

const MAX_429_RETRIES = 3;
/** Slack's advice: keep a message's text under 4,000 characters (longer is truncated). */
const TEXT_CAP = 3900;
/** A section block's text holds 3,000 characters: a message with buttons is split shorter. */
const SECTION_CAP = 3000;
const CONNECT_TIMEOUT_MS = 30_000;
/** Connecting again after this many failures in a row is left to the adapter host (with its backoff). */
const MAX_CONNECT_FAILURES = 4;
/** Errors of apps.connections.open that retrying cannot fix. */
const FATAL_AUTH = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'user_removed_from_team',
  'team_disabled',
  'not_allowed_token_type',
  'missing_scope',
]);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * A chat is a channel (a direct message), or a thread in one (`C0…:1712345678.000100`): in a
 * channel svc answers in the thread of the message that mentioned it, and that thread is the
 * chat's session; a direct message is one session, its threads each a chat of their own.
 */
const chatOf = (channel: string, threadTs?: string) =>
  threadTs ? `${channel}:${threadTs}` : channel;
function parseChat(chatId: string): { channel: string; thread?: string } {
  const i = chatId.indexOf(':');
  return i < 0 ? { channel: chatId } : { channel: chatId.slice(0, i), thread: chatId.slice(i + 1) };
}
const isDm = (channel: string) => channel.startsWith('D');

/** Slack's text back to what the user typed: entities unescaped, links as their address. */
const fromSlack = (s: string) =>
  s
    .replace(/<(https?:\/\/[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<(https?:\/\/[^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/**
 * Slack over Socket Mode (@slack/socket-mode: an outbound WebSocket, no public URL) and the Web
 * API (@slack/web-api). Every envelope is acknowledged as it arrives; direct messages and
 * mentions reach the agent, replies stream by chat.update, approvals are Block Kit buttons, files
 * go through the external upload API. Rate limits (429 with Retry-After) are waited out.
 */
export class SlackAdapter implements Adapter {
  readonly platform = 'slack' as const;
  readonly canEdit = true;
  readonly hasButtons = true;
  readonly textCap = TEXT_CAP;
  private readonly web: WebClient;
  private readonly apiUrl: URL;
  private readonly abort = new AbortController();
  private socket: SocketModeClient | undefined;
  /** The bot's own user id (its messages are not for it; its mention is taken out). */
  private me = '';
  private readonly names = new Map<string, string>();
  /** Envelopes are handled one after another, in the order Slack sent them. */
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly config: SlackConfig) {
    const base = config.api_base_url.endsWith('/')
      ? config.api_base_url
      : `${config.api_base_url}/`;
    this.apiUrl = new URL(base);
    // 429s are handled here (see call) so a long Retry-After cannot hold a send for minutes.
    this.web = new WebClient(config.bot_token, {
      slackApiUrl: base,
      logger: libraryLogger,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 2, minTimeout: 500, maxTimeout: 2000 },
      timeout: 30_000,
    });
  }

  async run(events: AdapterEvents): Promise<void> {
    const signal = this.abort.signal;
    let auth: z.infer<typeof authTest>;
    try {
      auth = authTest.parse(await this.call(() => this.web.auth.test()));
    } catch (err) {
      if (signal.aborted) return;
      throw new PlatformError(`Slack did not accept the bot token: ${(err as Error).message}`);
    }
    this.me = auth.user_id;
    let wake: () => void = () => {};
    signal.addEventListener('abort', () => wake(), { once: true });
    let announced = false;
    let failures = 0;
    while (!signal.aborted) {
      // A client per connection: a late event of an old one cannot end the next.
      const socket = new SocketModeClient({
        appToken: this.config.app_token,
        logger: libraryLogger,
        // Reconnecting is done here, where a failure can be counted and reported.
        autoReconnectEnabled: false,
        clientOptions: {
          slackApiUrl: this.apiUrl.href,
          retryConfig: { retries: 1, minTimeout: 500, maxTimeout: 1000 },
          timeout: 30_000,
        },
      });
      this.socket = socket;
      socket.on('slack_event', (e: Envelope) => this.onEnvelope(e, events));
      const ended = new Promise<void>((resolve) => {
        wake = resolve;
        socket.once('disconnected', () => resolve());
      });
      try {
        await this.connect(socket);
      } catch (err) {
        socket.removeAllListeners('slack_event');
        if (signal.aborted) return;
        const code = platformCode(err);
        if (code && FATAL_AUTH.has(code))
          throw new PlatformError(`Slack refused the app token: ${code}`);
        if (++failures >= MAX_CONNECT_FAILURES)
          throw new PlatformError(`could not connect to Slack's Socket Mode: ${reason(err)}`);
        log.warn('slack socket mode did not connect; trying again', {
          error: reason(err),
          failures,
        });
        await sleep(2000 * failures, signal);
        continue;
      }
      failures = 0;
      if (!announced)
        events.connected(`@${auth.user ?? auth.user_id}${auth.team ? ` (${auth.team})` : ''}`);
      else log.info('slack socket mode reconnected');
      announced = true;
      await ended;
      socket.removeAllListeners('slack_event');
      if (!signal.aborted) log.info('slack socket mode connection closed; connecting again');
    }
  }

  /** One Socket Mode connection: apps.connections.open, then the WebSocket until Slack's hello. */
  private async connect(socket: SocketModeClient): Promise<void> {
    const started = socket.start();
    started.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no hello from Slack in ${CONNECT_TIMEOUT_MS / 1000} s`)),
        CONNECT_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([started, timeout]);
    } catch (err) {
      void socket.disconnect().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private onEnvelope(e: Envelope, events: AdapterEvents): void {
    // Slack wants each envelope acknowledged within 3 s, or it sends it again: at once, before
    // the work (a redelivery would be recognised by its message key anyway).
    e.ack().catch((err: Error) =>
      log.warn('slack: an envelope could not be acknowledged', {
        type: e.type,
        error: err.message,
      }),
    );
    this.chain = this.chain
      .then(async () => {
        const m = await this.toMessage(e);
        if (m) await events.message(m);
      })
      .catch((err: Error) =>
        log.warn('slack event not handled', { type: e.type, error: err.message }),
      );
  }

  /** An envelope as a message for the agent, or undefined when it is not one. */
  private async toMessage(e: Envelope): Promise<InboundMessage | undefined> {
    if (e.type === 'events_api') {
      const parsed = eventsApiBody.safeParse(e.body);
      if (!parsed.success) return undefined;
      const ev = parsed.data.event;
      if (!ev.user || ev.bot_id || ev.user === this.me) return undefined;
      if (ev.subtype !== undefined && ev.subtype !== 'file_share') return undefined; // edits, joins, deletions…
      let chatId: string;
      if (ev.type === 'message' && ev.channel_type === 'im')
        chatId = chatOf(ev.channel, ev.thread_ts);
      // In a channel only a mention reaches the agent, answered in its thread (a direct
      // message's mention also comes as a message.im event: that one is taken).
      else if (ev.type === 'app_mention' && !isDm(ev.channel))
        chatId = chatOf(ev.channel, ev.thread_ts ?? ev.ts);
      else return undefined;
      const text = fromSlack((ev.text ?? '').split(`<@${this.me}>`).join(''))
        .replace(/[ \t]{2,}/g, ' ')
        .trim();
      const files = (ev.files ?? []).flatMap((f): InboundFile[] => {
        const ref = f.url_private_download ?? f.url_private;
        return ref
          ? [
              {
                ref,
                name: f.name ?? f.title ?? f.id,
                ...(f.mimetype ? { mime: f.mimetype } : {}),
                ...(f.size === undefined ? {} : { size: f.size }),
              },
            ]
          : [];
      });
      return {
        platform: 'slack',
        chatId,
        userId: ev.user,
        name: await this.nameOf(ev.user),
        text,
        msgKey: `${ev.channel}:${ev.ts}`,
        ...(files.length ? { files } : {}),
      };
    }
    if (e.type === 'interactive') {
      const parsed = blockActions.safeParse(e.body);
      if (!parsed.success) return undefined;
      const p = parsed.data;
      const channel = p.channel?.id ?? p.container?.channel_id;
      const action = p.actions[0]!;
      if (!channel) return undefined;
      const messageTs = p.message?.ts ?? p.container?.message_ts;
      const key = `act:${action.action_ts ?? p.trigger_id ?? e.envelope_id ?? ''}`;
      return {
        platform: 'slack',
        chatId: chatOf(channel, p.message?.thread_ts),
        userId: p.user.id,
        name: await this.nameOf(p.user.id, p.user.name ?? p.user.username),
        text: '',
        msgKey: key,
        buttonData: action.value ?? '',
        buttonQueryId: key,
        ...(messageTs ? { buttonMessageId: messageTs } : {}),
      };
    }
    if (e.type === 'slash_commands') {
      const parsed = slashCommand.safeParse(e.body);
      if (!parsed.success || !isDm(parsed.data.channel_id)) return undefined;
      const c = parsed.data;
      return {
        platform: 'slack',
        chatId: c.channel_id,
        userId: c.user_id,
        name: await this.nameOf(c.user_id, c.user_name),
        text: `${c.command} ${c.text}`.trim(),
        msgKey: `cmd:${c.trigger_id ?? e.envelope_id ?? ''}`,
      };
    }
    return undefined; // hello, disconnect and others are the library's
  }

  /** A member's display name (users.info, needs users:read), or their id when Slack will not say. */
  private async nameOf(userId: string, fallback?: string): Promise<string> {
    const known = this.names.get(userId);
    if (known) return known;
    let name = fallback ?? userId;
    try {
      const u = userInfo.parse(await this.call(() => this.web.users.info({ user: userId }))).user;
      name = u.profile?.display_name || u.profile?.real_name || u.real_name || u.name || name;
    } catch (err) {
      log.info('slack: no name for a member', { error: (err as Error).message });
    }
    this.names.set(userId, name);
    return name;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    // The close handshake can take a while; the adapter is done with it either way.
    void this.socket?.disconnect().catch(() => undefined);
  }

  /** Long text goes as several messages in the chat's thread; buttons (Block Kit) ride on the last. */
  async sendText(
    chatId: string,
    text: string,
    opts: { buttons?: Button[]; plain?: boolean } = {},
  ): Promise<string | null> {
    const { channel, thread } = parseChat(chatId);
    const buttons = opts.buttons ?? [];
    const pieces = splitText(text, buttons.length ? SECTION_CAP : this.textCap);
    let ts: string | null = null;
    for (const [i, piece] of pieces.entries()) {
      const last = i === pieces.length - 1;
      const sent = await this.withMrkdwn(piece, opts.plain === true, (body, mrkdwn) =>
        this.web.chat.postMessage({
          channel,
          text: body,
          unfurl_links: false,
          unfurl_media: false,
          ...(thread ? { thread_ts: thread } : {}),
          ...(last && buttons.length
            ? {
                blocks: [
                  {
                    type: 'section',
                    text: { type: mrkdwn ? 'mrkdwn' : 'plain_text', text: mrkdwn ? body : piece },
                  },
                  actions(buttons),
                ],
              }
            : {}),
        }),
      );
      ts = posted.parse(sent).ts;
    }
    return ts;
  }

  /** Replaces a message's text; its buttons (blocks) go (Slack keeps blocks an update leaves out). */
  async editText(
    chatId: string,
    messageId: string,
    text: string,
    opts: { plain?: boolean } = {},
  ): Promise<void> {
    const { channel } = parseChat(chatId);
    await this.withMrkdwn(text, opts.plain === true, (body) =>
      this.web.chat.update({ channel, ts: messageId, text: body, blocks: [] }),
    );
  }

  /** files.getUploadURLExternal, the upload, files.completeUploadExternal (the library's uploadV2). */
  async sendFile(chatId: string, path: string, name: string): Promise<string | null> {
    const { channel, thread } = parseChat(chatId);
    const upload = () =>
      thread
        ? this.web.filesUploadV2({
            channel_id: channel,
            thread_ts: thread,
            file: path,
            filename: name,
          })
        : this.web.filesUploadV2({ channel_id: channel, file: path, filename: name });
    const res = uploaded.safeParse(await this.call(upload));
    return res.success ? (res.data.files[0]?.files?.[0]?.id ?? null) : null;
  }

  /** A file a user shared, from its url_private with the bot token (only ever sent to Slack itself). */
  async downloadFile(file: InboundFile): Promise<AsyncIterable<Uint8Array>> {
    let url: URL;
    try {
      url = new URL(file.ref);
    } catch {
      throw new PlatformError('Slack gave no usable address for the file');
    }
    const host = url.hostname;
    const trusted =
      url.origin === this.apiUrl.origin || host === 'slack.com' || host.endsWith('.slack.com');
    if (!trusted) throw new PlatformError(`the file is not on Slack (${host}); it was not fetched`);
    const res = await fetch(url, {
      headers: { Authorization: `Bearer ${this.config.bot_token}` },
      signal: this.abort.signal,
    }).catch((err: Error) => {
      throw new PlatformError(`the file could not be fetched from Slack (${err.message})`);
    });
    if (!res.ok || !res.body) throw new PlatformError(`Slack answered ${res.status} for the file`);
    // Without the files:read scope Slack answers its sign-in page instead of the file.
    if (
      (res.headers.get('content-type') ?? '').includes('text/html') &&
      !(file.mime ?? '').includes('html')
    ) {
      await res.body.cancel().catch(() => undefined);
      throw new PlatformError(
        'Slack answered a sign-in page instead of the file: give the app the files:read scope and reinstall it',
      );
    }
    return res.body;
  }

  /** Slack has no typing indicator for bots outside its assistant threads. */
  async typing(): Promise<void> {}

  /** The press was acknowledged with its envelope already. */
  async answerButton(): Promise<void> {}

  /**
   * mrkdwn rendered from Markdown when it fits; a rendering Slack refuses is sent as the plain
   * text (escaped only). Never `mrkdwn: false`: a streamed message starts plain and is then
   * updated to its rendered form, which chat.update cannot switch back on.
   */
  private async withMrkdwn<T>(
    text: string,
    plain: boolean,
    send: (body: string, mrkdwn: boolean) => Promise<T>,
  ): Promise<T> {
    if (!plain) {
      const rendered = markdownToMrkdwn(text);
      if (rendered.length <= TEXT_CAP + 100) {
        try {
          return await this.call(() => send(rendered, true));
        } catch (err) {
          if (
            !(
              err instanceof PlatformError &&
              /^(msg_too_long|invalid_blocks|invalid_arguments)\b/.test(err.message)
            )
          )
            throw err;
          log.info('slack refused the formatted text; sending it plain', { error: err.message });
        }
      }
    }
    return this.call(() => send(escapeSlack(text), false));
  }

  /** A Web API call with rate limits waited out (Retry-After, at most 30 s a time, three times); failures as PlatformError with Slack's reason. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const wait = rateLimitWait(err);
        if (wait === undefined || attempt >= MAX_429_RETRIES || this.abort.signal.aborted)
          throw new PlatformError(reason(err));
        log.info('slack asked to slow down; waiting', { retry_after_s: wait });
        await sleep(wait * 1000, this.abort.signal);
      }
    }
  }
}

function actions(buttons: Button[]) {
  return {
    type: 'actions',
    elements: buttons.slice(0, 25).map((b, i) => ({
      type: 'button',
      action_id: `svc_${i}`,
      text: { type: 'plain_text', text: b.label.slice(0, 75), emoji: true },
      value: b.data,
    })),
  };
}

const codedError = z.object({ code: z.string() });
const platformData = z.object({
  data: z.object({ error: z.string(), needed: z.string().optional() }),
});

function platformCode(err: unknown): string | undefined {
  if (codedError.safeParse(err).data?.code !== ErrorCode.PlatformError) return undefined;
  return platformData.safeParse(err).data?.data.error;
}

function rateLimitWait(err: unknown): number | undefined {
  if (codedError.safeParse(err).data?.code !== ErrorCode.RateLimitedError) return undefined;
  const s = z.object({ retryAfter: z.number() }).safeParse(err).data?.retryAfter ?? 1;
  return Math.min(30, Math.max(1, s));
}

/** Slack's own words for a failure: its error code (channel_not_found…), never a token. */
function reason(err: unknown): string {
  if (err instanceof PlatformError) return err.message;
  const code = codedError.safeParse(err).data?.code;
  if (code === ErrorCode.PlatformError) {
    const d = platformData.safeParse(err).data?.data;
    if (d) return d.needed ? `${d.error} (needs the ${d.needed} scope)` : d.error;
  }
  if (code === ErrorCode.RateLimitedError) return 'ratelimited (Slack kept asking to slow down)';
  if (code === ErrorCode.HTTPError)
    return `HTTP ${z.object({ statusCode: z.number() }).safeParse(err).data?.statusCode ?? '?'}`;
  if (code === ErrorCode.RequestError)
    return `network error: ${z.object({ original: z.object({ message: z.string() }) }).safeParse(err).data?.original.message ?? (err as Error).message}`;
  return err instanceof Error ? err.message : String(err);
}

/** The Slack libraries' own log lines, warnings and errors only, into svc's log (which scrubs secrets). */
const libraryLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (...msg: unknown[]) => log.warn(`slack library: ${msg.map(String).join(' ')}`),
  error: (...msg: unknown[]) => log.warn(`slack library: ${msg.map(String).join(' ')}`),
  setLevel: () => {},
  getLevel: () => LogLevel.WARN,
  setName: () => {},
};
