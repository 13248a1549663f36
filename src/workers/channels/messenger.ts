import { writeFileAtomic } from '../../shared/atomic-write.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { MessengerConfig } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { Adapter, AdapterEvents } from './adapter.js';
import { PlatformError } from './adapter.js';
import { markdownToPlain, splitText } from './format.js';
import { IlinkClient, IlinkError, ILINK_RATE_LIMITED, ILINK_SESSION_EXPIRED, type IlinkMessage } from './ilink.js';

/** What the QR login leaves behind (0600 under $SVC_HOME/channels); never in a response. */
export const credentialsSchema = z.object({ token: z.string().min(1), base_url: z.string(), account_id: z.string(), user_id: z.string(), saved_at: z.string() });
export type MessengerCredentials = z.infer<typeof credentialsSchema>;

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

/**
 * Context tokens: every outbound message must carry the user's latest one, which only arrives on
 * their messages. Written through to a 0600 file so a restarted worker (or a cron delivery) can
 * still reach a user who wrote before.
 */
export class ContextTokens {
  private readonly map: Record<string, string>;
  constructor(private readonly file: string) {
    let m: Record<string, string> = {};
    try {
      m = z.record(z.string(), z.string()).parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      // none yet
    }
    this.map = m;
  }
  get(user: string): string | undefined {
    return this.map[user];
  }
  set(user: string, token: string): void {
    if (this.map[user] === token) return;
    this.map[user] = token;
    writeFileAtomic(this.file, JSON.stringify(this.map));
  }
}

/** The text of an inbound message; media the bot cannot read yet become a note. */
function textOf(m: IlinkMessage): string {
  return m.item_list
    .map((i) => (i.type === 1 ? (i.text_item?.text ?? '') : i.type === 2 ? '[image]' : i.type === 3 ? '[voice]' : i.type === 4 ? `[file: ${i.file_item?.file_name ?? 'file'}]` : i.type === 5 ? '[video]' : ''))
    .filter(Boolean)
    .join('\n');
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
    _config: MessengerConfig,
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
        if (err instanceof IlinkError && (err.code === ILINK_SESSION_EXPIRED || err.code === 401)) throw new PlatformError('the WeChat login expired; scan a new QR code (POST /api/channels/messenger/login with {"force": true})');
        failures++;
        if (failures >= 5) throw new PlatformError(`iLink keeps failing: ${(err as Error).message}`);
        log.warn('iLink getupdates failed; trying again', { error: (err as Error).message, failures });
        await sleep(Math.min(30_000, 5000 * failures), signal);
        continue;
      }
      for (const m of batch.msgs) {
        if (m.message_type !== 1 || !m.from_user_id || !m.context_token) continue;
        this.contexts.set(m.from_user_id, m.context_token);
        const key = String(m.message_id ?? m.seq ?? `${m.from_user_id}:${m.create_time_ms ?? ''}:${textOf(m)}`);
        await events
          .message({ platform: 'messenger', chatId: m.from_user_id, userId: m.from_user_id, name: m.from_user_id, text: textOf(m), msgKey: key })
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
    if (!token) throw new PlatformError(`no conversation with ${chatId} yet: WeChat lets a bot write only to users who wrote to it first`);
    let last: string | null = null;
    for (const piece of splitText(markdownToPlain(text), this.textCap)) last = await this.queue(() => this.client.sendText(chatId, token, piece));
    return last;
  }

  async editText(): Promise<void> {
    throw new PlatformError('WeChat messages cannot be edited');
  }

  async sendFile(): Promise<string | null> {
    throw new PlatformError('sending files to WeChat is not supported yet');
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
    const p = (this.typingChain.get(chatId) ?? Promise.resolve()).then(() => this.sendTyping(chatId, status));
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
          const retry = err instanceof IlinkError && (err.code === ILINK_RATE_LIMITED || err.code === 0) && attempt < RETRY_MS.length;
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
