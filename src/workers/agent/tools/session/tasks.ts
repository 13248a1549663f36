import { z } from 'zod';
import { refusalOf } from '../../../../shared/errors.js';
import {
  createTask,
  listTasks,
  taskFields,
  taskStatuses,
  updateTask,
  type Task,
} from '../../../../shared/store/tasks.js';
import { viewSummary } from '../../../../shared/event-summaries.js';
import type { Publish } from '../../../../shared/protocol/events.js';
import { defineTool, type Tool, type ToolResult } from '../registry.js';

export type { Publish };

export interface TaskToolOptions {
  publish?: Publish;
}

const mark: Record<Task['status'], string> = { in_progress: '▶', pending: '○', completed: '✓' };

function line(t: Task, all: Map<string, Task>): string {
  const open = t.blocked_by.filter((b) => all.get(b)?.status !== 'completed');
  const blocked = open.length > 0 ? ` [blocked by ${open.join(', ')}]` : '';
  const desc = t.description ? `\n    ${t.description.replace(/\s+/g, ' ').slice(0, 200)}` : '';
  return `${mark[t.status]} ${t.id} ${t.subject}${blocked}${desc}`;
}

/** A refusal the model can act on, instead of a thrown error. */
function attempt(fn: () => ToolResult): ToolResult {
  try {
    return fn();
  } catch (err) {
    if (refusalOf(err)) return { output: (err as Error).message, isError: true };
    throw err;
  }
}

/** task_create, task_update, task_list: the session's plan, stored as kind 'graph' tasks. */
export function taskTools(opts: TaskToolOptions = {}): Tool[] {
  const announce = (type: 'task.created' | 'task.updated', t: Task) => {
    try {
      opts.publish?.('tasks', type, viewSummary({ ...t }));
    } catch {
      // An event lost is not a task lost: the row is committed.
    }
  };
  return [
    defineTool({
      name: 'task_create',
      purpose: 'Adds a step to the plan the agent keeps for a longer job.',
      description:
        "Adds a task to this session's plan (status pending). blocked_by lists ids of tasks that must be completed before this one may start. Use tasks for work with several steps.",
      args: z
        .object({
          subject: taskFields.subject,
          description: taskFields.description.optional(),
          blocked_by: taskFields.blocked_by.optional(),
        })
        .strict(),
      run: (args, ctx) =>
        attempt(() => {
          const t = createTask(ctx.db, args, { session: ctx.sessionId });
          announce('task.created', t);
          return {
            output: `Created task ${t.id}: ${t.subject}${t.blocked_by.length ? ` (blocked by ${t.blocked_by.join(', ')})` : ''}`,
          };
        }),
    }),
    defineTool({
      name: 'task_update',
      purpose: "Marks a step of the agent's plan as started, done or dropped.",
      description:
        'Changes a task of this session: subject, description, status (pending, in_progress, completed) or blocked_by (replaces the list). A task can start or complete only after its blockers are completed.',
      args: z
        .object({
          id: z.string().min(1).max(64),
          subject: taskFields.subject.optional(),
          description: taskFields.description.optional(),
          status: taskFields.status.optional(),
          blocked_by: taskFields.blocked_by.optional(),
        })
        .strict()
        .refine(
          (a) =>
            a.subject !== undefined ||
            a.description !== undefined ||
            a.status !== undefined ||
            a.blocked_by !== undefined,
          'give at least one of subject, description, status, blocked_by',
        ),
      run: ({ id, ...patch }, ctx) =>
        attempt(() => {
          const t = updateTask(ctx.db, id, patch, { session: ctx.sessionId });
          announce('task.updated', t);
          return { output: `Updated task ${t.id}: ${t.subject} (${t.status})` };
        }),
    }),
    defineTool({
      name: 'task_list',
      purpose: "Shows the agent's plan for the current job.",
      description:
        "Lists this session's tasks in plan order with their ids, status and open blockers; optionally only one status.",
      args: z.object({ status: z.enum(taskStatuses).optional() }).strict(),
      run: ({ status }, ctx) => {
        const all = listTasks(ctx.db, { kind: 'graph', session: ctx.sessionId });
        const byId = new Map(all.map((t) => [t.id, t]));
        const count = (s: Task['status']) => all.filter((t) => t.status === s).length;
        const shown = status ? all.filter((t) => t.status === status) : all;
        const header = `Tasks: ${count('in_progress')} in progress, ${count('pending')} pending, ${count('completed')} completed`;
        if (shown.length === 0)
          return { output: `${header}\n(no ${status ? `${status} ` : ''}tasks)` };
        return { output: [header, ...shown.map((t) => line(t, byId))].join('\n') };
      },
    }),
  ];
}
