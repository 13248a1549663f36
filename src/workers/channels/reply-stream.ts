import { log } from '../../shared/log.js';
import type { Adapter } from './adapter.js';
import { splitText } from './format.js';

/** Telegram allows about one edit a second in a chat; faster edits only earn 429s. */
const EDIT_EVERY_MS = 1000;
const TYPING_EVERY_MS = 4500;

/**
 * One turn's reply on its way to a chat. On a platform that edits, the first text is sent at once
 * and the same message is edited as text arrives (plain, throttled); the final text replaces it
 * rendered to the platform's format and split at its cap. Elsewhere the reply goes out whole at
 * the end. Every platform call runs in order on one chain.
 */
export class ReplyStream {
  private text = '';
  private messageId: string | null = null;
  private shown = '';
  private timer: NodeJS.Timeout | undefined;
  private typingTimer: NodeJS.Timeout | undefined;
  private lastEdit = 0;
  private chain: Promise<void> = Promise.resolve();
  private done = false;

  constructor(
    private readonly adapter: Adapter,
    readonly chatId: string,
    /** False when the stream joined a turn already under way (a restarted worker): the turn's own reply is then the text. */
    readonly sawStart: boolean,
    /** Hears the id of the message the reply streams into, so a restarted worker finishes that same message. */
    private readonly onMessageId: (id: string) => void = () => {},
    /** That message, when an earlier worker had sent it. */
    messageId: string | null = null,
  ) {
    this.messageId = messageId;
    void adapter.typing(chatId);
    this.typingTimer = setInterval(() => void adapter.typing(chatId), TYPING_EVERY_MS);
  }

  push(delta: string): void {
    if (this.done) return;
    this.text += delta;
    if (!this.adapter.canEdit || this.timer) return;
    const wait = Math.max(0, this.lastEdit + EDIT_EVERY_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.enqueue(() => this.update());
    }, wait);
  }

  /** The text the turn produced as this stream saw it. */
  get seen(): string {
    return this.text;
  }

  /** Delivers the final text; resolves once it was delivered (or delivery failed for good). */
  finish(finalText: string): Promise<void> {
    this.done = true;
    clearTimeout(this.timer);
    this.stopTyping();
    this.enqueue(() => this.deliver(finalText));
    return this.chain;
  }

  /** Stops without sending anything more. */
  cancel(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.stopTyping();
  }

  private stopTyping(): void {
    if (this.typingTimer === undefined) return;
    clearInterval(this.typingTimer);
    this.typingTimer = undefined;
    void this.adapter.stopTyping?.(this.chatId);
  }

  private enqueue(fn: () => Promise<void>): void {
    this.chain = this.chain.then(fn).catch((err: Error) =>
      log.warn('a reply could not be delivered', {
        platform: this.adapter.platform,
        error: err.message,
      }),
    );
  }

  private async update(): Promise<void> {
    if (this.done) return;
    const text = this.text.trim();
    // Past the cap the message stays as it is until the end splits the whole reply.
    if (!text || text === this.shown || text.length > this.adapter.textCap) return;
    this.lastEdit = Date.now();
    if (this.messageId === null) {
      this.messageId = await this.adapter.sendText(this.chatId, text, { plain: true });
      if (this.messageId !== null) this.onMessageId(this.messageId);
    } else await this.adapter.editText(this.chatId, this.messageId, text, { plain: true });
    this.shown = text;
    this.stopTyping();
  }

  private async deliver(finalText: string): Promise<void> {
    const pieces = splitText(finalText.trim() || '(no reply)', this.adapter.textCap);
    let first = 0;
    if (this.messageId !== null) {
      try {
        await this.adapter.editText(this.chatId, this.messageId, pieces[0]!);
        first = 1;
      } catch (err) {
        log.warn('the streamed message could not be finished; sending the reply anew', {
          error: (err as Error).message,
        });
      }
    }
    for (const piece of pieces.slice(first)) await this.adapter.sendText(this.chatId, piece);
  }
}
