import type { Config } from '../../shared/config/schema.js';
import { wallTime } from '../../shared/cron/schedule.js';
import { log } from '../../shared/log.js';
import type { Paths } from '../../shared/paths.js';
import { IpcCallError, type Endpoint } from '../../shared/protocol/endpoint.js';
import type { EventPayload } from '../../shared/protocol/ipc.js';
import type { Publish } from '../../shared/protocol/events.js';
import { viewSummary } from '../../shared/event-summaries.js';
import { ipcPublish } from '../../shared/ws-publish.js';
import {
  cronTaskView,
  finishRun,
  getCronTask,
  getRun,
  insertRun,
  lastReplySince,
  putRunApproval,
  runningRuns,
  runView,
  setReuseSession,
  setRunSession,
  setRunTurn,
  setSchedFrom,
  turnOfRun,
  type CronRun,
  type CronRunStatus,
  type CronRunTrigger,
  type CronTask,
} from '../../shared/store/cron.js';
import type { Db } from '../../shared/store/db.js';
import {
  createSession,
  getSession,
  updateSession,
  type Session,
} from '../../shared/store/sessions.js';
import { getTurnRow } from '../../shared/store/turns.js';
import { prepareRun } from '../../shared/workflows/start.js';
import { setRunStatus } from '../../shared/workflows/runs.js';
import { Notifier } from './notify.js';

interface Active {
  runId: string;
  taskId: string;
  sessionId: string;
  turnId: string | null;
  timer: NodeJS.Timeout;
  /** Set once max_runtime_seconds passed: the run ends as interrupted, with that reason, when its turn stops. */
  overdue?: string;
  /** Watched again after a restart of this worker: its turn's end may have passed meanwhile (see ensureSweeper). */
  adopted?: true;
}

export interface RunDeps {
  db: Db;
  paths: Paths;
  endpoint: Endpoint;
  config: () => Config;
}

const SWEEP_MS = 2000;

/**
 * A run's life: recorded in the store (which refuses a second running run of a task, or a
 * scheduled time that fired before), a session made for it, its turn started through the
 * supervisor like a chat turn, a deadline of max_runtime_seconds, then the outcome recorded and
 * sent to the notify targets. The store is the truth, so a worker that was killed picks its
 * runs up again at start.
 */
export class Runs {
  private readonly active = new Map<string, Active>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly notifier: Notifier;

  private readonly publish: Publish;

  constructor(private readonly deps: RunDeps) {
    this.notifier = new Notifier(deps);
    this.publish = ipcPublish(deps.endpoint);
  }

  /** A budget warning, for the schedules' notify targets. */
  budgetWarning(state: EventPayload<'usage.warning'>): void {
    void this.notifier.budgetWarning(state);
  }

  get count(): number {
    return this.active.size;
  }

  private announceRun(
    type: 'task.run_started' | `task.run_${'completed' | 'failed' | 'interrupted'}`,
    run: CronRun,
  ): void {
    const task = getCronTask(this.deps.db, run.task_id);
    this.publish(
      'tasks',
      type,
      viewSummary({
        task_id: run.task_id,
        run: runView(run),
        next_run_at: task ? cronTaskView(this.deps.db, task).next_run_at : null,
      }),
    );
  }

  /**
   * Starts a run of the task; undefined when the store refused it (one is running, or this
   * scheduled time fired already). A manual run asks for `conflict` instead.
   */
  async start(
    task: CronTask,
    trigger: CronRunTrigger,
    scheduledFor: Date | null,
  ): Promise<{ run_id: string; session_id: string } | undefined> {
    const { db } = this.deps;
    const deadline = new Date(Date.now() + task.max_runtime_seconds * 1000).toISOString();
    const run = db
      .transaction(() => {
        const r = insertRun(db, {
          task_id: task.id,
          trigger,
          scheduled_for: scheduledFor ? scheduledFor.toISOString() : null,
          deadline_at: deadline,
        });
        if (scheduledFor) setSchedFrom(db, task.id, scheduledFor.toISOString());
        return r;
      })
      .immediate();
    if (!run) return undefined;
    this.announceRun('task.run_started', run);
    let session: Session;
    let text: string;
    let workflowRunId: string | undefined;
    try {
      ({ session, text, workflowRunId } = this.prepare(task, run));
    } catch (err) {
      this.end(run.id, 'failed', `the run could not be prepared: ${(err as Error).message}`);
      throw err;
    }
    const timer = setTimeout(
      () => void this.timeout(run.id),
      Math.max(0, Date.parse(deadline) - Date.now()),
    );
    this.active.set(run.id, {
      runId: run.id,
      taskId: task.id,
      sessionId: session.id,
      turnId: null,
      timer,
    });
    // The run is recorded and has its session: the caller hears of it now, the turn starts meanwhile
    // (a cold agent worker on a busy machine can take seconds); a turn that cannot start fails the run.
    void this.startTurn(run.id, session.id, text, workflowRunId);
    return { run_id: run.id, session_id: session.id };
  }

  private async startTurn(
    runId: string,
    sessionId: string,
    text: string,
    workflowRunId: string | undefined,
  ): Promise<void> {
    const { db } = this.deps;
    try {
      const { turn_id } = await this.deps.endpoint.request('turn.start', {
        session_id: sessionId,
        message: { text, attachments: [] },
        origin: 'cron',
        ...(workflowRunId ? { workflow_run_id: workflowRunId } : {}),
      });
      setRunTurn(db, runId, turn_id);
      const a = this.active.get(runId);
      if (a) a.turnId = turn_id;
      if (a?.overdue) await this.interruptTurn(a);
    } catch (err) {
      if (workflowRunId)
        setRunStatus(db, workflowRunId, 'failed', {
          error: `the run could not start: ${(err as Error).message}`,
        });
      log.warn("a cron run's turn could not start", { run: runId, error: (err as Error).message });
      const overdue = this.active.get(runId)?.overdue;
      if (overdue) this.end(runId, 'interrupted', overdue);
      else this.end(runId, 'failed', `the turn could not start: ${(err as Error).message}`);
    }
  }

  /** The run's session (new, the task's reused one, or a workflow run's) and the text of its turn. */
  private prepare(
    task: CronTask,
    run: CronRun,
  ): { session: Session; text: string; workflowRunId?: string } {
    const { db, paths } = this.deps;
    const settings = {
      title: `${task.name} · ${wallTime(new Date(run.started_at), task.timezone).slice(0, 16).replace('T', ' ')}`,
      model_id: this.modelOf(task),
      permission_mode: task.permission_mode,
      working_dir: task.working_dir,
    };
    let session: Session | undefined;
    let text = task.prompt ?? '';
    let workflowRunId: string | undefined;
    if (task.workflow !== null) {
      const wf = prepareRun(db, paths, task.workflow, task.inputs);
      session = updateSession(db, wf.run.session_id, settings);
      text = wf.text;
      workflowRunId = wf.run.id;
    } else if (task.session === 'reuse' && task.reuse_session_id !== null) {
      session = getSession(db, task.reuse_session_id);
    }
    if (!session) {
      session = createSession(db, settings);
      if (task.session === 'reuse' && task.workflow === null)
        setReuseSession(db, task.id, session.id);
    }
    setRunSession(db, run.id, session.id);
    this.publish('sessions', 'session.created', session);
    return { session, text, ...(workflowRunId ? { workflowRunId } : {}) };
  }

  /** A model id, or a slot: null is the default slot; the lite slot is its model id (or the default when unset). */
  private modelOf(task: CronTask): string | null {
    if (task.model === null || task.model === 'default') return null;
    if (task.model === 'lite') return this.deps.config().slots.lite ?? null;
    if (!Object.hasOwn(this.deps.config().models, task.model))
      throw new IpcCallError(
        'invalid_request',
        `the task's model "${task.model}" is no longer configured`,
      );
    return task.model;
  }

  /** The supervisor reported a turn's end: the run of that session (and turn) ends with it. */
  turnEnded(e: EventPayload<'turn.ended'>): void {
    for (const a of this.active.values()) {
      if (a.sessionId !== e.session_id || (a.turnId !== null && a.turnId !== e.turn_id)) continue;
      const row = getTurnRow(this.deps.db, e.turn_id);
      if (a.overdue) this.end(a.runId, 'interrupted', a.overdue);
      else
        this.end(
          a.runId,
          e.status,
          e.status === 'completed'
            ? null
            : (row?.error ??
                (e.status === 'interrupted' ? 'the turn was interrupted' : 'the turn failed')),
        );
    }
  }

  /** An approval of a run's turn: recorded on the run, and asked of the notify targets. */
  approval(e: EventPayload<'cron.approval'>): void {
    const a = [...this.active.values()].find((x) => x.sessionId === e.session_id);
    if (!a) return;
    const run = getRun(this.deps.db, a.runId);
    const prev = run?.approvals.find((x) => x.approval_id === e.approval_id);
    const now = new Date().toISOString();
    putRunApproval(this.deps.db, a.runId, {
      approval_id: e.approval_id,
      tool: e.tool,
      reason: e.reason,
      decision: e.decision,
      why: e.why,
      asked_at: prev?.asked_at ?? now,
      answered_at: e.state === 'asked' ? null : now,
    });
    const task = getCronTask(this.deps.db, a.taskId);
    if (e.state === 'asked' && task)
      void this.notifier.approvalAsked(task, a.runId, a.sessionId, e);
  }

  private async timeout(runId: string): Promise<void> {
    const a = this.active.get(runId);
    const run = getRun(this.deps.db, runId);
    if (!a || !run || run.status !== 'running') return;
    const task = getCronTask(this.deps.db, a.taskId);
    const limit = task ? `${task.max_runtime_seconds} s` : 'its limit';
    log.warn('a cron run ran past max_runtime_seconds; interrupting it', {
      run: runId,
      task: a.taskId,
    });
    a.overdue = `the run took longer than max_runtime_seconds (${limit}) and was interrupted`;
    // The run ends when its turn reports the stop; if it never does, a little later all the same.
    a.timer = setTimeout(() => this.end(runId, 'interrupted', a.overdue ?? null), 15_000);
    // A turn not started yet is interrupted as soon as it has started (see startTurn).
    if (a.turnId !== null) await this.interruptTurn(a);
  }

  private async interruptTurn(a: Active): Promise<void> {
    await this.deps.endpoint
      .request('turn.interrupt', { session_id: a.sessionId })
      .catch((err: Error) => {
        log.warn('could not interrupt a cron run', { run: a.runId, error: err.message });
      });
  }

  /** Records the outcome once, tells the tasks topic, sends the result to the notify targets. */
  end(runId: string, status: Exclude<CronRunStatus, 'running'>, error: string | null): void {
    const a = this.active.get(runId);
    if (a) clearTimeout(a.timer);
    this.active.delete(runId);
    const { db } = this.deps;
    const before = getRun(db, runId);
    if (!before) return;
    const reply = before.session_id
      ? lastReplySince(db, before.session_id, before.started_at)
      : null;
    if (!finishRun(db, runId, status, { error, reply: status === 'completed' ? reply : null }))
      return;
    const run = getRun(db, runId)!;
    // One line in `svc logs` per run that did not complete.
    if (status !== 'completed')
      log.warn(`a scheduled run ${status === 'failed' ? 'failed' : 'was interrupted'}`, {
        task: run.task_id,
        run: run.id,
        session: run.session_id,
        error: error ?? 'no reason was given',
      });
    this.announceRun(`task.run_${status}`, run);
    const task = getCronTask(db, run.task_id);
    const done = task ? this.notifier.result(task, run) : Promise.resolve();
    void done.finally(() => {
      if (this.active.size === 0)
        void this.deps.endpoint.request('cron.idle', {}).catch(() => undefined);
    });
  }

  /** At start: runs the store still shows running are watched again, or ended as their turn did. */
  recover(): void {
    const { db } = this.deps;
    for (const run of runningRuns(db)) {
      if (this.active.has(run.id)) continue;
      const turn = run.turn_id
        ? getTurnRow(db, run.turn_id)
        : run.session_id
          ? turnOfRun(db, run.session_id, run.started_at)
          : undefined;
      if (!turn) {
        this.end(run.id, 'failed', "the cron worker stopped before this run's turn started");
        continue;
      }
      if (run.turn_id === null) setRunTurn(db, run.id, turn.id);
      if (turn.status !== 'running') {
        this.end(
          run.id,
          turn.status as Exclude<CronRunStatus, 'running'>,
          turn.status === 'completed' ? null : (turn.error ?? `the turn ${turn.status}`),
        );
        continue;
      }
      const timer = setTimeout(
        () => void this.timeout(run.id),
        Math.max(0, Date.parse(run.deadline_at) - Date.now()),
      );
      this.active.set(run.id, {
        runId: run.id,
        taskId: run.task_id,
        sessionId: run.session_id!,
        turnId: turn.id,
        timer,
        adopted: true,
      });
      log.info('watching a cron run again after a restart of the cron worker', {
        run: run.id,
        task: run.task_id,
      });
    }
    this.ensureSweeper();
  }

  /**
   * A turn.ended missed (this worker restarted meanwhile) is found in the store, for the runs
   * watched again after the restart only: the others hear their turn's end from the supervisor,
   * once the session is free (the row says it ended a moment before that).
   */
  private ensureSweeper(): void {
    if (this.sweeper || this.active.size === 0) return;
    this.sweeper = setInterval(() => {
      for (const a of [...this.active.values()]) {
        if (a.turnId === null || !a.adopted) continue;
        const t = getTurnRow(this.deps.db, a.turnId);
        if (t && t.status !== 'running') {
          if (a.overdue) this.end(a.runId, 'interrupted', a.overdue);
          else
            this.end(
              a.runId,
              t.status as Exclude<CronRunStatus, 'running'>,
              t.status === 'completed' ? null : (t.error ?? `the turn ${t.status}`),
            );
        }
      }
      if (![...this.active.values()].some((a) => a.adopted)) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, SWEEP_MS);
    this.sweeper.unref();
  }
}
