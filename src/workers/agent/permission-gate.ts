import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { appendAudit, type AuditDecision } from '../../shared/audit.js';
import { log } from '../../shared/log.js';
import type { Paths } from '../../shared/paths.js';
import type { Db } from '../../shared/store/db.js';
import { addGrant, hasGrant } from '../../shared/store/grants.js';
import { MetaStore } from '../../shared/store/meta.js';
import { getSession } from '../../shared/store/sessions.js';
import type { Approvals } from './approvals.js';
import {
  applyMode,
  evaluate,
  loadRules,
  loadShellParser,
  parseRules,
  RANK,
  type Decision,
  type EvalEnv,
  type RuleSet,
} from './permissions/index.js';
import { sandboxStatus, type SandboxOptions } from './sandbox/index.js';
import { OUTSIDE_TOOL, stepOutside } from './sandbox/outside.js';
import { realish } from './tools/files/file-path.js';
import { fileIsPrivateKey } from './tools/files/private-key.js';
import type { PermissionGate, Tool, ToolContext, ToolSubject } from './tools/registry.js';

/** What the gate needs for turns nobody watches: the approval timeout, and where approvals are reported. */
export interface Unattended {
  timeoutSeconds: (sessionId: string) => number;
  /** The bound for an approval a person is asked in a chat (agent.approval_timeout_seconds). */
  interactiveTimeoutSeconds: () => number;
  tell: (e: {
    session_id: string;
    turn_id: string;
    approval_id: string;
    tool: string;
    reason: string;
    state: 'asked' | 'answered' | 'expired';
    decision: string | null;
    why: string | null;
  }) => void;
}

/**
 * The permission engine at work: permissions.yml (re-read when it changes) and the built-in rules
 * decide, the session's mode turns asks into allow or deny, and an ask left standing waits for the
 * user. Every deny, ask and answer goes to the audit log.
 */
export class RulesGate implements PermissionGate {
  private rules: RuleSet | undefined;
  private rulesText: string | undefined;
  /** Sessions already told, in an approval, that commands run without a sandbox. */
  private readonly toldNoSandbox = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly paths: Paths,
    private readonly approvals: Approvals,
    private readonly sandbox?: SandboxOptions,
    /** Turns nobody watches (cron): how long an approval waits, and who hears of it. */
    private readonly unattended?: Unattended,
  ) {
    // The grammar loads once per worker, from its start; a check waits for it (a load failure refuses).
    loadShellParser().catch((err: unknown) =>
      log.error('the bash grammar did not load; terminal commands are refused', {
        error: String(err),
      }),
    );
  }

  async check(
    tool: Tool,
    args: unknown,
    subject: ToolSubject,
    ctx: ToolContext,
  ): Promise<{ allowed: true } | { allowed: false; reason: string }> {
    const mode = getSession(this.db, ctx.sessionId)?.permission_mode ?? 'interactive';
    await loadShellParser().catch(() => undefined);
    let pids: number[] | undefined;
    // The probe runs once per worker (remembered); a terminal call needs it to judge at all.
    let status =
      this.sandbox && (tool.name === 'terminal' || subject.outside !== undefined)
        ? await sandboxStatus(this.sandbox.enabled())
        : undefined;
    // Read from /proc only when a rule looks (a kill command); most calls never do.
    const env: EvalEnv = {
      home: homedir(),
      svcHome: this.paths.home,
      get svcPids() {
        return (pids ??= svcPids());
      },
      // A command approved to step outside runs unsandboxed, and so is judged as one.
      sandboxed: status?.state === 'on' && subject.outside === undefined,
    };
    const rules = this.currentRules();
    const judgedAs = subject.as ?? tool.name;
    let decision = judge(judgedAs, subject, ctx.workingDir, rules, env);
    for (const more of subject.also ?? []) {
      const d = judge(judgedAs, more, ctx.workingDir, rules, env);
      if (RANK[d.verdict] > RANK[decision.verdict]) decision = d;
    }
    // The notice of an unsandboxed session goes with an approval, whatever the tool.
    if (status === undefined && this.sandbox && decision.verdict === 'ask')
      status = await sandboxStatus(this.sandbox.enabled());
    if (subject.outside !== undefined && status) {
      const byName = evaluate(
        { tool: OUTSIDE_TOOL, command: subject.command, cwd: ctx.workingDir },
        rules,
        env,
      );
      decision = stepOutside(decision, byName, subject.outside, ctx.origin, status);
    }
    const verdict = applyMode(decision, mode);
    const input = auditInput(args);
    const audit = (d: AuditDecision, reason?: string) =>
      appendAudit(this.paths.auditLog, {
        session_id: ctx.sessionId,
        turn_id: ctx.turnId,
        tool: tool.name,
        input,
        decision: d,
        reason,
      });
    if (verdict === 'allow') {
      // Built-in tools run unaudited when allowed (they are many and known); MCP tools are outside code.
      if (judgedAs.startsWith('mcp__')) audit('allow', decision.reason);
      return { allowed: true };
    }
    if (verdict === 'deny') {
      const strict = decision.verdict === 'ask';
      audit(strict ? 'strict_denied' : 'deny', decision.reason);
      return {
        allowed: false,
        reason: strict
          ? `${decision.reason} The session is in strict mode, which refuses anything that would ask.`
          : decision.reason,
      };
    }
    const key = grantKey(tool.name, subject, args);
    if (!decision.askAlways && hasGrant(this.db, ctx.sessionId, key)) return { allowed: true };
    audit('ask', decision.reason);
    let answer;
    const watchless = ctx.origin === 'cron' && this.unattended ? this.unattended : undefined;
    // Nobody may ever answer (the page was closed): a turn never waits past the bound.
    const timeoutS = watchless
      ? watchless.timeoutSeconds(ctx.sessionId)
      : this.unattended?.interactiveTimeoutSeconds();
    let approvalId = '';
    const tell = (state: 'asked' | 'answered' | 'expired', d: string | null, why: string | null) =>
      watchless?.tell({
        session_id: ctx.sessionId,
        turn_id: ctx.turnId,
        approval_id: approvalId,
        tool: tool.name,
        reason: decision.reason,
        state,
        decision: d,
        why,
      });
    try {
      answer = await this.approvals.ask(ctx, {
        tool: tool.name,
        input: args,
        reason: decision.reason,
        notice: this.sandboxNotice(ctx.sessionId, status),
        ...(timeoutS === undefined ? {} : { timeoutMs: timeoutS * 1000 }),
        onAsked: (id) => {
          approvalId = id;
          tell('asked', null, null);
        },
      });
    } catch (err) {
      audit('withdrawn', 'the turn was interrupted');
      tell('answered', null, 'withdrawn: the turn was interrupted');
      throw err;
    }
    if (answer === 'expired') {
      const why = watchless
        ? `nobody answered within ${timeoutS} s (approval_timeout_seconds; this turn runs unattended for a scheduled task), so it was denied`
        : `no answer: nobody answered within ${timeoutS} s (agent.approval_timeout_seconds), so it was denied`;
      audit('denied_by_timeout', why);
      tell('expired', 'deny', why);
      return { allowed: false, reason: `${tool.name} was not approved: ${why}.` };
    }
    tell('answered', answer, answer === 'deny' ? 'denied by the user' : 'approved by the user');
    if (answer === 'deny') {
      audit('denied_by_user');
      return { allowed: false, reason: `the user declined to run ${tool.name}.` };
    }
    audit(answer);
    if (answer === 'allow_session' && !decision.askAlways) addGrant(this.db, ctx.sessionId, key);
    return { allowed: true };
  }

  /** The first approval of a session where commands run unsandboxed says so, with the fix. */
  private sandboxNotice(
    sessionId: string,
    status: { state: string; message: string } | undefined,
  ): string | undefined {
    if (!status || status.state === 'on' || this.toldNoSandbox.has(sessionId)) return undefined;
    this.toldNoSandbox.add(sessionId);
    return status.message;
  }

  /** permissions.yml is read at every check (it is small): an edit applies to the next tool call. */
  private currentRules(): RuleSet {
    let text: string | undefined;
    try {
      text = readFileSync(this.paths.permissions, 'utf8');
    } catch {
      text = undefined;
    }
    if (this.rules && text === this.rulesText) return this.rules;
    const loaded = loadRules(this.paths.permissions, this.rules ?? this.lastGood());
    if (loaded.problem)
      log.warn('permissions.yml has a problem; the previous or built-in rules apply', {
        problem: loaded.problem,
      });
    else this.keepLastGood(text ?? '');
    this.rules = loaded.rules;
    this.rulesText = text;
    return loaded.rules;
  }

  /**
   * The last good rules live in svc.db, not only in this worker: one started after the file broke
   * (an idle worker retired, a crashed one replaced, a restart) keeps them too, instead of
   * falling back to the built-in rules and dropping the user's denies.
   */
  private lastGood(): RuleSet | undefined {
    const text = new MetaStore(this.db).get(LAST_GOOD_RULES);
    if (!text) return undefined;
    const parsed = parseRules(text, this.paths.permissions);
    return parsed.problem === undefined ? parsed.rules : undefined;
  }

  /** `text` was read without a problem ('' for no file: no rules of the user's). */
  private keepLastGood(text: string): void {
    const meta = new MetaStore(this.db);
    if (meta.get(LAST_GOOD_RULES) !== text) meta.set(LAST_GOOD_RULES, text);
  }
}

const LAST_GOOD_RULES = 'permissions_last_good';

const READERS = new Set(['read_file', 'grep']);

/**
 * The rules match paths as written, so a symbolic link (say `keys` -> ~/.ssh, or `out` -> a folder
 * outside the working folder, which a command can create) must not carry a file tool past them:
 * a path that really leads elsewhere is judged again by where it leads, and the stricter
 * decision stands.
 */
function judge(
  tool: string,
  subject: ToolSubject,
  cwd: string | null,
  rules: RuleSet,
  env: EvalEnv,
): Decision {
  const named = evaluate({ tool, ...subject, cwd }, rules, env);
  if (subject.path === undefined) return named;
  const path = realish(subject.path);
  const decided = throughLinks(tool, subject, path, cwd, rules, env, named);
  // A private key is one by what it holds, whatever its name (`deploy.pem`, `server-key`).
  if (
    READERS.has(tool) &&
    decided.verdict !== 'deny' &&
    !decided.rule?.startsWith('permissions.yml') &&
    fileIsPrivateKey(path)
  ) {
    return {
      verdict: 'deny',
      reason: `${subject.path} holds a private key, which is not read into the conversation unless your permissions.yml allows it.`,
      rule: 'built-in: keys',
      hard: false,
    };
  }
  return decided;
}

function throughLinks(
  tool: string,
  subject: ToolSubject,
  path: string,
  cwd: string | null,
  rules: RuleSet,
  env: EvalEnv,
  named: Decision,
): Decision {
  const realCwd = cwd === null ? null : realish(cwd);
  if (path === subject.path && realCwd === cwd) return named;
  const real = evaluate({ tool, ...subject, path, cwd: realCwd }, rules, {
    ...env,
    home: realish(env.home),
    svcHome: realish(env.svcHome),
  });
  if (RANK[real.verdict] <= RANK[named.verdict]) return named;
  return {
    ...real,
    reason: `${real.reason} (${subject.path} leads to ${path} through a symbolic link.)`,
  };
}

/** What "allow for this session" remembers: the tool and what it touched. */
function grantKey(tool: string, subject: ToolSubject, args: unknown): string {
  const what = subject.command ?? subject.path ?? subject.url ?? JSON.stringify(args);
  // A grant for one set of places is not one for another that starts the same way.
  const more = (subject.also ?? []).map((s) => s.path ?? s.url ?? '').join('\u0000');
  return `${tool}\u0000${what}${more ? `\u0000${more}` : ''}`;
}

function auditInput(args: unknown): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : { value: args };
}

/** This worker, the supervisor and the supervisor's other children (Linux /proc; else the two we know). */
function svcPids(): number[] {
  const pids = new Set([process.pid, process.ppid]);
  try {
    for (const p of readFileSync(`/proc/${process.ppid}/task/${process.ppid}/children`, 'utf8')
      .trim()
      .split(/\s+/))
      if (p) pids.add(Number(p));
  } catch {
    // not Linux: the supervisor and this worker are still protected
  }
  return [...pids];
}
