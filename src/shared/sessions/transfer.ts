import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Paths } from '../paths.js';
import type { Db } from '../store/db.js';
import { insertMessageRow, messageRowsAfter, messageRoles } from '../store/messages.js';
import { createSession, getSession, type Session } from '../store/sessions.js';
import { insertUpload, resolveUpload, type Upload } from '../store/uploads.js';
import { isoNow, newId } from '../store/util.js';
import { placeUpload, sanitizeFileName } from '../upload-files.js';
import { version } from '../version.js';

/**
 * A chat as a file: JSON that `POST /api/sessions/import` turns back into a session (on this
 * server or another), and Markdown a person reads. Attachments travel inside the JSON while they
 * are small, else by reference to an upload of the same name.
 */
export const EXPORT_FORMAT = 'svc-session';
/** Attachments are carried inline (base64) up to this many bytes in all. */
export const INLINE_ATTACHMENT_BYTES = 512 * 1024;

const exportedAttachment = z.object({
  /** The upload's name on the server it came from (what messages refer to). */
  upload: z.string().min(1).max(400),
  name: z.string().max(400),
  mime: z.string().max(200),
  size: z.number().int().nonnegative(),
  /** base64 of the file; absent when it was left by reference. */
  data: z.string().optional(),
});

export const sessionDocument = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.literal(1),
  exported_at: z.string().optional(),
  svc_version: z.string().optional(),
  session: z.object({
    title: z.string().min(1).max(500),
    model_id: z.string().max(200).nullable().optional(),
    reasoning_effort: z.enum(['off', 'low', 'medium', 'high', 'xhigh', 'max']).optional(),
    created_at: z.string().optional(),
  }),
  messages: z
    .array(
      z.object({
        role: z.enum(messageRoles),
        content: z.unknown(),
        created_at: z.string().max(40),
      }),
    )
    .max(100_000),
  attachments: z.array(exportedAttachment).max(10_000).default([]),
});
export type SessionDocument = z.infer<typeof sessionDocument>;

/** Every `{path, …}` attachment a message refers to, where it is (user attachments, tool images). */
function attachmentRefs(content: unknown): Array<{ path: string }> {
  if (!content || typeof content !== 'object') return [];
  const c = content as { attachments?: unknown; images?: unknown };
  const list = [c.attachments, c.images].flatMap((l) => (Array.isArray(l) ? l : []));
  return list.filter(
    (a): a is { path: string } => !!a && typeof a === 'object' && typeof a.path === 'string',
  );
}

const uploadNameOf = (path: string) => path.split('/').pop() ?? path;

export function exportDocument(db: Db, paths: Paths, session: Session): SessionDocument {
  const rows = messageRowsAfter(db, session.id, 0);
  const messages = rows.map((r) => ({
    role: r.role,
    content: JSON.parse(r.content) as unknown,
    created_at: r.created_at,
  }));
  const attachments: SessionDocument['attachments'] = [];
  const seen = new Set<string>();
  let inline = 0;
  for (const m of messages)
    for (const ref of attachmentRefs(m.content)) {
      const upload = uploadNameOf(ref.path);
      if (seen.has(upload)) continue;
      seen.add(upload);
      const file = resolveUpload(db, paths, upload);
      if (!file) continue;
      const a: SessionDocument['attachments'][number] = {
        upload,
        name: file.original_name,
        mime: file.mime,
        size: file.size,
      };
      if (inline + file.size <= INLINE_ATTACHMENT_BYTES) {
        a.data = readFileSync(file.path).toString('base64');
        inline += file.size;
      }
      attachments.push(a);
    }
  return {
    format: EXPORT_FORMAT,
    version: 1,
    exported_at: isoNow(),
    svc_version: version,
    session: {
      title: session.title,
      model_id: session.model_id,
      reasoning_effort: session.reasoning_effort,
      created_at: session.created_at,
    },
    messages,
    attachments,
  };
}

export interface Imported {
  session: Session;
  /** Attachments neither carried in the file nor present here: their messages keep the name. */
  missing: string[];
}

/**
 * A document back into a new session: new ids, the transcript in order, attachments stored as
 * uploads here and the messages pointed at them. Always `interactive`, with no working folder:
 * a file never raises what the agent may do, and a folder of another machine means nothing here.
 */
export async function importDocument(
  db: Db,
  paths: Paths,
  doc: SessionDocument,
  knownModel: (id: string) => boolean,
): Promise<Imported> {
  const placed = new Map<string, string>(); // old upload name → path here
  const written: string[] = [];
  const rows: Upload[] = [];
  mkdirSync(join(paths.uploadsDir, '.tmp'), { recursive: true, mode: 0o700 });
  const missing: string[] = [];
  try {
    for (const a of doc.attachments) {
      if (a.data === undefined) {
        const here = resolveUpload(db, paths, a.upload);
        if (here) placed.set(a.upload, here.path);
        else missing.push(a.name);
        continue;
      }
      const bytes = Buffer.from(a.data, 'base64');
      const tmp = join(paths.uploadsDir, '.tmp', `import-${randomBytes(8).toString('hex')}`);
      writeFileSync(tmp, bytes, { mode: 0o600 });
      try {
        const name = await placeUpload(paths.uploadsDir, tmp, sanitizeFileName(a.name));
        written.push(name);
        rows.push({
          name,
          original_name: sanitizeFileName(a.name),
          mime: /^[\w.+-]+\/[\w.+-]+$/.test(a.mime) ? a.mime : 'application/octet-stream',
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          created_at: isoNow(),
        });
        placed.set(a.upload, join(paths.uploadsDir, name));
      } finally {
        unlinkSync(tmp);
      }
    }
    // Each reference names the upload here (its link works) and keeps the name the person sent.
    const sent = new Map(doc.attachments.map((a) => [a.upload, a.name]));
    const repoint = (content: unknown): unknown => {
      for (const ref of attachmentRefs(content)) {
        const old = uploadNameOf(ref.path);
        const here = placed.get(old);
        if (!here) continue;
        ref.path = here;
        const r = ref as { path: string; name?: unknown; original_name?: unknown };
        if (typeof r.name === 'string') r.name = uploadNameOf(here);
        if (r.original_name === undefined && sent.has(old)) r.original_name = sent.get(old);
      }
      return content;
    };
    const model = doc.session.model_id;
    const session = db
      .transaction(() => {
        for (const row of rows) insertUpload(db, row);
        const s = createSession(db, {
          title: doc.session.title,
          model_id: model && knownModel(model) ? model : null,
          ...(doc.session.reasoning_effort
            ? { reasoning_effort: doc.session.reasoning_effort }
            : {}),
        });
        for (const [i, m] of doc.messages.entries())
          insertMessageRow(db, {
            id: newId('m'),
            session_id: s.id,
            seq: i + 1,
            role: m.role,
            content: JSON.stringify(repoint(m.content) ?? null),
            created_at: m.created_at,
          });
        db.prepare('UPDATE sessions SET message_count = ? WHERE id = ?').run(
          doc.messages.length,
          s.id,
        );
        return getSession(db, s.id)!;
      })
      .immediate();
    return { session, missing };
  } catch (err) {
    for (const name of written) rmSync(join(paths.uploadsDir, name), { force: true });
    throw err;
  }
}

const fence = (text: string) => {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
};

/** The chat as Markdown a person reads and shares: tool calls and their outputs folded. */
export function exportMarkdown(doc: SessionDocument): string {
  const out = [`# ${doc.session.title}`, ''];
  out.push(
    `_Exported from svc ${doc.svc_version ?? ''} on ${doc.exported_at ?? isoNow()}; ${doc.messages.length} messages._`,
    '',
  );
  const names = new Map(doc.attachments.map((a) => [a.upload, a.name]));
  for (const m of doc.messages) {
    const c = (m.content ?? {}) as Record<string, unknown>;
    const text =
      typeof c.text === 'string' ? c.text : typeof m.content === 'string' ? m.content : '';
    if (m.role === 'user') {
      out.push(`## You · ${m.created_at}`, '', text, '');
      for (const a of attachmentRefs(m.content))
        out.push(`- attachment: ${names.get(uploadNameOf(a.path)) ?? uploadNameOf(a.path)}`);
    } else if (m.role === 'assistant') {
      out.push(`## Assistant · ${m.created_at}`, '', text, '');
      const calls = Array.isArray(c.tool_calls)
        ? (c.tool_calls as Array<Record<string, unknown>>)
        : [];
      for (const call of calls) {
        const args = String(call.arguments ?? '');
        out.push(
          `<details><summary>Tool call: ${String(call.name)}</summary>`,
          '',
          `${fence(args)}json`,
          args,
          fence(args),
          '',
          '</details>',
          '',
        );
      }
    } else if (m.role === 'tool') {
      const output = typeof c.output === 'string' ? c.output : '';
      out.push(
        `<details><summary>Output of ${String(c.name ?? 'a tool')}${c.is_error ? ' (error)' : ''}</summary>`,
        '',
        fence(output),
        output,
        fence(output),
        '',
        '</details>',
        '',
      );
    } else out.push(`> Summary of earlier messages: ${text}`, '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
