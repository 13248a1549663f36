import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { Db } from './db.js';
import { isoNow, stmt } from './util.js';

/** Chats, approved users, pairing codes and inbound messages of the messaging channels. */

export interface ChannelChat {
  platform: string;
  chat_id: string;
  user_id: string;
  name: string;
  session_id: string | null;
  last_message_at: string;
}

export function getChat(db: Db, platform: string, chatId: string): ChannelChat | undefined {
  return stmt<[string, string], ChannelChat>(
    db,
    'SELECT * FROM channel_chats WHERE platform = ? AND chat_id = ?',
  ).get(platform, chatId);
}

/** Records that a chat spoke (creating it on its first message). */
export function touchChat(
  db: Db,
  c: { platform: string; chat_id: string; user_id: string; name: string },
): ChannelChat {
  stmt(
    db,
    `INSERT INTO channel_chats (platform, chat_id, user_id, name, session_id, last_message_at) VALUES (@platform, @chat_id, @user_id, @name, NULL, @at)
    ON CONFLICT (platform, chat_id) DO UPDATE SET user_id = excluded.user_id, name = excluded.name, last_message_at = excluded.last_message_at`,
  ).run({ ...c, at: isoNow() });
  return getChat(db, c.platform, c.chat_id)!;
}

export function setChatSession(db: Db, platform: string, chatId: string, sessionId: string): void {
  stmt(db, 'UPDATE channel_chats SET session_id = ? WHERE platform = ? AND chat_id = ?').run(
    sessionId,
    platform,
    chatId,
  );
}

/** The most recent chat of a platform whose user may talk to the agent. */
export function latestChat(
  db: Db,
  platform: string,
  allowed: (userId: string) => boolean,
): ChannelChat | undefined {
  return stmt<[string], ChannelChat>(
    db,
    'SELECT * FROM channel_chats WHERE platform = ? ORDER BY last_message_at DESC LIMIT 50',
  )
    .all(platform)
    .find((c) => allowed(c.user_id));
}

export function lastMessageAt(db: Db, platform: string): string | null {
  return (
    (stmt(db, 'SELECT MAX(last_message_at) FROM channel_chats WHERE platform = ?')
      .pluck()
      .get(platform) as string | null) ?? null
  );
}

export function isApprovedUser(db: Db, platform: string, userId: string): boolean {
  return (
    stmt(db, 'SELECT 1 FROM channel_users WHERE platform = ? AND user_id = ?')
      .pluck()
      .get(platform, userId) === 1
  );
}

export interface Pairing {
  code: string;
  platform: string;
  user_id: string;
  chat_id: string;
  name: string;
  status: 'pending' | 'approved' | 'rejected';
  created_at: string;
  answered_at: string | null;
}

/** Pairing codes live this long; an older one is refused and the user is given a new one. */
export const PAIRING_TTL_MS = 60 * 60 * 1000;
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O, 1/I: read off a phone

/** The user's pending code, or a new one. */
export function pairingFor(
  db: Db,
  p: { platform: string; user_id: string; chat_id: string; name: string },
): Pairing {
  return db
    .transaction(() => {
      const since = new Date(Date.now() - PAIRING_TTL_MS).toISOString();
      const open = stmt<[string, string, string], Pairing>(
        db,
        "SELECT * FROM channel_pairings WHERE platform = ? AND user_id = ? AND status = 'pending' AND created_at > ?",
      ).get(p.platform, p.user_id, since);
      if (open) return open;
      let code = '';
      do
        code = Array.from({ length: 6 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join(
          '',
        );
      while (stmt(db, 'SELECT 1 FROM channel_pairings WHERE code = ?').pluck().get(code) === 1);
      const row: Pairing = {
        code,
        ...p,
        status: 'pending',
        created_at: isoNow(),
        answered_at: null,
      };
      stmt(
        db,
        'INSERT INTO channel_pairings (code, platform, user_id, chat_id, name, status, created_at, answered_at) VALUES (@code, @platform, @user_id, @chat_id, @name, @status, @created_at, @answered_at)',
      ).run(row);
      return row;
    })
    .immediate();
}

export function listPairings(db: Db, platform: string): Pairing[] {
  const since = new Date(Date.now() - PAIRING_TTL_MS).toISOString();
  return stmt<[string, string], Pairing>(
    db,
    "SELECT * FROM channel_pairings WHERE platform = ? AND (status != 'pending' OR created_at > ?) ORDER BY created_at DESC LIMIT 100",
  ).all(platform, since);
}

/** Approves (binding the user) or rejects a pending code; undefined when there is no such pending code. */
export function answerPairing(
  db: Db,
  platform: string,
  code: string,
  approve: boolean,
): Pairing | undefined {
  return db
    .transaction(() => {
      const since = new Date(Date.now() - PAIRING_TTL_MS).toISOString();
      const p = stmt<[string, string, string], Pairing>(
        db,
        "SELECT * FROM channel_pairings WHERE code = ? AND platform = ? AND status = 'pending' AND created_at > ?",
      ).get(code.toUpperCase(), platform, since);
      if (!p) return undefined;
      const at = isoNow();
      const status = approve ? 'approved' : 'rejected';
      stmt(db, 'UPDATE channel_pairings SET status = ?, answered_at = ? WHERE code = ?').run(
        status,
        at,
        p.code,
      );
      if (approve)
        stmt(
          db,
          'INSERT OR IGNORE INTO channel_users (platform, user_id, name, approved_at) VALUES (?, ?, ?, ?)',
        ).run(platform, p.user_id, p.name, at);
      return { ...p, status, answered_at: at } as Pairing;
    })
    .immediate();
}

/** A file a channel message brought: the platform's handle for it, and the upload it became once stored. */
export const inboundFileSchema = z.object({
  ref: z.string(),
  name: z.string(),
  mime: z.string().optional(),
  size: z.number().optional(),
  upload: z.string().optional(),
});
export type InboundFileRecord = z.infer<typeof inboundFileSchema>;
const inboundFilesSchema = z.array(inboundFileSchema);

export interface Inbound {
  platform: string;
  msg_key: string;
  chat_id: string;
  status: 'received' | 'started' | 'answered';
  text: string;
  files: InboundFileRecord[];
  session_id: string | null;
  turn_id: string | null;
  /** The platform's id of the message the reply streams into, once sent. */
  reply_id: string | null;
  created_at: string;
}

/** Records an inbound message; false when it was seen before (a redelivery after a crash). */
export function recordInbound(
  db: Db,
  m: {
    platform: string;
    msg_key: string;
    chat_id: string;
    text: string;
    files?: InboundFileRecord[];
  },
): boolean {
  const row = {
    platform: m.platform,
    msg_key: m.msg_key,
    chat_id: m.chat_id,
    text: m.text,
    files: JSON.stringify(m.files ?? []),
    at: isoNow(),
  };
  return (
    stmt(
      db,
      "INSERT OR IGNORE INTO channel_inbound (platform, msg_key, chat_id, status, text, session_id, turn_id, reply_id, created_at, files) VALUES (@platform, @msg_key, @chat_id, 'received', @text, NULL, NULL, NULL, @at, @files)",
    ).run(row).changes === 1
  );
}

/** The message's files again, with the uploads stored so far (a restart does not fetch those twice). */
export function setInboundFiles(
  db: Db,
  platform: string,
  msgKey: string,
  files: InboundFileRecord[],
): void {
  stmt(db, 'UPDATE channel_inbound SET files = ? WHERE platform = ? AND msg_key = ?').run(
    JSON.stringify(files),
    platform,
    msgKey,
  );
}

export function markInbound(
  db: Db,
  platform: string,
  msgKey: string,
  status: Inbound['status'],
  turn?: { session_id: string; turn_id: string },
): void {
  if (turn)
    stmt(
      db,
      'UPDATE channel_inbound SET status = ?, session_id = ?, turn_id = ? WHERE platform = ? AND msg_key = ?',
    ).run(status, turn.session_id, turn.turn_id, platform, msgKey);
  else
    stmt(db, 'UPDATE channel_inbound SET status = ? WHERE platform = ? AND msg_key = ?').run(
      status,
      platform,
      msgKey,
    );
}

export function setInboundReply(db: Db, platform: string, msgKey: string, replyId: string): void {
  stmt(db, 'UPDATE channel_inbound SET reply_id = ? WHERE platform = ? AND msg_key = ?').run(
    replyId,
    platform,
    msgKey,
  );
}

/** Messages taken but not yet answered, oldest first (what a restarted worker picks up). */
export function openInbound(db: Db, platform: string): Inbound[] {
  return stmt<[string], Omit<Inbound, 'files'> & { files: string }>(
    db,
    "SELECT * FROM channel_inbound WHERE platform = ? AND status != 'answered' ORDER BY created_at",
  )
    .all(platform)
    .map((r) => {
      let files: InboundFileRecord[] = [];
      try {
        files = inboundFilesSchema.parse(JSON.parse(r.files));
      } catch {
        // unreadable: treated as none
      }
      return { ...r, files };
    });
}

/** Forgets answered messages older than a week (redeliveries come within minutes). */
export function pruneInbound(db: Db): void {
  stmt(db, "DELETE FROM channel_inbound WHERE status = 'answered' AND created_at < ?").run(
    new Date(Date.now() - 7 * 24 * 3600 * 1000).toISOString(),
  );
}

/** The last assistant text after the session's last user message ('' when there is none). */
export function lastReplyText(db: Db, sessionId: string): string {
  const rows = stmt<[string], { role: string; content: string }>(
    db,
    'SELECT role, content FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT 50',
  ).all(sessionId);
  for (const r of rows) {
    if (r.role === 'user') break;
    if (r.role !== 'assistant') continue;
    const text = (JSON.parse(r.content) as { text?: unknown }).text;
    if (typeof text === 'string' && text.trim()) return text;
  }
  return '';
}
