import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import type { Paths } from '../paths.js';
import { toolOutputDir } from '../tool-output.js';
import { artifactRowSchema, insertArtifactRow } from './artifacts.js';
import type { Db } from './db.js';
import { forgetSessionFileReads } from './file-reads.js';
import { goalRowSchema, insertGoalRow } from './goals.js';
import { insertMessageRow, messageRowSchema } from './messages.js';
import {
  getSessionRow,
  getTrashedSessionRow,
  insertSessionRow,
  markSessionTrashed,
  type Session,
  sessionRowSchema,
  toSession,
} from './sessions.js';
import {
  moveBlob,
  putInTrash,
  type RestoreContext,
  type TrashItem,
  type TrashKind,
  trashConflict,
} from './trash.js';
import { isoNow, newId, stmt } from './util.js';

/** What a session's trash item holds: a reference; the session's rows stay in their tables, marked. */
const refSchema = z.object({ session_id: z.string() });

/** Items trashed before v16 hold the session whole: its row, transcript, artifact rows and goal. */
const legacySchema = z.object({
  session: sessionRowSchema,
  messages: z.array(messageRowSchema),
  artifacts: z.array(artifactRowSchema),
  goal: goalRowSchema.nullable(),
});

/**
 * Moves a session to the trash by reference, in one transaction: a trash row naming it and a mark
 * on the session, so the cost does not grow with the transcript. Undefined when there is no such session.
 */
export function trashSession(
  db: Db,
  paths: Paths,
  id: string,
): { item: TrashItem; session: Session } | undefined {
  return db
    .transaction(() => {
      const session = getSessionRow(db, id);
      if (!session) return undefined;
      const held = heldBytes(db, id);
      // Its tool output files go with it: restored with it, gone for good when the trash is emptied.
      const outputs = toolOutputDir(paths.home, id);
      const item = putInTrash(db, paths, {
        kind: 'session',
        name: session.title,
        original: id,
        payload: { session_id: id },
        heldBytes: held,
        ...(existsSync(outputs) ? { blobFrom: outputs } : {}),
      });
      markSessionTrashed(db, id, item.id);
      // What the session had read is no proof for a restored one: its files may change meanwhile.
      forgetSessionFileReads(db, id);
      stmt(db, 'DELETE FROM permission_grants WHERE session_id = ?').run(id);
      return { item, session: toSession(session) };
    })
    .immediate();
}

/** The transcript's bytes: kept on the session row as messages arrive; counted once (O(n)) for sessions from before v16. */
function heldBytes(db: Db, id: string): number {
  const kept = stmt<[string], { n: number | null }>(
    db,
    'SELECT content_bytes AS n FROM sessions WHERE id = ?',
  ).get(id)?.n;
  if (kept != null) return kept;
  return stmt<[string], { n: number }>(
    db,
    'SELECT coalesce(sum(octet_length(content)), 0) AS n FROM messages WHERE session_id = ?',
  ).get(id)!.n;
}

/**
 * Restores under the same id (clearing the mark), or (as_new / new_name) under a fresh id, the
 * title set to new_name when given: the rows move to the new id. The goal and its usage come back
 * as they were. Items from before v16 are rebuilt from their payload as before.
 */
export const sessionTrashKind: TrashKind = {
  restore(ctx) {
    const ref = refSchema.safeParse(ctx.payload);
    const result = ref.success ? restoreByRef(ctx, ref.data.session_id) : restoreLegacy(ctx);
    if (ref.success) restoreToolOutputs(ctx, ref.data.session_id);
    return result;
  },
};

function restoreByRef(
  { db, item, options }: RestoreContext,
  oldId: string,
): { restored_to: string; session: Session } {
  const row = getTrashedSessionRow(db, oldId, item.id);
  if (!row)
    throw new StoreError(
      'conflict',
      `The session this trash item held (${oldId}) is no longer in svc.db; delete the item.`,
      { reason: 'rows_missing', session_id: oldId },
    );
  const asNew = options.as_new === true || options.new_name !== undefined;
  if (!asNew) {
    stmt(db, 'UPDATE sessions SET trash_id = NULL WHERE id = ? AND trash_id = ?').run(
      oldId,
      item.id,
    );
    return { restored_to: oldId, session: toSession(row) };
  }
  const id = newId('s');
  const session = { ...row, id, title: options.new_name ?? row.title, updated_at: isoNow() };
  insertSessionRow(db, session);
  for (const table of ['messages', 'artifacts', 'goals'] as const)
    stmt(db, `UPDATE ${table} SET session_id = ? WHERE session_id = ?`).run(id, oldId);
  stmt(db, 'DELETE FROM sessions WHERE id = ?').run(oldId);
  return { restored_to: id, session: toSession(session) };
}

function restoreLegacy({ db, payload, options }: RestoreContext): {
  restored_to: string;
  session: Session;
} {
  const p = legacySchema.parse(payload);
  const oldId = p.session.id;
  const asNew = options.as_new === true || options.new_name !== undefined;
  if (!asNew && stmt(db, 'SELECT 1 FROM sessions WHERE id = ?').get(oldId)) {
    throw trashConflict(
      `A session with id ${oldId} exists again, so this one cannot go back under its own id. Restore it as a copy with {"as_new": true} or {"new_name": "..."}.`,
      { session_id: oldId },
    );
  }
  const id = asNew ? newId('s') : oldId;
  const session = asNew
    ? { ...p.session, id, title: options.new_name ?? p.session.title, updated_at: isoNow() }
    : p.session;
  insertSessionRow(db, session);
  for (const m of p.messages)
    insertMessageRow(db, asNew ? { ...m, id: newId('m'), session_id: id } : m);
  for (const a of p.artifacts)
    insertArtifactRow(db, asNew ? { ...a, id: newId('a'), session_id: id } : a);
  if (p.goal) insertGoalRow(db, { ...p.goal, session_id: id });
  return { restored_to: id, session: toSession(session) };
}

/** The tool outputs go back where the transcript says they are (restoreFromTrash removes the blob folder after this). */
function restoreToolOutputs({ paths, blobDir }: RestoreContext, sessionId: string): void {
  if (blobDir === null) return;
  const outputs = toolOutputDir(paths.home, sessionId);
  const kept = join(blobDir, basename(outputs));
  if (existsSync(kept) && !existsSync(outputs)) moveBlob(kept, outputs);
}
