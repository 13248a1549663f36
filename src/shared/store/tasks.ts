import { z } from 'zod';
import { StoreError } from '../errors.js';
import { type graphTaskSchema, taskKinds, taskStatuses } from '../protocol/answers/tasks.js';
import type { Db } from './db.js';
import { isoNow, newId, stmt } from './util.js';

export { taskKinds, taskStatuses };
export type TaskKind = (typeof taskKinds)[number];
export type TaskStatus = (typeof taskStatuses)[number];

/** A graph task, as stored and as the API answers it. */
export type Task = z.infer<typeof graphTaskSchema>;

/** The fields clients and tools may send, validated the same way on both paths. */
export const taskFields = {
  subject: z
    .string()
    .trim()
    .min(1, 'the subject must not be empty')
    .max(200, 'the subject is at most 200 characters'),
  description: z.string().max(10_000, 'the description is at most 10000 characters'),
  status: z.enum(taskStatuses),
  blocked_by: z.array(z.string().min(1).max(64)).max(50, 'at most 50 blockers'),
};

const rowSchema = z.object({
  id: z.string(),
  kind: z.enum(taskKinds),
  subject: z.string(),
  description: z.string(),
  status: z.enum(taskStatuses),
  blocked_by: z.string(),
  owner_session: z.string().nullable(),
  data: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
type TaskRow = z.infer<typeof rowSchema>;
const COLS =
  'id, kind, subject, description, status, blocked_by, owner_session, data, created_at, updated_at';
const idList = z.array(z.string());
const dataObject = z.record(z.string(), z.unknown());

function toTask(raw: unknown): Task {
  const r = rowSchema.parse(raw);
  return {
    ...r,
    blocked_by: idList.parse(JSON.parse(r.blocked_by)),
    data: dataObject.parse(JSON.parse(r.data)),
  };
}

function toRow(t: Task): TaskRow {
  return { ...t, blocked_by: JSON.stringify(t.blocked_by), data: JSON.stringify(t.data) };
}

export interface TaskFilter {
  kind?: TaskKind;
  session?: string;
  status?: TaskStatus;
}

/** Tasks in creation order (a plan reads top to bottom). */
export function listTasks(db: Db, f: TaskFilter = {}): Task[] {
  const rows = stmt<[{ kind: string | null; session: string | null; status: string | null }]>(
    db,
    `SELECT ${COLS} FROM tasks WHERE (@kind IS NULL OR kind = @kind) AND (@session IS NULL OR owner_session = @session) AND (@status IS NULL OR status = @status) ORDER BY created_at, id`,
  ).all({ kind: f.kind ?? null, session: f.session ?? null, status: f.status ?? null });
  return rows.map(toTask);
}

export function getTask(db: Db, id: string): Task | undefined {
  const r = stmt<[string]>(db, `SELECT ${COLS} FROM tasks WHERE id = ?`).get(id);
  return r === undefined ? undefined : toTask(r);
}

/** When set, the task and its blockers must belong to this session (the agent's tools). */
export interface TaskScope {
  session?: string;
}

export function taskNotFound(id: string): StoreError {
  return new StoreError('not_found', `There is no task ${id}.`);
}

function inScope(t: Task | undefined, scope: TaskScope): t is Task {
  return t !== undefined && (scope.session === undefined || t.owner_session === scope.session);
}

function invalid(field: string, message: string): StoreError {
  return new StoreError('invalid', `Invalid request body: ${field}: ${message}.`, [
    { path: field, message },
  ]);
}

/** The blockers, deduplicated; each must exist (in scope, same kind). */
function checkBlockers(db: Db, kind: TaskKind, ids: string[], scope: TaskScope): Task[] {
  const unique = [...new Set(ids)];
  const found = unique.map((id) => getTask(db, id));
  const unknown = unique.filter((_, i) => {
    const t = found[i];
    return !inScope(t, scope) || t.kind !== kind;
  });
  if (unknown.length > 0)
    throw invalid(
      'blocked_by',
      `unknown task id${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
    );
  return found as Task[];
}

/** Whether `target` is reachable from `start` along blocked_by edges (so start→target would close a cycle). */
function reaches(db: Db, start: string[], target: string): boolean {
  const seen = new Set<string>();
  const stack = [...start];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === target) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(getTask(db, id)?.blocked_by ?? []));
  }
  return false;
}

/**
 * The one ordering rule: a task may only be in_progress or completed while all its blockers
 * are completed. It is checked when a task enters either status or its blockers change;
 * reopening a blocker later does not move tasks that already started.
 */
function checkStartable(t: Task, blockers: Task[]): void {
  if (t.status === 'pending') return;
  const open = blockers.filter((b) => b.status !== 'completed');
  if (open.length === 0) return;
  throw new StoreError(
    'conflict',
    `Task ${t.id} cannot be ${t.status} while it is blocked by ${open.map((b) => `${b.id} (${b.status})`).join(', ')}; complete those first or change blocked_by.`,
    {
      blocked_by: open.map((b) => ({ id: b.id, status: b.status })),
    },
  );
}

export interface TaskInput {
  kind?: TaskKind;
  subject: string;
  description?: string;
  status?: TaskStatus;
  blocked_by?: string[];
  owner_session?: string | null;
}

export function createTask(db: Db, input: TaskInput, scope: TaskScope = {}): Task {
  return db
    .transaction(() => {
      const kind = input.kind ?? 'graph';
      const blockers = checkBlockers(db, kind, input.blocked_by ?? [], scope);
      const now = isoNow();
      const t: Task = {
        id: newId('task'),
        kind,
        subject: input.subject,
        description: input.description ?? '',
        status: input.status ?? 'pending',
        blocked_by: blockers.map((b) => b.id),
        owner_session: scope.session ?? input.owner_session ?? null,
        data: {},
        created_at: now,
        updated_at: now,
      };
      checkStartable(t, blockers);
      stmt(
        db,
        `INSERT INTO tasks (${COLS}) VALUES (@id, @kind, @subject, @description, @status, @blocked_by, @owner_session, @data, @created_at, @updated_at)`,
      ).run(toRow(t));
      return t;
    })
    .immediate();
}

export interface TaskPatch {
  subject?: string;
  description?: string;
  status?: TaskStatus;
  blocked_by?: string[];
}

/** Changes the fields given; throws not_found, invalid_request (unknown blocker, cycle) or conflict. */
export function updateTask(db: Db, id: string, patch: TaskPatch, scope: TaskScope = {}): Task {
  return db
    .transaction(() => {
      const cur = getTask(db, id);
      if (!inScope(cur, scope)) throw taskNotFound(id);
      const next: Task = { ...cur, ...stripUndefined(patch), updated_at: isoNow() };
      const blockers =
        patch.blocked_by !== undefined
          ? checkBlockers(db, cur.kind, patch.blocked_by, scope)
          : cur.blocked_by.map((b) => getTask(db, b)).filter((t): t is Task => t !== undefined);
      if (patch.blocked_by !== undefined) {
        next.blocked_by = blockers.map((b) => b.id);
        if (next.blocked_by.includes(id))
          throw invalid('blocked_by', `task ${id} cannot block itself`);
        const cycle = next.blocked_by.filter(
          (b) => !cur.blocked_by.includes(b) && reaches(db, [b], id),
        );
        if (cycle.length > 0)
          throw invalid(
            'blocked_by',
            `that would make a cycle: ${cycle.join(', ')} already depend${cycle.length > 1 ? '' : 's'} on ${id}`,
          );
      }
      const changesGate =
        (patch.status !== undefined && patch.status !== cur.status) ||
        patch.blocked_by !== undefined;
      if (changesGate) checkStartable(next, blockers);
      stmt(
        db,
        'UPDATE tasks SET subject = @subject, description = @description, status = @status, blocked_by = @blocked_by, updated_at = @updated_at WHERE id = @id',
      ).run(toRow(next));
      return next;
    })
    .immediate();
}

/** Deletes a task and drops its id from every task it blocked; answers both. */
export function deleteTask(
  db: Db,
  id: string,
  scope: TaskScope = {},
): { deleted: Task; unblocked: Task[] } {
  return db
    .transaction(() => {
      const cur = getTask(db, id);
      if (!inScope(cur, scope)) throw taskNotFound(id);
      stmt(db, 'DELETE FROM tasks WHERE id = ?').run(id);
      const now = isoNow();
      const dependents = stmt<[string]>(db, `SELECT ${COLS} FROM tasks WHERE blocked_by LIKE ?`)
        .all(`%"${id}"%`)
        .map(toTask)
        .filter((t) => t.blocked_by.includes(id));
      const unblocked = dependents.map((t) => ({
        ...t,
        blocked_by: t.blocked_by.filter((b) => b !== id),
        updated_at: now,
      }));
      for (const t of unblocked)
        stmt(
          db,
          'UPDATE tasks SET blocked_by = @blocked_by, updated_at = @updated_at WHERE id = @id',
        ).run(toRow(t));
      return { deleted: cur, unblocked };
    })
    .immediate();
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
