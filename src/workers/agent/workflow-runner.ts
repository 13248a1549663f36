import { log } from '../../shared/log.js';
import {
  messageSummary,
  toolCallData,
  toolResultData,
  viewSummary,
} from '../../shared/event-summaries.js';
import type { Paths } from '../../shared/paths.js';
import type {
  Publish,
  WsEventData,
  WsEventTypeOn,
  WsTopicOf,
} from '../../shared/protocol/events.js';
import { callEmit, type TurnPublish } from '../../shared/ws-publish.js';
import type { Db } from '../../shared/store/db.js';
import { appendMessage } from '../../shared/store/messages.js';
import type { Session } from '../../shared/store/sessions.js';
import { findWorkflow } from '../../shared/workflows/catalog.js';
import {
  render,
  renderDeep,
  runOrder,
  shellQuote,
  stepKind,
  type WorkflowStep,
} from '../../shared/workflows/format.js';
import { getRun, setRunStatus, setStepState } from '../../shared/workflows/runs.js';
import { runLoop, type LoopContext, type LoopOutcome } from './loop.js';
import type { Provider } from './providers/index.js';
import { emptyUsage } from './providers/index.js';
import { RestartInterrupt } from './restart-interrupt.js';
import type { ToolRegistry } from './tools/registry.js';

/** A step's output shown in events and the run's row; the whole of it is in the session. */
const SHORT = 500;

export interface WorkflowTurn {
  db: Db;
  paths: Paths;
  turnId: string;
  runId: string;
  session: Session;
  registry: ToolRegistry;
  signal: AbortSignal;
  maxSteps: number;
  system: () => string;
  /** The provider and model of a slot (a step without `model` uses the session's). */
  model: (slot: 'default' | 'lite' | undefined) => {
    provider: Provider;
    model: string;
    maxOutputTokens: number | undefined;
    vision: boolean;
  };
  /** On the run's session topic, like any turn. */
  publish: TurnPublish;
  /** On the `workflows` topic. */
  announce: WorkflowAnnounce;
  /** Records each step's model calls with the step's reply. */
  meter?: LoopContext['meter'];
  /** A step's reply cut short goes to the turn's end (see LoopContext). */
  cut: LoopContext['cut'];
}

/** Publishes on the `workflows` topic for one turn: the turn id is its own. */
export type WorkflowAnnounce = <T extends WsEventTypeOn<'workflows'>>(
  type: T,
  data: Omit<WsEventData<T>, 'turn_id'>,
) => void;

export function workflowAnnounce(publish: Publish, turnId: string): WorkflowAnnounce {
  // As turnPublish: a generic Omit spread back is not provably whole; the gateway's parse checks it.
  return (type, data) =>
    publish('workflows' as WsTopicOf<typeof type>, type, {
      turn_id: turnId,
      ...data,
    } as WsEventData<typeof type>);
}

class StepFailed extends Error {
  constructor(
    readonly step: string,
    message: string,
    /** The last lines the step printed, kept on the step so the failure shows its cause. */
    readonly output: string | null = null,
  ) {
    super(message);
  }
}

export class WorkflowFailure extends Error {
  readonly reason = 'workflow_failed';
}

/**
 * Runs a workflow as one turn of its run's session: steps in `needs` order, each one an agent
 * loop (prompt), a terminal call (run) or one tool call (tool), all through the same tool
 * registry and permission gate as a chat. Every step's messages are committed to the session;
 * progress goes to the `workflows` topic. An interrupt of the session aborts the run at once.
 */
export async function runWorkflowTurn(t: WorkflowTurn, text: string): Promise<LoopOutcome> {
  const run = getRun(t.db, t.runId);
  if (!run || run.session_id !== t.session.id)
    throw new WorkflowFailure(`There is no workflow run ${t.runId} for this session.`);
  const base = { run_id: run.id, workflow: run.workflow, session_id: t.session.id };
  const entry = findWorkflow(t.paths, run.workflow);
  if (!entry?.workflow) {
    const why = entry?.error
      ? `${entry.error.field}: ${entry.error.message}`
      : 'the workflow file is gone';
    setRunStatus(t.db, run.id, 'failed', { error: why });
    t.announce('workflow.run_failed', {
      ...base,
      step: null,
      reason: 'invalid_workflow',
      message: why,
    });
    throw new WorkflowFailure(`The workflow "${run.workflow}" cannot run: ${why}.`);
  }
  const wf = entry.workflow;
  const inputs = run.inputs as Record<string, string | number | boolean>;
  const user = appendMessage(t.db, t.session.id, { role: 'user', content: { text } });
  t.publish('turn.started', {
    session_id: t.session.id,
    origin: 'workflow',
    message: messageSummary(user),
  });
  setRunStatus(t.db, run.id, 'running');
  t.announce(
    'workflow.run_started',
    viewSummary({
      ...base,
      inputs,
      steps: wf.steps.map((s) => ({ id: s.id, kind: stepKind(s), needs: s.needs })),
    }),
  );

  const outputs: Record<string, string> = {};
  const usage = emptyUsage();
  let toolCalls = 0;
  let current: WorkflowStep | undefined;
  try {
    for (const step of runOrder(wf.steps)) {
      t.signal.throwIfAborted();
      current = step;
      const started = new Date().toISOString();
      setStepState(t.db, run.id, step.id, {
        status: 'running',
        started_at: started,
        ended_at: null,
        output: null,
      });
      t.announce('workflow.step_started', { ...base, step: step.id, kind: stepKind(step) });
      const values = { inputs, outputs };
      let output: string;
      if (step.prompt !== undefined) {
        const out = await promptStep(t, step, render(step.prompt, values));
        usage.input += out.usage.input;
        usage.output += out.usage.output;
        toolCalls += out.toolCalls;
        output = out.text;
      } else if (step.run !== undefined) {
        const args = {
          command: render(step.run, values, shellQuote),
          ...(step.timeout_seconds ? { timeout_seconds: step.timeout_seconds } : {}),
        };
        const r = await toolStep(t, step, 'terminal', args);
        toolCalls++;
        // The terminal tool ends its output with "[exit code N]": only 0 lets the run go on.
        const m = /\n?\[exit code (\d+)\]$/.exec(r.output);
        if (r.isError || !m || m[1] !== '0')
          throw new StepFailed(
            step.id,
            `the command failed: ${lastLine(r.output)}${privateTmpNote(args.command)}`,
            lastLines(r.output),
          );
        output = r.output.slice(0, m.index);
      } else {
        const r = await toolStep(t, step, step.tool!, renderDeep(step.args ?? {}, values));
        toolCalls++;
        if (r.isError)
          throw new StepFailed(step.id, `the tool call failed: ${r.output.slice(0, 300)}`);
        output = r.output;
      }
      outputs[step.id] = output;
      const short = output.length > SHORT ? `${output.slice(0, SHORT)}…` : output;
      setStepState(t.db, run.id, step.id, {
        status: 'completed',
        started_at: started,
        ended_at: new Date().toISOString(),
        output: short,
      });
      t.announce('workflow.step_completed', { ...base, step: step.id, output: short });
    }
  } catch (err) {
    const interrupted = t.signal.aborted;
    // Stopped by a restart past its drain bound, not by the user: the run says so, as a turn does.
    const restarted = t.signal.reason instanceof RestartInterrupt;
    const stepId = err instanceof StepFailed ? err.step : (current?.id ?? null);
    const message = restarted
      ? 'svc restarted before the run finished (it ran past restart.drain_seconds)'
      : interrupted
        ? 'the run was interrupted'
        : (err as Error).message;
    if (stepId) {
      const prev = getRun(t.db, run.id)?.steps[stepId];
      setStepState(t.db, run.id, stepId, {
        status: 'failed',
        started_at: prev?.started_at ?? new Date().toISOString(),
        ended_at: new Date().toISOString(),
        output: err instanceof StepFailed ? err.output : null,
      });
      // The steps that will not run now say so instead of staying pending.
      const states = getRun(t.db, run.id)?.steps ?? {};
      for (const s of wf.steps)
        if (!Object.hasOwn(states, s.id) && s.id !== stepId)
          setStepState(t.db, run.id, s.id, {
            status: 'skipped',
            started_at: new Date().toISOString(),
            ended_at: new Date().toISOString(),
            output: null,
          });
    }
    log.warn(`a workflow run ${interrupted ? 'was interrupted' : 'failed'}`, {
      workflow: run.workflow,
      run: run.id,
      session: t.session.id,
      step: stepId,
      error: message,
    });
    setRunStatus(t.db, run.id, interrupted ? 'interrupted' : 'failed', {
      error: message,
      ...(stepId ? { failed_step: stepId } : {}),
    });
    t.announce('workflow.run_failed', {
      ...base,
      step: stepId,
      reason: restarted ? 'restarted' : interrupted ? 'interrupted' : 'step_failed',
      message,
    });
    if (interrupted || !(err instanceof StepFailed)) throw err;
    throw new WorkflowFailure(`Step "${err.step}" failed: ${err.message}`);
  }
  setRunStatus(t.db, run.id, 'completed');
  const last = wf.steps.length ? (outputs[runOrder(wf.steps).at(-1)!.id] ?? '') : '';
  t.announce(
    'workflow.run_completed',
    viewSummary({
      ...base,
      outputs: Object.fromEntries(
        Object.entries(outputs).map(([k, v]) => [
          k,
          v.length > SHORT ? `${v.slice(0, SHORT)}…` : v,
        ]),
      ),
    }),
  );
  const reply = appendMessage(t.db, t.session.id, {
    role: 'assistant',
    content: { text: `Workflow "${run.workflow}" completed.\n\n${last}`, stop_reason: 'end_turn' },
  });
  t.publish('message.committed', { message: messageSummary(reply) });
  return { usage, stopReason: 'end_turn', text: last, toolCalls, steps: wf.steps.length };
}

/** An agent step: its prompt as a user message, then the agent loop over this step's messages only. */
async function promptStep(
  t: WorkflowTurn,
  step: WorkflowStep,
  prompt: string,
): Promise<LoopOutcome> {
  const msg = appendMessage(t.db, t.session.id, { role: 'user', content: { text: prompt } });
  t.publish('message.committed', { message: messageSummary(msg) });
  const m = t.model(step.model);
  return runLoop({
    meter: t.meter,
    db: t.db,
    paths: t.paths,
    turnId: t.turnId,
    session: t.session,
    provider: m.provider,
    model: m.model,
    maxOutputTokens: m.maxOutputTokens,
    vision: m.vision,
    system: t.system,
    registry: t.registry,
    signal: t.signal,
    maxSteps: t.maxSteps,
    publish: t.publish,
    cut: t.cut,
    sinceSeq: msg.seq - 1,
  });
}

/** A shell or tool step: one tool call recorded as the assistant asking for it, then its result, as in a chat. */
async function toolStep(
  t: WorkflowTurn,
  step: WorkflowStep,
  tool: string,
  args: unknown,
): Promise<{ output: string; isError: boolean }> {
  const callId = `wf_${step.id}_${t.turnId.slice(-8)}`;
  const argText = JSON.stringify(args);
  const ask = appendMessage(t.db, t.session.id, {
    role: 'assistant',
    content: {
      text: `Step ${step.id}`,
      tool_calls: [{ id: callId, name: tool, arguments: argText }],
      stop_reason: 'tool_use',
    },
  });
  t.publish('message.committed', { message: messageSummary(ask) });
  t.publish('turn.tool_call', toolCallData({ id: callId, name: tool, arguments: argText }));
  const result = await t.registry.call(tool, argText, {
    sessionId: t.session.id,
    turnId: t.turnId,
    callId,
    workingDir: t.session.working_dir,
    signal: t.signal,
    db: t.db,
    paths: t.paths,
    emit: callEmit(t.publish, callId),
  });
  t.signal.throwIfAborted();
  const toolMessage = appendMessage(t.db, t.session.id, {
    role: 'tool',
    content: {
      tool_call_id: callId,
      name: tool,
      output: result.output,
      ...(result.isError ? { is_error: true } : {}),
    },
  });
  t.publish(
    'turn.tool_result',
    toolResultData({ id: callId, name: tool }, result.output, result.isError === true, toolMessage),
  );
  return { output: result.output, isError: result.isError === true };
}

/** The last lines of a step's output (its exit code line dropped), at most 2 KB. */
function lastLines(s: string, n = 10): string {
  return s
    .replace(/\n?\[exit code \d+\]$/, '')
    .trimEnd()
    .split('\n')
    .slice(-n)
    .join('\n')
    .slice(-2048);
}

/** A command that names a path under /tmp: inside the sandbox /tmp is the command's own. */
function privateTmpNote(command: string): string {
  return /(^|[\s'"=])\/tmp\//.test(command)
    ? ' (the command names a path under /tmp: in the sandbox /tmp is private to the command, so files there on this machine are not visible; use a folder outside /tmp)'
    : '';
}

function lastLine(s: string): string {
  return s.trim().split('\n').at(-1)?.slice(0, 300) ?? '';
}
