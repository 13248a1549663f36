import { capNoted, checkBudget, endBudget, OutOfTime, startBudget } from './budget.js';
import { ALWAYS_ASK, builtinRules, fallbackVerdict, WRITE_TOOLS } from './defaults.js';
import { unknownTarget } from './fail-closed.js';
import { hostOf, isInside, resolvePath, type Places } from './glob.js';
import { hardDenyCommand, hardDenyWrite } from './hard-deny.js';
import { knownCommand } from './known.js';
import { commandUnits, ruleMatches, type Unit } from './match.js';
import { shellParserReady } from './parser.js';
import { realBudgetExceeded, realish, resetRealBudget } from './real.js';
import type { Rule, RuleSet, Verdict } from './rules.js';
import { parseShell, type ParsedLine } from './shell.js';
import { defaultForTool, rulesForTool } from './tool-names.js';

/**
 * Decides one tool call: hard denies first, then your rules, the built-in rules, your default
 * and the built-in default. A terminal line is judged command by command (each one it runs,
 * nested ones included) and the strictest answer wins, so `ls && curl x` asks.
 */

export interface EvalInput {
  tool: string;
  command?: string;
  path?: string;
  url?: string;
  /** The session's working folder (relative paths start there, else in the home folder). */
  cwd: string | null;
}

export interface EvalEnv {
  home: string;
  svcHome: string;
  /** svc's own processes (supervisor, gateway, workers): killing them is refused. */
  svcPids: readonly number[];
  /**
   * Whether terminal commands run inside an OS sandbox. Without one the engine fails closed: a
   * command it does not know asks, and what it cannot see through asks even in auto mode.
   */
  sandboxed: boolean;
}

export interface Decision {
  verdict: Verdict;
  /** One sentence for the user and the model. */
  reason: string;
  /** The rule that decided (`hard: rm-root`, `permissions.yml: terminal #2`, `built-in: network tools`), or null for a tool's default. */
  rule: string | null;
  /** A hard deny: no rule file or mode changes it. */
  hard: boolean;
  /** An ask that no mode turns into allow (restart_server). */
  askAlways?: true;
}

export type PermissionMode = 'interactive' | 'auto' | 'strict';

/** How strict a verdict is: where several rules or checks decide, the strictest stands. */
export const RANK: Readonly<Record<Verdict, number>> = { allow: 0, ask: 1, deny: 2 };

function strongest(rules: readonly Rule[], unit: Unit, places: Places): Rule | null {
  let best: Rule | null = null;
  for (const r of rules)
    if ((best === null || RANK[r.verdict] > RANK[best.verdict]) && ruleMatches(r, unit, places))
      best = r;
  return best;
}

function shown(unit: Unit, tool: string): string {
  if (!unit.words || unit.words.length === 0) return `this ${tool} call`;
  const text = unit.words.join(' ');
  return `\`${text.length > 80 ? text.slice(0, 79) + '…' : text}\``;
}

function userReason(rule: Rule, unit: Unit, tool: string): string {
  if (rule.reason) return rule.reason;
  const label = rule.label;
  if (rule.verdict === 'allow') return `Allowed by your rule (${label}).`;
  if (rule.verdict === 'ask') return `Your rule (${label}) asks before ${shown(unit, tool)}.`;
  return `Your rule (${label}) denies ${shown(unit, tool)}.`;
}

function fallbackReason(tool: string, verdict: Verdict, cwd: string | null): string {
  if (verdict === 'allow')
    return tool === 'terminal'
      ? 'No rule asks about this command, so it runs.'
      : `${tool} is allowed by default.`;
  if (WRITE_TOOLS.has(tool)) {
    return cwd === null
      ? 'This session has no working folder, so changing files needs your approval.'
      : "This changes a file outside the session's working folder, so it needs your approval.";
  }
  if (verdict === 'ask') return `svc has no rule for the tool ${tool}, so it asks first.`;
  return `${tool} is denied by default.`;
}

/** The decision for one unit; null for a wrapper unit that no rule names. */
function decideUnit(
  input: EvalInput,
  unit: Unit,
  set: RuleSet,
  places: Places,
  sandboxed: boolean,
): Decision | null {
  const mine = rulesForTool(set, input.tool);
  const own = strongest(mine, unit, places);
  if (own) {
    if (own.verdict === 'allow' && ALWAYS_ASK.has(input.tool)) {
      return {
        verdict: 'ask',
        reason: `${input.tool} always asks first; a rule cannot allow it without asking.`,
        rule: own.label,
        hard: false,
      };
    }
    return {
      verdict: own.verdict,
      reason: userReason(own, unit, input.tool),
      rule: own.label,
      hard: false,
    };
  }
  const builtin = strongest(builtinRules(input.tool), unit, places);
  if (builtin)
    return {
      verdict: builtin.verdict,
      reason: builtin.reason ?? '',
      rule: builtin.label,
      hard: false,
    };
  if (unit.wrapper) return null;
  if (
    input.tool === 'terminal' &&
    !sandboxed &&
    defaultForTool(set, input.tool) === undefined &&
    !knownCommand(unit, places)
  )
    return {
      verdict: 'ask',
      reason: `${shown(unit, input.tool)} is not a command svc knows, and commands run without a sandbox here, so nothing would limit what it does; it needs your approval.`,
      rule: 'built-in: unknown without a sandbox',
      hard: false,
    };
  return fallback(input, set);
}

function fallback(input: EvalInput, set: RuleSet): Decision {
  const own = defaultForTool(set, input.tool);
  if (own)
    return {
      verdict: own,
      reason: `Your permissions.yml makes "${own}" the default for ${input.tool}.`,
      rule: 'permissions.yml: default',
      hard: false,
    };
  const verdict = fallbackVerdict(input.tool);
  return {
    verdict,
    reason: fallbackReason(input.tool, verdict, input.cwd),
    rule: null,
    hard: false,
  };
}

/**
 * Turns a decision into an ask that no session mode lets through (auto included): for a call
 * that reaches svc's own folder, and the hook for a terminal command that would step outside an
 * OS sandbox. A deny stays a deny.
 */
export function insistOnAsk(decision: Decision, reason: string, rule: string): Decision {
  if (decision.verdict === 'deny') return decision;
  return { verdict: 'ask', reason, rule, hard: false, askAlways: true };
}

const SVC_HOME_REASON =
  "This command reaches into svc's own folder ($SVC_HOME), where its keys, database and permission rules live; from there the agent could read the access key or change its own session's mode or rules. It always asks, whatever the session's mode.";

/** Whether `text` holds the path `folder` ending at a separator or at the end of a name. */
function namesFolder(text: string, folder: string): boolean {
  for (let at = text.indexOf(folder); at >= 0; at = text.indexOf(folder, at + 1)) {
    const next = text[at + folder.length];
    if (next === undefined || !/[A-Za-z0-9._-]/.test(next)) return true;
  }
  return false;
}

/** Whether a terminal line works in, names or writes inside svc's folder. */
function touchesSvcHome(line: ParsedLine, units: readonly Unit[], env: EvalEnv): boolean {
  if (line.code.svcHome) return true;
  const homes = [...new Set([env.svcHome, realish(env.svcHome)])];
  const inside = (p: string) => homes.some((h) => isInside(p, h));
  // Named in a word (`--config=/home/u/.svc/x`, `"$HOME/.svc"`) as a folder: `~/.svc-backup` is not it.
  const names = (w: string) => homes.some((h) => namesFolder(w, h));
  for (const cmd of line.commands) {
    if (cmd.cwds?.some((c) => inside(c) || inside(realish(c)))) return true;
    if (cmd.words.some(names)) return true;
    if (cmd.redirects.some((r) => names(r.target))) return true;
  }
  return units.some((u) => u.paths.some(inside));
}

/** Any failure inside the engine is a refusal, never a failed turn and never an allow. */
export function evaluate(input: EvalInput, rules: RuleSet, env: EvalEnv): Decision {
  startBudget();
  try {
    return evaluateOrThrow(input, rules, env);
  } catch (err) {
    if (err instanceof OutOfTime) {
      const d: Decision = { verdict: 'ask', reason: '', rule: null, hard: false };
      return insistOnAsk(
        d,
        "This command could not be checked: it is too complex to judge in time. It always asks, whatever the session's mode.",
        'built-in: unread',
      );
    }
    return {
      verdict: 'deny',
      reason: `Refused: this call could not be checked (${err instanceof Error ? err.message : String(err)}), so it does not run.`,
      rule: 'hard: unchecked',
      hard: true,
    };
  } finally {
    endBudget();
  }
}

function evaluateOrThrow(input: EvalInput, rules: RuleSet, env: EvalEnv): Decision {
  resetRealBudget();
  const places: Places = { home: env.home, svcHome: env.svcHome, cwd: input.cwd };
  const base = input.cwd ?? env.home;
  const units: Unit[] = [];
  let unknown: string | null = null;
  let unread: string | null = null;
  let svcHome = false;
  let protectedCode: string | null = null;
  if (typeof input.command === 'string') {
    if (!shellParserReady()) throw new Error('the bash grammar is not loaded yet');
    const line = parseShell(input.command, {
      home: env.home,
      svcHome: env.svcHome,
      cwd: input.cwd,
    });
    const hard = hardDenyCommand(line, { ...env, cwd: input.cwd });
    if (hard) return { verdict: 'deny', reason: hard.reason, rule: `hard: ${hard.id}`, hard: true };
    // What we could not see might be anything: refuse rather than let auto mode run it.
    if (line.tooDeep)
      return {
        verdict: 'deny',
        reason:
          'Refused: this command nests commands too deeply to check. Write it as simpler steps.',
        rule: 'hard: too-deep',
        hard: true,
      };
    units.push(...commandUnits(line, places));
    unknown = line.unknown[0] ?? null;
    unread = line.unread;
    for (const cmd of line.commands) unknown ??= unknownTarget(cmd);
    svcHome = touchesSvcHome(line, units, env);
    protectedCode = line.code.protectedRefs[0] ?? null;
    if (realBudgetExceeded())
      unknown ??= 'more paths than the check resolves through symbolic links';
  }
  const path = typeof input.path === 'string' ? resolvePath(input.path, base, env.home) : null;
  if (path !== null && WRITE_TOOLS.has(input.tool)) {
    const hard = hardDenyWrite(path, input.cwd);
    if (hard) return { verdict: 'deny', reason: hard.reason, rule: `hard: ${hard.id}`, hard: true };
  }
  const host = typeof input.url === 'string' ? hostOf(input.url) : null;
  if (path !== null || host !== null || typeof input.command !== 'string') {
    units.push({
      words: null,
      dynamic: [],
      cmd: null,
      wrapper: false,
      paths: path ? [path] : [],
      unknownPath: false,
      hosts: host ? [host] : [],
    });
  }

  let best: Decision | null = null;
  for (const unit of units) {
    checkBudget();
    const d = decideUnit(input, unit, rules, places, env.sandboxed);
    if (d && (best === null || RANK[d.verdict] > RANK[best.verdict])) best = d;
  }
  let decision = best ?? fallback(input, rules);
  const cap = capNoted();
  if (cap !== null && decision.verdict !== 'deny')
    decision = insistOnAsk(
      decision,
      `This command could not be checked in full: it holds ${cap}, past what the check follows. It always asks, whatever the session's mode.`,
      'built-in: budget',
    );
  else if (unread !== null)
    decision = insistOnAsk(
      decision,
      `This command could not be checked: ${unread}. It always asks, whatever the session's mode; to run long content, write it to a file first.`,
      'built-in: unread',
    );
  else if (svcHome) decision = insistOnAsk(decision, SVC_HOME_REASON, 'built-in: svc home');
  else if (protectedCode !== null)
    decision = insistOnAsk(
      decision,
      `This runs inline code that names ${protectedCode}, which the hard limits protect, and the check cannot see what the code does with it. It always asks, whatever the session's mode.`,
      'built-in: inline code',
    );
  else if (unknown !== null && !env.sandboxed && typeof input.command === 'string')
    // Nothing bounds a command that runs unsandboxed: what the check cannot see never runs unasked.
    decision = insistOnAsk(
      decision,
      `This command holds ${unknown}, which the permission check cannot see through, and commands run without a sandbox here. It always asks, whatever the session's mode.`,
      'built-in: could not see through',
    );
  else if (unknown !== null && decision.verdict === 'allow') {
    decision = {
      verdict: 'ask',
      reason: `This command holds ${unknown}, which the permission check cannot see through, so it needs your approval.`,
      rule: 'built-in: could not see through',
      hard: false,
    };
  }
  return decision.verdict === 'ask' && ALWAYS_ASK.has(input.tool)
    ? { ...decision, askAlways: true }
    : decision;
}

/**
 * What the session mode makes of a decision: interactive asks the user, auto lets asks through,
 * strict refuses them. Allow and deny stay as they are; an always-ask (restart_server) is never
 * let through by auto.
 */
export function applyMode(decision: Decision, mode: PermissionMode): Verdict {
  if (decision.verdict !== 'ask') return decision.verdict;
  if (mode === 'strict') return 'deny';
  if (mode === 'auto' && !decision.askAlways) return 'allow';
  return 'ask';
}
