import { log } from '../shared/log.js';
import { IpcCallError } from '../shared/protocol/endpoint.js';
import type { EventPayload, PayloadOf, ResultOf, TurnMessage, TurnOrigin } from '../shared/protocol/ipc.js';
import type { Db } from '../shared/store/db.js';
import { getGoal, putGoal } from '../shared/store/goals.js';
import { getSession } from '../shared/store/sessions.js';
import { endTurnRow, startTurnRow } from '../shared/store/turns.js';
import { newId } from '../shared/store/util.js';
import { failOpenRuns } from '../shared/workflows/runs.js';
import type { Child } from './child-process.js';

interface Running {
  turnId: string;
  agent: Child;
  /** Goal continuations in a row, so a goal cannot run forever without the user. */
  chain: number;
}

export interface TurnDeps {
  db: Db;
  /** An agent worker with room for one more turn (started if needed), or undefined when none can be had. */
  agentForTurn: () => Child | undefined;
  accepting: () => boolean;
  retryAfterS: () => number;
  maxContinuations: () => number;
  /** Sends a `/ws` event through the gateway. */
  publish: (topic: string, type: string, data: unknown) => void;
}

/**
 * The one place that knows which session has a turn running, and on which worker: it refuses a
 * second turn on a busy session, refuses new turns while draining, dispatches continuation turns
 * for goals, and records as failed the turns of a worker that died.
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

  async start(p: PayloadOf<'turn.start'>, chain = 0): Promise<ResultOf<'turn.start'>> {
    if (!this.deps.accepting()) throw new IpcCallError('draining', `svc is restarting and takes no new turns for now; try again in ${this.deps.retryAfterS()} s.`);
    const busy = this.running.get(p.session_id);
    if (busy) throw new IpcCallError('turn_in_progress', `The session already has a turn running (${busy.turnId}); wait for it to finish or interrupt it.`);
    if (!getSession(this.deps.db, p.session_id)) throw new IpcCallError('not_found', `There is no session ${p.session_id}.`);
    const agent = this.deps.agentForTurn();
    if (!agent) throw new IpcCallError('unavailable', 'No agent worker could be started; see the svc log.');
    const turnId = newId('turn');
    this.running.set(p.session_id, { turnId, agent, chain });
    try {
      startTurnRow(this.deps.db, { id: turnId, session_id: p.session_id, origin: p.origin });
      await agent.endpoint.request('agent.turn', { turn_id: turnId, session_id: p.session_id, message: p.message, origin: p.origin, ...(p.workflow_run_id ? { workflow_run_id: p.workflow_run_id } : {}) }, { to: 'agent', timeoutMs: 15_000 });
    } catch (err) {
      // A worker that answered late may still run it: tell it to stop before the session is free again.
      void agent.endpoint.request('agent.interrupt', { turn_id: turnId }, { to: 'agent', timeoutMs: 5000 }).catch(() => undefined);
      this.fail(p.session_id, turnId, `the agent worker did not take the turn: ${(err as Error).message}`);
      throw err;
    }
    return { turn_id: turnId };
  }

  async interrupt(sessionId: string): Promise<ResultOf<'turn.interrupt'>> {
    const r = this.running.get(sessionId);
    if (!r) return { interrupted: false, turn_id: null };
    const ack = await r.agent.endpoint.request('agent.interrupt', { turn_id: r.turnId }, { to: 'agent', timeoutMs: 5000 }).catch(() => ({ interrupted: false }));
    return { interrupted: ack.interrupted, turn_id: r.turnId };
  }

  /**
   * A restart past its drain bound: every running turn is stopped while its clients still watch,
   * so the partial reply is committed and the turn ends as `restarted` before the old gateway goes.
   * Resolves when they all ended or `boundMs` passed (a worker that does not answer dies with the restart).
   */
  async interruptAll(boundMs: number): Promise<void> {
    const running = [...this.running.values()];
    await Promise.all(running.map((r) => r.agent.endpoint.request('agent.interrupt', { turn_id: r.turnId, restart: true }, { to: 'agent', timeoutMs: boundMs }).catch(() => undefined)));
    const until = Date.now() + boundMs;
    while (running.some((r) => [...this.running.values()].includes(r)) && Date.now() < until) await new Promise((res) => setTimeout(res, 20));
  }

  /** The approvals the session's running turn waits for (none when no turn runs). */
  async pendingApprovals(p: PayloadOf<'approval.list'>): Promise<ResultOf<'approval.list'>> {
    const r = this.running.get(p.session_id);
    if (!r) return { items: [] };
    return r.agent.endpoint.request('agent.approvals', { session_id: p.session_id }, { to: 'agent', timeoutMs: 5000 });
  }

  /** The user answered an approval: it belongs to the session's running turn, on its worker. */
  async answerApproval(p: PayloadOf<'approval.answer'>): Promise<ResultOf<'approval.answer'>> {
    const r = this.running.get(p.session_id);
    if (!r) throw new IpcCallError('not_found', 'The session has no running turn, so nothing waits for this approval (it may have been withdrawn).');
    const ack = await r.agent.endpoint.request('agent.approval', { session_id: p.session_id, approval_id: p.approval_id, decision: p.decision }, { to: 'agent', timeoutMs: 5000 });
    if (!ack.answered) throw new IpcCallError('not_found', `No approval ${p.approval_id} is waiting; it was answered already or withdrawn.`);
    return ack;
  }

  /** A worker reported a turn's end; a goal that is still active gets its next turn. */
  ended(e: EventPayload<'turn.ended'>): void {
    const r = this.running.get(e.session_id);
    if (!r || r.turnId !== e.turn_id) return;
    this.running.delete(e.session_id);
    if (!e.continue || e.status !== 'completed') return;
    if (r.chain >= this.deps.maxContinuations()) {
      // Paused on record too, as for no_progress: the goal waits for the user to resume it.
      const goal = getGoal(this.deps.db, e.session_id)?.status === 'active' ? putGoal(this.deps.db, e.session_id, { status: 'paused' }) : undefined;
      this.deps.publish(`session:${e.session_id}`, 'goal.paused', { reason: 'max_continuations', turns: r.chain });
      if (goal) this.deps.publish(`session:${e.session_id}`, 'goal.updated', goal);
      return;
    }
    if (!this.deps.accepting()) return; // a restart interrupts the chain; the goal stays active
    const message: TurnMessage = { text: 'Continue working toward the goal.', attachments: [] };
    const origin: TurnOrigin = 'goal';
    this.start({ session_id: e.session_id, message, origin }, r.chain + 1).catch((err: Error) =>
      log.warn('could not start a goal continuation turn', { session: e.session_id, error: err.message }),
    );
  }

  /** A worker died: its turns end as failed, keeping whatever they had committed. */
  workerGone(agent: Child, how: string): void {
    const why = agent.expectedExit
      ? 'svc restarted before this turn finished (it ran past restart.drain_seconds)'
      : `the agent worker stopped unexpectedly (${how})`;
    for (const [sessionId, r] of [...this.running]) {
      if (r.agent === agent) this.fail(sessionId, r.turnId, `${why}; what was already saved is kept`, agent.expectedExit ? 'restarted' : 'worker_crashed');
    }
  }

  private fail(sessionId: string, turnId: string, message: string, reason = 'worker_crashed'): void {
    this.running.delete(sessionId);
    let recorded = false;
    try {
      recorded = endTurnRow(this.deps.db, turnId, 'failed', { error: message, reason });
    } catch (err) {
      log.warn('could not record a failed turn', { turn: turnId, error: (err as Error).message });
    }
    if (recorded) {
      this.deps.publish(`session:${sessionId}`, 'turn.failed', { turn_id: turnId, status: 'failed', reason, message });
    }
    try {
      for (const run of failOpenRuns(this.deps.db, sessionId, message)) this.deps.publish('workflows', 'workflow.run_failed', { run_id: run.id, workflow: run.workflow, session_id: sessionId, step: null, reason, message });
    } catch (err) {
      log.warn('could not record a failed workflow run', { session: sessionId, error: (err as Error).message });
    }
  }
}
