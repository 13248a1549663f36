import type { Config } from '../../shared/config/schema.js';
import { redactConfigSecrets } from '../../shared/config/secrets.js';
import { startChild } from '../../shared/child.js';
import { redact } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { openDb } from '../../shared/store/db.js';
import { cronApprovalTimeout } from '../../shared/store/cron-approval.js';
import type { EventPayload } from '../../shared/protocol/ipc.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import { Approvals } from './approvals.js';
import { RulesGate } from './permission-gate.js';
import { emptyRules } from './permissions/rules.js';
import { readRules, setToolDefault, toolDefault } from './permissions/tool-defaults.js';
import { probeModel } from './providers/index.js';
import { TurnRunner } from './turn-runner.js';
import { runningCount } from './tools/shell/background.js';
import { onGroupsChange } from './tools/shell/process-group.js';
import { toolOutputCap } from './tools/shell/output-log.js';
import { configureTelemetry } from '../../shared/telemetry/trace.js';

/**
 * An agent worker: runs turns and provider probes. It holds provider keys, so each one is
 * registered for log scrubbing the moment it arrives.
 */
const paths = resolvePaths();
let config: Config | undefined;
let runner: TurnRunner | undefined;
const approvals = new Approvals();
const endpoint = startChild('agent', () => runner?.inflight ?? 0);
// A kill -9 skips this worker's exit hook: the supervisor then stops its commands' groups.
onGroupsChange((pgids) => endpoint.emit('child.process_groups', { pgids }));

endpoint.handle('child.start', (start) => {
  config = start.config;
  redactConfigSecrets(config);
  toolOutputCap.bytes = config.agent.tool_output_max_bytes;
  const db = openDb(paths.db);
  const current = () => config ?? start.config;
  // Cron turns: an approval waits approval_timeout_seconds (the task's, else config's), and the cron worker hears of it.
  const unattended = {
    timeoutSeconds: (sessionId: string) =>
      cronApprovalTimeout(db, sessionId) ?? current().cron.approval_timeout_seconds,
    interactiveTimeoutSeconds: () => current().agent.approval_timeout_seconds,
    tell: (e: EventPayload<'cron.approval'>) => endpoint.emit('cron.approval', e),
  };
  runner = new TurnRunner(
    endpoint,
    db,
    paths,
    current,
    new RulesGate(db, paths, approvals, { enabled: () => current().sandbox.enabled }, unattended),
  );
  // Not awaited: a turn handed over at once waits for it itself (TurnRunner.run).
  void configureTelemetry(config.telemetry, 'agent');
  return {};
});
endpoint.onEvent((event) => {
  if (event.type !== 'config.changed') return;
  config = event.payload.config;
  redactConfigSecrets(config);
  toolOutputCap.bytes = config.agent.tool_output_max_bytes;
  void configureTelemetry(config.telemetry, 'agent');
});
let retiring = false;
endpoint.handle('agent.retire', () => {
  const turns = runner?.inflight ?? 0;
  if (turns > 0) return { retired: false, why: `${turns} turn(s) running` };
  const background = runningCount();
  if (background > 0)
    return { retired: false, why: `${background} background command(s) still running` };
  retiring = true;
  return { retired: true };
});
endpoint.handle('agent.turn', (req) => {
  if (!runner) throw new Error('the agent worker has not started yet');
  if (retiring) throw new Error('this agent worker is retiring');
  return runner.accept(req);
});
endpoint.handle('agent.approvals', ({ session_id }) => ({ items: approvals.list(session_id) }));
endpoint.handle('agent.approval', ({ session_id, approval_id, decision }) => ({
  answered: approvals.answer(session_id, approval_id, decision),
}));
endpoint.handle('agent.tools', async () => {
  // A broken permissions.yml is said once; the switches wait until it is fixed.
  let rules = emptyRules();
  let problem: string | null = null;
  try {
    rules = readRules(paths.permissions);
  } catch (err) {
    problem = (err as Error).message;
  }
  return {
    rules_problem: problem,
    items: ((await runner?.toolSpecs()) ?? []).map((t) => ({
      name: t.name,
      purpose: t.purpose,
      description: t.description,
      parameters: t.parameters,
      permission: toolDefault(rules, t.name),
    })),
  };
});
endpoint.handle('agent.tool_default', async ({ tool, default: verdict }) => {
  const known = ((await runner?.toolSpecs()) ?? []).some((t) => t.name === tool);
  if (!known)
    throw new IpcCallError('not_found', `There is no tool "${tool}"; GET /api/tools lists them.`);
  return setToolDefault(paths.permissions, tool, verdict);
});
endpoint.handle('agent.interrupt', ({ turn_id, restart }) => ({
  interrupted: runner?.interrupt(turn_id, restart === true) ?? false,
}));
endpoint.handle('agent.probe_model', async (p) => {
  redact(p.api_key);
  const result = await probeModel(
    { protocol: p.protocol, baseUrl: p.base_url, apiKey: p.api_key, providerId: p.provider },
    p.model,
    { timeoutMs: 30_000 },
  );
  return result.ok
    ? { ok: true, latency_ms: result.latency_ms }
    : { ok: false, reason: result.reason, message: result.message };
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => {});
