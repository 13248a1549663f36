import { log } from '../shared/log.js';
import { isTurnEnd } from '../shared/protocol/event-names.js';
import { IpcCallError } from '../shared/protocol/endpoint.js';
import { innerWaits } from '../shared/protocol/routes.js';
import type {
  EventPayload,
  PayloadOf,
  ResultOf,
  TurnInput,
  TurnOrigin,
} from '../shared/protocol/ipc.js';
import type { Db } from '../shared/store/db.js';
import type { Publish } from '../shared/protocol/events.js';
import { goalSummary } from '../shared/event-summaries.js';
import { getGoal, putGoal } from '../shared/store/goals.js';
import { newId } from '../shared/store/util.js';
import { endTurn, type TurnEnd } from '../shared/turn-end.js';
import { turnPublish } from '../shared/ws-publish.js';
import { failOpenRuns } from '../shared/workflows/runs.js';
import type { Child } from './child-process.js';
import { flushTraces, type Span, startSpan } from '../shared/telemetry/trace.js';

type EndStatus = TurnEnd['status'];

interface Running {
  turnId: string;
  origin: TurnOrigin;
  agent: Child;
  /** Goal continuations in a row, so a goal cannot run forever without the user. */
  chain: number;
  /** The text streamed since the turn's last committed message: kept when svc (not the worker) ends the turn. */
  streamed: string;
  /** Set when an interrupt could not reach the worker: the turn ends as interrupted when the worker is gone. */
  endAs?: 'interrupted';
  /** Resolved once the turn is over and its end event passed on to the gateway (whoever ended it). */
  done: Promise<void>;
  finish: () => void;
  /** The supervisor's span of the turn (a no-op when traces are off); ends with the turn. */
  span: Span;
}

/** One line in `svc logs` per failed turn, whoever ended it (the worker, or svc when the worker died). */
function logTurnFailed(sessionId: string, turnId: string, reason: unknown, message: unknown): void {
  log.warn('a turn failed', {
    session: sessionId,
    turn: turnId,
    reason: String(reason ?? 'unknown'),
    message: String(message ?? ''),
  });
}

export interface TurnDeps {
  db: Db;
  /** An agent worker with room for one more turn (started if needed), or undefined when none can be had. */
  agentForTurn: () => Child | undefined;
  /** Kills a worker that did not answer (liveness does the same); its turns end when it is gone. */
  killWorker: (agent: Child, why: string) => void;
  accepting: () => boolean;
  retryAfterS: () => number;
  maxContinuations: () => number;
  /** Sends a `/ws` event through the gateway. */
  publish: Publish;
  /** A turn is over (the cron worker waits for its runs' turns). */
  ended: (e: EventPayload<'turn.ended'>) => void;
}

/**
 * The one place that knows which session has a turn running, and on which worker: it refuses a
 * second turn on a busy session, refuses new turns while draining, dispatches continuation turns
 * for goals, and ends the turns of a worker that died. A turn's end is its end event, heard here
 * as it passes to the gateway: there is no other signal.
 */
export class TurnDispatcher {
  private readonly running = new Map<string, Running>();

  constructor(private readonly deps: TurnDeps) {}

  get count(): number {
    return this.running.size;
  }

  turnsOn(agent: Child): number {
    let n = 0;
    for (const r of this.running.values()) if (r.agent === agent) n++;
    return n;
  }

  /** Runs a turn in a session its sender found, with the input as resolved where it came in. */
  async start(p: PayloadOf<'turn.start'>, chain = 0): Promise<ResultOf<'turn.start'>> {
    if (!this.deps.accepting())
      throw new IpcCallError(
        'draining',
        `svc is restarting and takes no new turns for now; try again in ${this.deps.retryAfterS()} s.`,
      );
    const busy = this.running.get(p.session_id);
    if (busy)
      throw new IpcCallError(
        'turn_in_progress',
        `The session already has a turn running (${busy.turnId}); wait for it to finish or interrupt it.`,
      );
    const agent = this.deps.agentForTurn();
    if (!agent)
      throw new IpcCallError('unavailable', 'No agent worker could be started; see the svc log.');
    const turnId = newId('turn');
    // Under the gateway's span when it sent one; a turn svc starts itself (cron, goal) roots its own trace.
    const span = startSpan(
      'svc.turn.dispatch',
      {
        'svc.turn_id': turnId,
        'svc.session_id': p.session_id,
        'svc.origin': p.origin,
        'svc.agent_pid': agent.pid,
      },
      p.traceparent,
    );
    let finish = () => {};
    const done = new Promise<void>((resolve) => (finish = resolve));
    const r: Running = { turnId, origin: p.origin, agent, chain, streamed: '', done, finish, span };
    this.running.set(p.session_id, r);
    try {
      await agent.endpoint.request('agent.turn', {
        turn_id: turnId,
        session_id: p.session_id,
        message: p.message,
        origin: p.origin,
        ...(p.workflow_run_id ? { workflow_run_id: p.workflow_run_id } : {}),
        ...(span.traceparent ? { traceparent: span.traceparent } : {}),
      });
    } catch (err) {
      if (err instanceof IpcCallError && err.code === 'insufficient_storage') {
        // Its row could not be written: the turn never began, and the caller hears why.
        this.running.delete(p.session_id);
        finish();
        endSpan(span, 'failed', err.message);
        throw err;
      }
      // A worker that answered late may still take it: its row, ended here first, stops it.
      void agent.endpoint.request('agent.interrupt', { turn_id: turnId }).catch(() => undefined);
      this.end(p.session_id, r, {
        status: 'failed',
        reason: 'worker_crashed',
        message: `the agent worker did not take the turn: ${(err as Error).message}`,
        keep: false,
      });
      throw err;
    }
    return { turn_id: turnId };
  }

  /**
   * Stops the session's running turn. A worker that does not acknowledge within a few seconds is
   * hung: it is killed and the turn ends as interrupted all the same. `wait`: answer once the turn
   * has ended and clients heard it (a session about to be deleted), not as soon as the worker was told.
   */
  async interrupt(sessionId: string, wait = false): Promise<ResultOf<'turn.interrupt'>> {
    const r = this.running.get(sessionId);
    if (!r) return { interrupted: false, turn_id: null };
    const ack = await r.agent.endpoint
      .request('agent.interrupt', { turn_id: r.turnId })
      .catch(() => undefined);
    if (!ack && this.running.get(sessionId) === r) {
      log.warn('the agent worker did not answer an interrupt; ending the turn without it', {
        turn: r.turnId,
        pid: r.agent.pid,
      });
      r.endAs = 'interrupted';
      this.deps.killWorker(r.agent, 'it did not answer an interrupt');
      await bounded(r.done, innerWaits.turnEnds);
      return { interrupted: true, turn_id: r.turnId };
    }
    if (wait) await bounded(r.done, innerWaits.turnEnds);
    return { interrupted: ack?.interrupted ?? true, turn_id: r.turnId };
  }

  /** A piece of text an agent worker streamed, as the IPC parse left it: kept until committed. */
  observeDelta(e: EventPayload<'ws.delta'>): void {
    if (e.type !== 'turn.text_delta') return;
    const r = this.running.get(e.topic.slice('session:'.length));
    if (r && r.turnId === e.turn_id) r.streamed += e.delta;
  }

  /**
   * A `/ws` event an agent worker sent, as the IPC parse left it (read, not parsed again): a
   * committed message (the streamed text is kept on record now) and the turn's end.
   */
  observe(e: EventPayload<'ws.publish'>): void {
    if (!e.topic.startsWith('session:')) return;
    const sessionId = e.topic.slice('session:'.length);
    const r = this.running.get(sessionId);
    const data = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as Record<
      string,
      unknown
    >;
    if (!r || r.turnId !== data.turn_id) return;
    if (e.type === 'message.committed') r.streamed = '';
    else if (isTurnEnd(e.type)) {
      const status = e.type.slice('turn.'.length) as EndStatus;
      if (status === 'failed') logTurnFailed(sessionId, r.turnId, data.reason, data.message);
      this.over(sessionId, r, status);
    }
  }

  /**
   * A restart's drain: running turns get `boundMs` to finish; past it they are stopped (see
   * interruptAll), each given `graceMs` to commit what it has.
   */
  async drain(boundMs: number, graceMs: number): Promise<void> {
    const until = Date.now() + boundMs;
    while (this.count > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (this.count === 0) return;
    log.warn('drain bound reached with turns still running; stopping them and restarting', {
      drain_seconds: boundMs / 1000,
      turns: this.count,
    });
    await this.interruptAll(graceMs);
  }

  /**
   * A restart past its drain bound: every running turn is stopped while its clients still watch,
   * so the partial reply is committed and the turn ends as `restarted` before the old gateway goes.
   * Resolves when they all ended (their end events passed on: the restart hands the gateway's /ws
   * numbering to the successor next) or `boundMs` passed (a worker that does not answer dies with
   * the restart).
   */
  async interruptAll(boundMs: number): Promise<void> {
    const running = [...this.running.values()];
    await Promise.all(
      running.map((r) =>
        r.agent.endpoint
          .request('agent.interrupt', { turn_id: r.turnId, restart: true }, { timeoutMs: boundMs })
          .catch(() => undefined),
      ),
    );
    await bounded(
      Promise.all(running.map((r) => r.done)).then(() => undefined),
      boundMs,
    );
  }

  /** The approvals the session's running turn waits for (none when no turn runs). */
  async pendingApprovals(p: PayloadOf<'approval.list'>): Promise<ResultOf<'approval.list'>> {
    const r = this.running.get(p.session_id);
    if (!r) return { items: [] };
    return r.agent.endpoint.request('agent.approvals', { session_id: p.session_id });
  }

  /** The user answered an approval: it belongs to the session's running turn, on its worker. */
  async answerApproval(p: PayloadOf<'approval.answer'>): Promise<ResultOf<'approval.answer'>> {
    const r = this.running.get(p.session_id);
    if (!r)
      throw new IpcCallError(
        'not_found',
        'The session has no running turn, so nothing waits for this approval (it may have been withdrawn).',
      );
    const ack = await r.agent.endpoint.request('agent.approval', {
      session_id: p.session_id,
      approval_id: p.approval_id,
      decision: p.decision,
    });
    if (!ack.answered)
      throw new IpcCallError(
        'not_found',
        `No approval ${p.approval_id} is waiting; it was answered already or withdrawn.`,
      );
    return ack;
  }

  /** A worker died: its turns end as failed, keeping whatever they had committed (and, when svc killed it, what they had streamed). */
  workerGone(agent: Child, how: string): void {
    const hung = agent.hung;
    const why = agent.expectedExit
      ? 'svc restarted before this turn finished (it ran past restart.drain_seconds)'
      : hung
        ? `the agent worker stopped answering and was replaced (${how})`
        : `the agent worker stopped unexpectedly (${how})`;
    for (const [sessionId, r] of [...this.running]) {
      if (r.agent !== agent) continue;
      if (r.endAs === 'interrupted') this.end(sessionId, r, { status: 'interrupted', keep: true });
      else
        this.end(sessionId, r, {
          status: 'failed',
          reason: agent.expectedExit
            ? 'restarted'
            : hung
              ? 'worker_unresponsive'
              : 'worker_crashed',
          message: `${why}; what was already saved is kept`,
          keep: hung,
        });
    }
  }

  /**
   * Ends a turn on svc's side, through the store function the agent worker ends its turns with
   * (the text it had streamed kept when `keep`). Its failed workflow runs are recorded too.
   */
  private end(
    sessionId: string,
    r: Running,
    o: ({ status: 'failed'; reason: string; message: string } | { status: 'interrupted' }) & {
      keep: boolean;
    },
  ): void {
    const { keep, ...end } = o;
    const told = endTurn(
      this.deps.db,
      turnPublish(this.deps.publish, sessionId, r.turnId),
      { id: r.turnId, session_id: sessionId, origin: r.origin },
      end,
      keep && r.streamed ? { text: r.streamed } : undefined,
    );
    if (told && end.status === 'failed')
      logTurnFailed(sessionId, r.turnId, end.reason, end.message);
    this.over(sessionId, r, end.status, end.status === 'failed' ? end.reason : undefined);
    if (end.status !== 'failed') return;
    try {
      for (const run of failOpenRuns(this.deps.db, sessionId, end.message))
        this.deps.publish('workflows', 'workflow.run_failed', {
          turn_id: r.turnId,
          run_id: run.id,
          workflow: run.workflow,
          session_id: sessionId,
          step: null,
          reason: end.reason,
          message: end.message,
        });
    } catch (err) {
      log.warn('could not record a failed workflow run', {
        session: sessionId,
        error: (err as Error).message,
      });
    }
  }

  /**
   * The turn is over and its end passed on: the session is free, the cron worker hears of it,
   * and a goal still active after a completed turn gets its next turn.
   */
  private over(sessionId: string, r: Running, status: EndStatus, failure?: string): void {
    if (this.running.get(sessionId) !== r) return;
    this.running.delete(sessionId);
    r.finish();
    endSpan(r.span, status, failure);
    this.deps.ended({ turn_id: r.turnId, session_id: sessionId, status });
    if (status === 'completed') this.continueGoal(sessionId, r.chain);
  }

  private continueGoal(sessionId: string, chain: number): void {
    if (getGoal(this.deps.db, sessionId)?.status !== 'active') return;
    if (chain >= this.deps.maxContinuations()) {
      // Paused on record too, as for no_progress: the goal waits for the user to resume it.
      const goal = putGoal(this.deps.db, sessionId, { status: 'paused' });
      this.deps.publish(`session:${sessionId}`, 'goal.paused', {
        reason: 'max_continuations',
        turns: chain,
      });
      this.deps.publish(`session:${sessionId}`, 'goal.updated', goalSummary(goal));
      return;
    }
    if (!this.deps.accepting()) return; // a restart interrupts the chain; the goal stays active
    const message: TurnInput = { text: 'Continue working toward the goal.', attachments: [] };
    this.start({ session_id: sessionId, message, origin: 'goal' }, chain + 1).catch((err: Error) =>
      log.warn('could not start a goal continuation turn', {
        session: sessionId,
        error: err.message,
      }),
    );
  }
}

/** Waits for `p`, at most `ms`. */
function bounded(p: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Ends the supervisor's span of a turn and sends the trace's spans at once. */
function endSpan(span: Span, status: string, failure?: string): void {
  if (!span.traceparent) return;
  span.set({ 'svc.turn.status': status });
  if (status === 'failed') span.fail(failure ?? 'failed');
  span.end();
  void flushTraces();
}
