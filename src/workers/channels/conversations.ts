import { z } from 'zod';
import { platformInfo, type PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import { log } from '../../shared/log.js';
import { IpcCallError, type Endpoint } from '../../shared/protocol/endpoint.js';
import { isTurnEnd } from '../../shared/protocol/event-names.js';
import type { ApprovalDecision } from '../../shared/protocol/ipc.js';
import {
  getChat,
  isApprovedUser,
  lastReplyText,
  setInboundFiles,
  setInboundReply,
  markInbound,
  openInbound,
  pairingFor,
  recordInbound,
  setChatSession,
  touchChat,
  type ChannelChat,
  type InboundFileRecord,
} from '../../shared/store/channels.js';
import type { Db } from '../../shared/store/db.js';
import { createSession, getSession, type Session } from '../../shared/store/sessions.js';
import { getTurnRow } from '../../shared/store/turns.js';
import { resolveAttachments } from '../../shared/store/uploads.js';
import { FileTooLarge, formatBytes, storeUpload } from '../../shared/upload-files.js';
import { ipcPublish } from '../../shared/ws-publish.js';
import type { Adapter, InboundMessage } from './adapter.js';
import {
  answerWord,
  approvalButtons,
  approvalQuestion,
  decisionLabel,
  parseButton,
} from './approval-text.js';
import { ReplyStream } from './reply-stream.js';

const HELP = [
  'Talk to the agent by sending a message. Commands:',
  '/new — start a fresh session for this chat',
  '/stop — stop the running turn',
  "/status — this chat's session and whether a turn runs",
  '/help — this list',
].join('\n');

const RESTARTING = 'svc is restarting; send that again in a moment.';

interface Watch {
  platform: PlatformName;
  chatId: string;
  sessionId: string;
  msgKey: string;
  stream: ReplyStream;
}

interface PendingAsk {
  approvalId: string;
  sessionId: string;
  question: string;
  messageId: string | null;
  /** The question's delivery, while it is on its way. */
  sent?: Promise<string | null>;
}

const eventData = z.object({ turn_id: z.string() }).loose();
type Data = z.infer<typeof eventData>;

export interface ConversationDeps {
  db: Db;
  endpoint: Endpoint;
  config: () => Config;
  /** $SVC_HOME/uploads: files sent to a bot are stored there as uploads. */
  uploadsDir: string;
  /** The running adapter of a platform, if any. */
  adapter: (platform: PlatformName) => Adapter | undefined;
}

/**
 * Who may talk, and what their messages become: a message from an allowed or paired user starts
 * a turn in the chat's session and the reply streams back; anyone else gets a pairing code and
 * nothing reaches the model. Every inbound message is recorded first, so a redelivery after a
 * crash is recognised and a message taken but not answered is picked up again.
 */
export class Conversations {
  /** Turns being answered, by turn id. */
  private readonly watches = new Map<string, Watch>();
  /** Events of sessions whose turn start is still on its way (the worker can publish first). */
  private readonly early = new Map<string, { type: string; data: Data }[]>();
  /** Messages that came while their session's turn (one this worker answers) ran: they go next, in order. */
  private readonly queued = new Map<
    string,
    { adapter: Adapter; chat: ChannelChat; msgKey: string; text: string; attachments: string[] }[]
  >();
  /** Approvals asked in a chat, by `platform:chat`. */
  private readonly asks = new Map<string, PendingAsk[]>();

  constructor(private readonly deps: ConversationDeps) {}

  allowed(platform: PlatformName, userId: string): boolean {
    const listed = this.deps.config().channels[platform]?.allowed_users ?? [];
    return listed.includes(userId) || isApprovedUser(this.deps.db, platform, userId);
  }

  async onMessage(adapter: Adapter, m: InboundMessage): Promise<void> {
    if (
      !recordInbound(this.deps.db, {
        platform: m.platform,
        msg_key: m.msgKey,
        chat_id: m.chatId,
        text: m.text,
        files: m.files ?? [],
      })
    )
      return; // seen before
    log.info('channel message', {
      platform: m.platform,
      chat: m.chatId,
      bytes: Buffer.byteLength(m.text),
      files: m.files?.length ?? 0,
    });
    const chat = touchChat(this.deps.db, {
      platform: m.platform,
      chat_id: m.chatId,
      user_id: m.userId,
      name: m.chatTitle ?? m.name,
    });
    const done = () => markInbound(this.deps.db, m.platform, m.msgKey, 'answered');
    if (!this.allowed(m.platform, m.userId)) {
      if (m.buttonQueryId) await adapter.answerButton?.(m.buttonQueryId);
      else {
        const p = pairingFor(this.deps.db, {
          platform: m.platform,
          user_id: m.userId,
          chat_id: m.chatId,
          name: m.name,
        });
        ipcPublish(this.deps.endpoint)('channels', 'channels.pairing', p);
        await adapter.sendText(
          m.chatId,
          `This agent is private. Your pairing code is ${p.code}. Ask its owner to approve it in svc (Channels); then send your message again.`,
          { plain: true },
        );
      }
      return done();
    }
    if (m.buttonData !== undefined) {
      await this.onButton(adapter, m);
      return done();
    }
    const text = m.text.trim();
    if (text.startsWith('/')) {
      await this.command(adapter, chat, text);
      return done();
    }
    // On a platform without buttons, the next message after a question answers it.
    const ask = adapter.hasButtons ? undefined : this.asks.get(`${m.platform}:${m.chatId}`)?.[0];
    if (ask) {
      await this.answer(adapter, m.platform, m.chatId, ask, answerWord(text));
      return done();
    }
    await this.take(adapter, chat, m.msgKey, text, m.files ?? []);
  }

  /**
   * A message for the agent: its files stored as uploads (kept with the recorded message as each
   * is stored), then the turn, with the files as its attachments.
   */
  private async take(
    adapter: Adapter,
    chat: ChannelChat,
    msgKey: string,
    text: string,
    files: InboundFileRecord[],
  ): Promise<void> {
    let attachments: string[] = [];
    if (files.length) {
      const got = await this.receiveFiles(adapter, msgKey, files);
      if (typeof got === 'string') {
        await adapter.sendText(chat.chat_id, got, { plain: true });
        return markInbound(this.deps.db, adapter.platform, msgKey, 'answered');
      }
      attachments = got.map((f) => f.upload);
      // A file without a caption still needs words for the model (and the API's non-empty rule).
      if (!text)
        return this.startTurn(
          adapter,
          chat,
          msgKey,
          `(sent ${got.map((f) => f.name).join(', ')})`,
          attachments,
        );
    }
    if (!text) {
      await adapter.sendText(chat.chat_id, 'Only text messages and files reach the agent.', {
        plain: true,
      });
      return markInbound(this.deps.db, adapter.platform, msgKey, 'answered');
    }
    await this.startTurn(adapter, chat, msgKey, text, attachments);
  }

  /**
   * Stores the files a user sent as uploads (as POST /api/upload does), so the turn gets them as
   * attachments like an API turn. A file over the cap (limits.upload_bytes, or what the platform
   * lets a bot fetch) is refused with a reply that says so: the answer is a string then.
   */
  private async receiveFiles(
    adapter: Adapter,
    msgKey: string,
    files: InboundFileRecord[],
  ): Promise<{ upload: string; name: string }[] | string> {
    const cap = Math.min(this.deps.config().limits.upload_bytes, adapter.fileCap ?? Infinity);
    const tooLarge = (name: string, size?: number) =>
      `${name} is too large${size === undefined ? '' : ` (${formatBytes(size)})`}: files up to ${formatBytes(cap)} reach the agent. Nothing was sent to it.`;
    const over = files.find((f) => f.upload === undefined && f.size !== undefined && f.size > cap);
    if (over) return tooLarge(over.name, over.size);
    const record = files.map((f) => ({ ...f }));
    const stored: { upload: string; name: string }[] = [];
    let bytes = 0;
    for (const f of record) {
      if (f.upload !== undefined) {
        stored.push({ upload: f.upload, name: f.name }); // stored before a restart
        continue;
      }
      if (!adapter.downloadFile)
        return `Files sent on ${platformInfo[adapter.platform].label} do not reach the agent yet; send the text instead.`;
      try {
        const u = await storeUpload(
          this.deps.db,
          this.deps.uploadsDir,
          await adapter.downloadFile(f),
          { filename: f.name, contentType: f.mime, maxBytes: cap },
        );
        f.upload = u.name;
        setInboundFiles(this.deps.db, adapter.platform, msgKey, record);
        stored.push({ upload: u.name, name: u.original_name });
        bytes += u.size;
      } catch (err) {
        if (err instanceof FileTooLarge) return tooLarge(f.name);
        log.warn('a file sent to the bot was not received', {
          platform: adapter.platform,
          error: (err as Error).message,
        });
        return `${f.name} could not be received (${(err as Error).message}); nothing was sent to the agent. Try again, or send it another way.`;
      }
    }
    log.info('channel files stored as uploads', {
      platform: adapter.platform,
      files: stored.length,
      bytes,
    });
    return stored;
  }

  /** Messages taken but not answered when the worker or adapter stopped: started again, or answered from the store. */
  async recover(adapter: Adapter): Promise<void> {
    for (const row of openInbound(this.deps.db, adapter.platform)) {
      const chat = getChat(this.deps.db, adapter.platform, row.chat_id);
      if (!chat) continue;
      if (row.status === 'received') {
        // Its files are on record (fetched again unless already stored): the turn gets them too.
        if (row.files.length) {
          await this.take(adapter, chat, row.msg_key, row.text.trim(), row.files).catch(
            (err: Error) => log.warn('could not resume a channel message', { error: err.message }),
          );
          continue;
        }
        // A file without words from before files were kept with the message: ask for it again.
        if (!row.text.trim()) {
          await adapter
            .sendText(
              row.chat_id,
              'svc restarted while receiving what you sent; send it again, please.',
              { plain: true },
            )
            .catch(() => undefined);
          markInbound(this.deps.db, adapter.platform, row.msg_key, 'answered');
          continue;
        }
        await this.startTurn(adapter, chat, row.msg_key, row.text).catch((err: Error) =>
          log.warn('could not resume a channel message', { error: err.message }),
        );
        continue;
      }
      if (!row.turn_id || !row.session_id || this.watches.has(row.turn_id)) continue;
      const turn = getTurnRow(this.deps.db, row.turn_id);
      const stream = new ReplyStream(
        adapter,
        row.chat_id,
        false,
        (id) => setInboundReply(this.deps.db, adapter.platform, row.msg_key, id),
        row.reply_id,
      );
      const watch: Watch = {
        platform: adapter.platform,
        chatId: row.chat_id,
        sessionId: row.session_id,
        msgKey: row.msg_key,
        stream,
      };
      if (!turn || turn.status === 'running') {
        this.watches.set(row.turn_id, watch); // its end is still to come
        continue;
      }
      await this.end(
        row.turn_id,
        watch,
        turn.status === 'completed'
          ? 'turn.completed'
          : turn.status === 'interrupted'
            ? 'turn.interrupted'
            : 'turn.failed',
        {
          turn_id: row.turn_id,
          reply: lastReplyText(this.deps.db, row.session_id),
          message: turn.error ?? '',
        },
      );
    }
  }

  /** A `/ws` event of some session; only the turns this worker answers are of interest. */
  async onEvent(topic: string, type: string, raw: unknown): Promise<void> {
    const parsed = eventData.safeParse(raw);
    if (!parsed.success) return;
    const data = parsed.data;
    const watch = this.watches.get(data.turn_id);
    if (!watch) {
      this.early.get(topic.slice('session:'.length))?.push({ type, data });
      return;
    }
    await this.apply(data.turn_id, watch, type, data);
  }

  private async apply(turnId: string, w: Watch, type: string, data: Data): Promise<void> {
    if (type === 'turn.text_delta' && typeof data.delta === 'string') w.stream.push(data.delta);
    else if (type === 'approval.requested') await this.ask(w, data);
    else if (type === 'approval.withdrawn')
      this.dropAsk(w.platform, w.chatId, String(data.approval_id));
    else if (isTurnEnd(type)) await this.end(turnId, w, type, data);
  }

  private async end(turnId: string, w: Watch, type: string, data: Data): Promise<void> {
    this.watches.delete(turnId);
    for (const a of this.asks.get(`${w.platform}:${w.chatId}`) ?? [])
      if (a.sessionId === w.sessionId) this.dropAsk(w.platform, w.chatId, a.approvalId);
    // A long reply comes cut in the event (issue 22); the turn's row has it whole.
    const reply =
      data.truncated === true
        ? (getTurnRow(this.deps.db, turnId)?.reply ?? '')
        : typeof data.reply === 'string'
          ? data.reply
          : '';
    let text: string;
    if (type === 'turn.completed')
      text = w.stream.sawStart && w.stream.seen.trim() ? w.stream.seen : reply;
    else if (type === 'turn.interrupted')
      text = `${w.stream.seen.trim() ? `${w.stream.seen}\n\n` : ''}(stopped${data.reason === 'restarted' ? ': svc restarted' : ''})`;
    else
      text = `${w.stream.seen.trim() ? `${w.stream.seen}\n\n` : ''}⚠️ The turn failed: ${typeof data.message === 'string' && data.message ? data.message : 'see the session in svc'}`;
    await w.stream.finish(text);
    markInbound(this.deps.db, w.platform, w.msgKey, 'answered');
    const next = this.queued.get(w.sessionId)?.shift();
    if (this.queued.get(w.sessionId)?.length === 0) this.queued.delete(w.sessionId);
    if (next)
      await this.startTurn(next.adapter, next.chat, next.msgKey, next.text, next.attachments);
  }

  private async startTurn(
    adapter: Adapter,
    chat: ChannelChat,
    msgKey: string,
    text: string,
    attachments: string[] = [],
  ): Promise<void> {
    const session = this.sessionOf(chat);
    if ([...this.watches.values()].some((w) => w.sessionId === session.id)) {
      this.queued.set(session.id, [
        ...(this.queued.get(session.id) ?? []),
        { adapter, chat, msgKey, text, attachments },
      ]);
      return;
    }
    this.early.set(session.id, []);
    let turnId: string;
    try {
      turnId = await this.requestTurn(session.id, text, attachments);
    } catch (err) {
      this.early.delete(session.id);
      const code = err instanceof IpcCallError ? err.code : '';
      const say =
        code === 'draining'
          ? RESTARTING
          : code === 'turn_in_progress'
            ? 'Still working on your previous message; wait for the reply, or send /stop.'
            : `That could not start: ${(err as Error).message}`;
      await adapter.sendText(chat.chat_id, say, { plain: true });
      markInbound(this.deps.db, adapter.platform, msgKey, 'answered');
      return;
    }
    markInbound(this.deps.db, adapter.platform, msgKey, 'started', {
      session_id: session.id,
      turn_id: turnId,
    });
    const watch: Watch = {
      platform: adapter.platform,
      chatId: chat.chat_id,
      sessionId: session.id,
      msgKey,
      stream: new ReplyStream(adapter, chat.chat_id, true, (id) =>
        setInboundReply(this.deps.db, adapter.platform, msgKey, id),
      ),
    };
    this.watches.set(turnId, watch);
    const early = this.early.get(session.id) ?? [];
    this.early.delete(session.id);
    for (const e of early)
      if (e.data.turn_id === turnId && this.watches.get(turnId) === watch)
        await this.apply(turnId, watch, e.type, e.data);
  }

  /**
   * Starts the turn. A worker that was still booting (timeout) or could not be had (unavailable)
   * is tried again twice: the supervisor has already withdrawn the turn it did not hand over.
   */
  private async requestTurn(
    sessionId: string,
    text: string,
    attachments: string[],
  ): Promise<string> {
    // This worker is where a channel turn comes in: its files are resolved here, once.
    const resolved = resolveAttachments(
      this.deps.db,
      { uploadsDir: this.deps.uploadsDir },
      attachments,
    );
    if ('missing' in resolved)
      throw new Error(`the file ${resolved.missing} is no longer in svc's uploads`);
    for (let attempt = 0; ; attempt++) {
      try {
        return (
          await this.deps.endpoint.request('turn.start', {
            session_id: sessionId,
            message: { text, attachments: resolved.attachments },
            origin: 'channel',
          })
        ).turn_id;
      } catch (err) {
        const code = err instanceof IpcCallError ? err.code : '';
        if (attempt >= 2 || (code !== 'timeout' && code !== 'unavailable')) throw err;
        log.warn('a channel turn did not start; trying again', { error: (err as Error).message });
        await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
      }
    }
  }

  /** The chat's session, made on its first message (or after /new, or when it was deleted). */
  private sessionOf(chat: ChannelChat): Session {
    const current = chat.session_id ? getSession(this.deps.db, chat.session_id) : undefined;
    return current ?? this.newSession(chat);
  }

  private newSession(chat: ChannelChat): Session {
    const platform = chat.platform as PlatformName;
    const s = createSession(this.deps.db, {
      title: `${platformInfo[platform].label} · ${chat.name}`.slice(0, 200),
      channel: platform,
    });
    setChatSession(this.deps.db, platform, chat.chat_id, s.id);
    ipcPublish(this.deps.endpoint)('sessions', 'session.created', s);
    return s;
  }

  private async command(adapter: Adapter, chat: ChannelChat, text: string): Promise<void> {
    const cmd = text.split(/\s+/)[0]!.toLowerCase().replace(/@.*$/, '');
    const reply = (t: string) => adapter.sendText(chat.chat_id, t, { plain: true });
    if (cmd === '/help' || cmd === '/start') return void (await reply(HELP));
    if (cmd === '/new') {
      const s = this.newSession(chat);
      return void (await reply(`New session started (${s.id}). The earlier one stays in svc.`));
    }
    const session = chat.session_id ? getSession(this.deps.db, chat.session_id) : undefined;
    if (cmd === '/stop') {
      if (!session) return void (await reply('Nothing is running.'));
      const r = await this.deps.endpoint
        .request('turn.interrupt', { session_id: session.id })
        .catch(() => ({ interrupted: false }));
      return void (await reply(r.interrupted ? 'Stopping.' : 'Nothing is running.'));
    }
    if (cmd === '/status') {
      if (!session) return void (await reply('No session yet: send a message to start one.'));
      const running = [...this.watches.values()].some((w) => w.sessionId === session.id);
      const model = session.model_id ?? this.deps.config().slots.default ?? 'none configured';
      return void (await reply(
        `Session "${session.title}" (${session.id})\nModel: ${model}\nMessages: ${session.message_count}\n${running ? 'A turn is running (/stop stops it).' : 'Idle.'}`,
      ));
    }
    await reply(`Unknown command ${cmd}. ${HELP}`);
  }

  private async ask(w: Watch, data: Data): Promise<void> {
    const adapter = this.deps.adapter(w.platform);
    if (!adapter) return;
    const approvalId = String(data.approval_id);
    const question = approvalQuestion(
      String(data.tool ?? 'a tool'),
      data.input,
      adapter.hasButtons,
    );
    // Known before it is sent: a press can arrive (on another connection) before the send's answer.
    const ask: PendingAsk = { approvalId, sessionId: w.sessionId, question, messageId: null };
    const key = `${w.platform}:${w.chatId}`;
    this.asks.set(key, [...(this.asks.get(key) ?? []), ask]);
    ask.sent = adapter
      .sendText(w.chatId, question, {
        plain: true,
        ...(adapter.hasButtons ? { buttons: approvalButtons(approvalId) } : {}),
      })
      .catch((err: Error) => {
        log.warn('could not ask for an approval in the chat', { error: err.message });
        return null;
      });
    ask.messageId = await ask.sent;
  }

  private dropAsk(platform: PlatformName, chatId: string, approvalId: string): void {
    const key = `${platform}:${chatId}`;
    const left = (this.asks.get(key) ?? []).filter((a) => a.approvalId !== approvalId);
    if (left.length > 0) this.asks.set(key, left);
    else this.asks.delete(key);
  }

  private async onButton(adapter: Adapter, m: InboundMessage): Promise<void> {
    if (m.buttonQueryId) await adapter.answerButton?.(m.buttonQueryId);
    const b = parseButton(m.buttonData ?? '');
    if (!b) return;
    const ask = this.asks
      .get(`${m.platform}:${m.chatId}`)
      ?.find((a) => a.approvalId === b.approvalId);
    if (!ask) {
      if (m.buttonMessageId)
        await adapter
          .editText(
            m.chatId,
            m.buttonMessageId,
            'This question was already answered or withdrawn.',
            { plain: true },
          )
          .catch(() => undefined);
      return;
    }
    await this.answer(adapter, m.platform, m.chatId, ask, b.decision);
  }

  private async answer(
    adapter: Adapter,
    platform: PlatformName,
    chatId: string,
    ask: PendingAsk,
    decision: ApprovalDecision,
  ): Promise<void> {
    this.dropAsk(platform, chatId, ask.approvalId);
    let outcome = decisionLabel(decision);
    try {
      await this.deps.endpoint.request('approval.answer', {
        session_id: ask.sessionId,
        approval_id: ask.approvalId,
        decision,
      });
    } catch (err) {
      outcome = `not applied: ${(err as Error).message}`;
    }
    const text = `${ask.question}\n→ ${outcome}`;
    const messageId = ask.messageId ?? (await ask.sent) ?? null;
    if (messageId && adapter.canEdit)
      await adapter.editText(chatId, messageId, text, { plain: true }).catch(() => undefined);
    else await adapter.sendText(chatId, `→ ${outcome}`, { plain: true }).catch(() => undefined);
  }
}
