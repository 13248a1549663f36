import { z } from 'zod';
import { forgetSessionFileReads } from './file-reads.js';
import { artifactRowSchema, insertArtifactRow, listArtifacts } from './artifacts.js';
import type { Db } from './db.js';
import { getGoalRow, goalRowSchema, insertGoalRow } from './goals.js';
import { insertMessageRow, messageRowSchema, messageRowsOf } from './messages.js';
import { deleteSessionRow, getSessionRow, insertSessionRow, sessionRowSchema, toSession, type Session } from './sessions.js';
import { putInTrash, trashConflict, type TrashItem, type TrashKind } from './trash.js';
import type { Paths } from '../paths.js';
import { isoNow, newId, stmt } from './util.js';
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { toolOutputDir } from '../tool-output.js';
import { moveBlob } from './trash.js';

/** A deleted session whole: its row, transcript, artifact rows and goal, exactly as stored. */
const payloadSchema = z.object({
  session: sessionRowSchema,
  messages: z.array(messageRowSchema),
  artifacts: z.array(artifactRowSchema),
  goal: goalRowSchema.nullable(),
});

/** Moves a session and everything of it into the trash in one transaction; undefined when there is no such session. */
export function trashSession(db: Db, paths: Paths, id: string): { item: TrashItem; session: Session } | undefined {
  return db.transaction(() => {
    const session = getSessionRow(db, id);
    if (!session) return undefined;
    const payload: z.infer<typeof payloadSchema> = { session, messages: messageRowsOf(db, id), artifacts: listArtifacts(db, id), goal: getGoalRow(db, id) ?? null };
    // Its tool output files go with it: restored with it, gone for good when the trash is emptied.
    const outputs = toolOutputDir(paths.home, id);
    const item = putInTrash(db, paths, { kind: 'session', name: session.title, original: id, payload, ...(existsSync(outputs) ? { blobFrom: outputs } : {}) });
    deleteSessionRow(db, id);
    // What the session had read is no proof for a restored one: its files may change meanwhile.
    forgetSessionFileReads(db, id);
    stmt(db, 'DELETE FROM permission_grants WHERE session_id = ?').run(id);
    return { item, session: toSession(session) };
  }).immediate();
}

/**
 * Restores under the same id, or (as_new / new_name) under a fresh id with fresh message and
 * artifact ids, the title set to new_name when given. The goal and its usage come back as they were.
 */
export const sessionTrashKind: TrashKind = {
  restore({ db, paths, payload, blobDir, options }) {
    const p = payloadSchema.parse(payload);
    const oldId = p.session.id;
    // The tool outputs go back where the transcript says they are (restoreFromTrash removes the blob folder after this).
    const outputs = toolOutputDir(paths.home, oldId);
    const kept = blobDir === null ? undefined : join(blobDir, basename(outputs));
    if (kept && existsSync(kept) && !existsSync(outputs)) moveBlob(kept, outputs);
    const asNew = options.as_new === true || options.new_name !== undefined;
    if (!asNew && getSessionRow(db, oldId)) {
      throw trashConflict(`A session with id ${oldId} exists again, so this one cannot go back under its own id. Restore it as a copy with {"as_new": true} or {"new_name": "..."}.`, { session_id: oldId });
    }
    const id = asNew ? newId('s') : oldId;
    const session = asNew ? { ...p.session, id, title: options.new_name ?? p.session.title, updated_at: isoNow() } : p.session;
    insertSessionRow(db, session);
    for (const m of p.messages) insertMessageRow(db, asNew ? { ...m, id: newId('m'), session_id: id } : m);
    for (const a of p.artifacts) insertArtifactRow(db, asNew ? { ...a, id: newId('a'), session_id: id } : a);
    if (p.goal) insertGoalRow(db, { ...p.goal, session_id: id });
    return { restored_to: id, session: toSession(session) };
  },
};

