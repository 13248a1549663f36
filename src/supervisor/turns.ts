import { z } from 'zod';
import { log } from '../shared/log.js';
import { isTurnEnd } from '../shared/protocol/event-names.js';
import { IpcCallError } from '../shared/protocol/endpoint.js';
import { innerWaits } from '../shared/protocol/routes.js';
import type {
  EventPayload,
  PayloadOf,
  ResultOf,
  TurnMessage,
  TurnOrigin,
} from '../shared/protocol/ipc.js';
import type { Db } from '../shared/store/db.js';
import type { Publish } from '../shared/protocol/events.js';
import { goalSummary, messageSummary } from '../shared/event-summaries.js';
import { getGoal, putGoal } from '../shared/store/goals.js';
import { getSession } from '../shared/store/sessions.js';
import { appendMessage } from '../shared/store/messages.js';
import { endTurnRow, startTurnRow } from '../shared/store/turns.js';
import { newId } from '../shared/store/util.js';
import { failOpenRuns } from '../shared/workflows/runs.js';
import { diskFullMessage, isDiskFull } from '../shared/disk-full.js';
import { resolvePaths } from '../shared/paths.js';
import type { Child } from './child-process.js';
import { flushTraces, type Span, startSpan } from '../shared/telemetry/trace.js';

interface Running {
  turnId: string;
  agent: Child;
  /** Goal continuations in a row, so a goal cannot run forever without the user. */
  chain: number;
  /** The text streamed since the turn's last committed message: kept when svc (not the worker) ends the turn. */
  streamed: string;
  /** Set when an interrupt could not reach the worker: the turn ends as interrupted when the worker is gone. */
  endAs?: 'interrupted';
  /** Resolved once the turn is over (whoever ended it). */
  done: Promise<void>;
  finish: () => void;
  /**
   * Resolved once the turn's end event has passed through the supervisor to the gateway (the
   * worker says `turn.ended` before it publishes the end, so `done` can come first).
   */
  passedOn: Promise<void>;
  /** The supervisor's span of the turn (a no-op when traces are off); ends with the turn. */
  span: Span;
}

/** One line in `svc logs` per failed turn, whoever ended it (the worker, or svc when the worker died). */
function logTurnFailed(topic: string, turnId: string, reason: unknown, message: unknown): void {
  log.warn('a turn failed', {
    session: topic.slice('session:'.length),
    turn: turnId,
    reason: String(reason ?? 'unknown'),
    message: String(message ?? ''),
  });
}

const streamEvent = z.object({
  topic: z.string(),
  type: z.string(),
  data: z.object({ turn_id: z.string(), delta: z.string().optional() }).passthrough(),
});

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
}

/**
 * The one place that knows which session has a turn running, and on which worker: it refuses a
 * second turn on a busy session, refuses new turns while draining, dispatches continuation turns
 * for goals, and records as failed the turns of a worker that died.
 */
export class TurnDispatcher {
  private readonly running = new Map<string, Running>();
  /** By turn id, until its end event has passed: resolves the turn's `passedOn` (see observe). */
  private readonly endHeard = new Map<string, { agent: Child; heard: () => void }>();

  constructor(private readonly deps: TurnDeps) {}

  get count(): number {
    return this.running.size;
  }

  turnsOn(agent: Child): number {
    let n = 0;
    for (const r of this.running.values()) if (r.agent === agent) n++;
    return n;
  }

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
    if (!getSession(this.deps.db, p.session_id))
      throw new IpcCallError('not_found', `There is no session ${p.session_id}.`);
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
    const passedOn = new Promise<void>((heard) => this.endHeard.set(turnId, { agent, heard }));
    this.running.set(p.session_id, {
      turnId,
      agent,
      chain,
      streamed: '',
      done,
      finish,
      passedOn,
      span,
    });
    try {
      startTurnRow(this.deps.db, { id: turnId, session_id: p.session_id, origin: p.origin });
    } catch (err) {
      this.running.delete(p.session_id);
      finish();
      endSpan(span, 'failed', (err as Error).message);
      this.passed(turnId);
      if (isDiskFull(err))
        throw new IpcCallError('insufficient_storage', diskFullMessage(resolvePaths().home));
      throw err;
    }
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
      // A worker that answered late may still run it: tell it to stop before the session is free again.
      void agent.endpoint.request('agent.interrupt', { turn_id: turnId }).catch(() => undefined);
      this.fail(
        p.session_id,
        turnId,
        `the agent worker did not take the turn: ${(err as Error).message}`,
      );
      throw err;
    }
    return { turn_id: turnId };
  }

  /**
   * Stops the session's running turn. A worker that does not acknowledge within a few seconds is
   * hung: it is killed and the turn ends as interrupted all the same. `wait`: answer once the turn
   * has ended (a session about to be deleted), not as soon as the worker was told.
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
    if (wait) {
      // Until the turn's end event has been passed on too: clients hear the turn end before what the caller does next.
      await bounded(
        Promise.all([r.done, r.passedOn]).then(() => undefined),
        innerWaits.turnEnds,
      );
    }
    return { interrupted: ack?.interrupted ?? true, turn_id: r.turnId };
  }

  /** A `/ws` event an agent worker sent: the text streamed so far of each running turn, until committed. */
  observe(e: unknown): void {
    const parsed = streamEvent.safeParse(e);
    if (!parsed.success || !parsed.data.topic.startsWith('session:')) return;
    if (isTurnEnd(parsed.data.type)) this.passed(parsed.data.data.turn_id);
    if (parsed.data.type === 'turn.failed') {
      const d = parsed.data.data as { reason?: unknown; message?: unknown };
      logTurnFailed(parsed.data.topic, parsed.data.data.turn_id, d.reason, d.message);
    }
    const r = this.running.get(parsed.data.topic.slice('session:'.length));
    if (!r || r.turnId !== parsed.data.data.turn_id) return;
    if (parsed.data.type === 'turn.text_delta') r.streamed += parsed.data.data.delta ?? '';
    else if (parsed.data.type === 'message.committed') r.streamed = '';
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
   * Resolves when they all ended or `boundMs` passed (a worker that does not answer dies with the restart).
   */
  async interruptAll(boundMs: number): Promise<void> {
    const running = [...this.running.values()];
    // Until each turn's end event has been passed on too, not only its end heard: the restart hands
    // the gateway's /ws numbering to the successor next, and an end event reaching the old gateway
    // after that goes to the successor, so the old one's SSE, /ws and waiting clients miss it.
    await Promise.all(
      running.map((r) =>
        r.agent.endpoint
          .request('agent.interrupt', { turn_id: r.turnId, restart: true }, { timeoutMs: boundMs })
          .catch(() => undefined),
      ),
    );
    await bounded(
      Promise.all(running.flatMap((r) => [r.done, r.passedOn])).then(() => undefined),
      boundMs,
    );
  }

  /** The turn's end event has passed through the supervisor: its `passedOn` resolves. */
  private passed(turnId: string): void {
    this.endHeard.get(turnId)?.heard();
    this.endHeard.delete(turnId);
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

  /** A worker reported a turn's end; a goal that is still active gets its next turn. */
  ended(e: EventPayload<'turn.ended'>): void {
    const r = this.running.get(e.session_id);
    if (!r || r.turnId !== e.turn_id) return;
    this.running.delete(e.session_id);
    r.finish();
    endSpan(r.span, e.status);
    if (!e.continue || e.status !== 'completed') return;
    if (r.chain >= this.deps.maxContinuations()) {
      // Paused on record too, as for no_progress: the goal waits for the user to resume it.
      const goal =
        getGoal(this.deps.db, e.session_id)?.status === 'active'
          ? putGoal(this.deps.db, e.session_id, { status: 'paused' })
          : undefined;
      this.deps.publish(`session:${e.session_id}`, 'goal.paused', {
        reason: 'max_continuations',
        turns: r.chain,
      });
      if (goal) this.deps.publish(`session:${e.session_id}`, 'goal.updated', goalSummary(goal));
      return;
    }
    if (!this.deps.accepting()) return; // a restart interrupts the chain; the goal stays active
    const message: TurnMessage = { text: 'Continue working toward the goal.', attachments: [] };
    const origin: TurnOrigin = 'goal';
    this.start({ session_id: e.session_id, message, origin }, r.chain + 1).catch((err: Error) =>
      log.warn('could not start a goal continuation turn', {
        session: e.session_id,
        error: err.message,
      }),
    );
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
      if (r.endAs === 'interrupted')
        this.end(sessionId, r, {
          status: 'interrupted',
          reason: 'interrupted',
          message: 'interrupted; the agent worker did not answer, so it was replaced',
          keep: true,
        });
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
    // Turns it ended itself but whose end event it did not get to send: nothing will pass now.
    for (const [turnId, e] of [...this.endHeard]) if (e.agent === agent) this.passed(turnId);
  }

  private fail(
    sessionId: string,
    turnId: string,
    message: string,
    reason = 'worker_crashed',
  ): void {
    const r = this.running.get(sessionId);
    if (r && r.turnId === turnId)
      this.end(sessionId, r, { status: 'failed', reason, message, keep: false });
  }

  /**
   * Ends a turn on svc's side. Its clients always hear the end: when the row cannot be written
   * (a full disk) the event goes out all the same; only a row another process already ended
   * (the worker got there first) means the end was told already.
   */
  private end(
    sessionId: string,
    r: Running,
    o: { status: 'failed' | 'interrupted'; reason: string; message: string; keep: boolean },
  ): void {
    this.running.delete(sessionId);
    r.finish();
    endSpan(r.span, o.status, o.reason);
    const topic = `session:${sessionId}` as const;
    let endedHere = true;
    try {
      if (o.keep && r.streamed) {
        const message = appendMessage(this.deps.db, sessionId, {
          role: 'assistant',
          content: {
            text: r.streamed,
            stop_reason: o.status === 'interrupted' ? 'interrupted' : 'error',
          },
        });
        this.deps.publish(topic, 'message.committed', {
          turn_id: r.turnId,
          message: messageSummary(message),
        });
      }
    } catch (err) {
      log.warn('could not keep the text a turn had streamed', {
        turn: r.turnId,
        error: (err as Error).message,
      });
    }
    try {
      endedHere = endTurnRow(
        this.deps.db,
        r.turnId,
        o.status,
        o.status === 'failed' ? { error: o.message, reason: o.reason } : {},
      );
    } catch (err) {
      log.warn('could not record the end of a turn', {
        turn: r.turnId,
        error: (err as Error).message,
      });
    }
    if (endedHere) {
      if (o.status === 'failed') logTurnFailed(topic, r.turnId, o.reason, o.message);
      if (o.status === 'failed')
        this.deps.publish(topic, 'turn.failed', {
          turn_id: r.turnId,
          status: 'failed',
          reason: o.reason,
          message: o.message,
        });
      else
        this.deps.publish(topic, 'turn.interrupted', { turn_id: r.turnId, status: 'interrupted' });
    }
    this.passed(r.turnId);
    if (o.status !== 'failed') return;
    try {
      for (const run of failOpenRuns(this.deps.db, sessionId, o.message))
        this.deps.publish('workflows', 'workflow.run_failed', {
          turn_id: r.turnId,
          run_id: run.id,
          workflow: run.workflow,
          session_id: sessionId,
          step: null,
          reason: o.reason,
          message: o.message,
        });
    } catch (err) {
      log.warn('could not record a failed workflow run', {
        session: sessionId,
        error: (err as Error).message,
      });
    }
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
