import type { PlatformName } from '../../shared/config/channels.js';

/** A message from a platform, already parsed and reduced to what svc uses. */
export interface InboundMessage {
  platform: PlatformName;
  chatId: string;
  userId: string;
  /** The sender's display name (for the pairing list and session titles). */
  name: string;
  /** A group chat's title (the chat's name and its session's title, instead of the sender's). */
  chatTitle?: string;
  text: string;
  /** Unique per platform: a redelivered message has the same key. */
  msgKey: string;
  /** A button press: its data (Telegram callback_data). */
  buttonData?: string;
  /** The platform's id of a button press, answered so the client stops its spinner. */
  buttonQueryId?: string;
  /** The message a button was on. */
  buttonMessageId?: string;
  /** Files sent with the message (a document, a photo…), fetched with the adapter's downloadFile. */
  files?: InboundFile[];
}

/** A file a user sent, as the platform announced it (not yet downloaded). */
export interface InboundFile {
  /** The platform's handle for fetching it (Telegram's file_id). */
  ref: string;
  name: string;
  mime?: string;
  /** Bytes, when the platform says beforehand. */
  size?: number;
}

export interface Button {
  data: string;
  label: string;
}

/** A platform answered a delivery with a refusal or failed to take it; the message is its reason. */
export class PlatformError extends Error {}

/** What the adapter host hears from a running adapter. */
export interface AdapterEvents {
  /** Connected and receiving; `account` is who svc is on the platform. */
  connected: (account: string) => void;
  message: (m: InboundMessage) => Promise<void>;
}

/**
 * One platform behind one small interface. `run` receives until `stop` (resolves) or a fatal
 * error (rejects: the host restarts the adapter with backoff).
 */
export interface Adapter {
  readonly platform: PlatformName;
  /** Whether a sent message can be edited in place (streaming by edits). */
  readonly canEdit: boolean;
  readonly hasButtons: boolean;
  /** The longest text one message may carry. */
  readonly textCap: number;
  run(events: AdapterEvents): Promise<void>;
  stop(): Promise<void>;
  /** Sends text (Markdown, rendered to the platform's format); answers the message id when the platform gives one. */
  sendText(
    chatId: string,
    text: string,
    opts?: { buttons?: Button[]; plain?: boolean },
  ): Promise<string | null>;
  /** Replaces a sent message's text (full text each time). */
  editText(
    chatId: string,
    messageId: string,
    text: string,
    opts?: { plain?: boolean },
  ): Promise<void>;
  sendFile(chatId: string, path: string, name: string): Promise<string | null>;
  typing(chatId: string): Promise<void>;
  /** Takes the typing indicator away, where the platform has such a call (Telegram's lapses by itself). */
  stopTyping?(chatId: string): Promise<void>;
  /** The largest file the platform lets a bot fetch (Telegram's Bot API: 20 MB). */
  readonly fileCap?: number;
  /** The bytes of a file a user sent; throws PlatformError when the platform will not give it. */
  downloadFile?(file: InboundFile): Promise<AsyncIterable<Uint8Array>>;
  /** Answers a button press (the client stops waiting). */
  answerButton?(queryId: string): Promise<void>;
}
