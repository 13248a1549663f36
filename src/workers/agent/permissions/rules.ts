import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import type { Unit } from './match.js';
import type { Places } from './glob.js';

/**
 * `$SVC_HOME/permissions.yml`: the user's rules. Shape (every key optional):
 *
 *   terminal:                         # a tool name, or "*" for every tool
 *     - default: ask                  # when no rule (yours or built-in) matches this tool
 *     - allow: { command: "npm test" }
 *     - ask:   { command: ["git push", "gh pr merge"], reason: "I review pushes" }
 *     - deny:  { command: "docker system prune" }
 *     - allow: { command: curl, host: ["*.github.com", "registry.npmjs.org"] }
 *   write_file:
 *     - allow: { path: "~/notes/**" }
 *     - deny:  { path: ["$CWD/dist/**", "!$CWD/dist/keep.txt"] }
 *   web_fetch:
 *     - deny:  { host: "*.internal.example.com" }
 *
 * A rule is one of allow / ask / deny with a matcher; every key given must match (`{}` matches
 * every call). `command`: words matched against each command the line runs, after wrappers like
 * sudo and env — for allow the pattern must be the command's first words (`npm test` allows
 * `npm test -- --watch`), for ask and deny each word must appear in that order (`git push
 * --force` catches `git push origin main --force`); `*` in a word is a wildcard. `path`: globs
 * (`**`, `*`, `{a,b}`, `~`, `$CWD`, `$HOME`, `$SVC_HOME`; relative ones are under `$CWD`; `!`
 * excludes) against the tool's path, or for terminal the command's file arguments and
 * redirections. `host`: `*.example.com` globs against the URL's host, or URLs and user@host
 * arguments of a command.
 *
 * Tiers, not order: among your rules deny beats ask beats allow; your rules come before the
 * built-in ones (so you can allow what a default asks about, or tighten it); then `default`, then
 * the built-in default for the tool. Hard denies and restart_server's ask cannot be lifted.
 */

export type Verdict = 'allow' | 'ask' | 'deny';

export interface Rule {
  verdict: Verdict;
  /** Command patterns, each a list of words; null when the rule does not look at commands. */
  commands: string[][] | null;
  /** Path globs; null when the rule does not look at paths. */
  paths: string[] | null;
  /** Host globs; null when the rule does not look at hosts. */
  hosts: string[] | null;
  /** Said to the user and the model when this rule decides. */
  reason: string | null;
  /** Where the rule comes from: `permissions.yml: terminal #2`, `built-in: network tools`. */
  label: string;
  /** Built-in rules only: a further condition in code. */
  test?: (unit: Unit, places: Places) => boolean;
}

export interface RuleSet {
  /** Rules by tool name; `*` holds rules for every tool. */
  rules: Map<string, Rule[]>;
  /** `- default: …` entries by tool name (or `*`). */
  defaults: Map<string, Verdict>;
}

export const emptyRules = (): RuleSet => ({ rules: new Map(), defaults: new Map() });

const list = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const matcher = z.strictObject({
  command: list.optional(),
  path: list.optional(),
  host: list.optional(),
  reason: z.string().optional(),
});
const verdict = z.enum(['allow', 'ask', 'deny']);

const asList = (v: string | string[] | undefined): string[] | null =>
  v === undefined ? null : Array.isArray(v) ? v : [v];

/** A command pattern's words: split on blanks, quotes group words (`git commit -m "wip"`). */
export function patternWords(pattern: string): string[] {
  const words: string[] = [];
  let cur: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else cur += c === '\\' && quote === '"' && i + 1 < pattern.length ? pattern[++i]! : c;
    } else if (c === '"' || c === "'") {
      quote = c;
      cur ??= '';
    } else if (/\s/.test(c)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else cur = (cur ?? '') + (c === '\\' && i + 1 < pattern.length ? pattern[++i]! : c);
  }
  if (cur !== null) words.push(cur);
  return words;
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')} (use command, path, host, reason)`;
  const at = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  if (issue.code === 'invalid_union') return `${at}must be a string or a list of strings`;
  return `${at}${issue.message}`;
}

function parseRule(
  item: unknown,
  where: string,
  label: string,
  problems: string[],
): { rule?: Rule; fallback?: Verdict } {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    problems.push(`${where}: a rule must be a mapping like {allow: {command: "…"}}`);
    return {};
  }
  const keys = Object.keys(item);
  if (keys.length !== 1 || !['allow', 'ask', 'deny', 'default'].includes(keys[0]!)) {
    problems.push(
      `${where}: a rule has exactly one of allow, ask, deny or default (found ${keys.map((k) => `"${k}"`).join(', ') || 'nothing'})`,
    );
    return {};
  }
  const key = keys[0]!;
  const value: unknown = (item as Record<string, unknown>)[key];
  if (key === 'default') {
    const v = verdict.safeParse(value);
    if (!v.success) problems.push(`${where}: default must be allow, ask or deny`);
    return v.success ? { fallback: v.data } : {};
  }
  if (value === null || value === undefined) {
    problems.push(`${where}: ${key} needs a matcher; write \`${key}: {}\` to match every call`);
    return {};
  }
  const blank =
    typeof value === 'object' ? Object.entries(value).find(([, v]) => v === null) : undefined;
  if (blank) {
    problems.push(`${where}: ${blank[0]} is empty (a bare ~ means nothing in YAML; write "~")`);
    return {};
  }
  const m = matcher.safeParse(value);
  if (!m.success) {
    problems.push(...m.error.issues.map((i) => `${where}: ${issueText(i)}`));
    return {};
  }
  const commands = asList(m.data.command)?.map(patternWords) ?? null;
  if (commands?.some((c) => c.length === 0)) {
    problems.push(`${where}: an empty command pattern; leave command out to match every command`);
    return {};
  }
  return {
    rule: {
      verdict: key as Verdict,
      commands,
      paths: asList(m.data.path),
      hosts: asList(m.data.host),
      reason: m.data.reason ?? null,
      label,
    },
  };
}

/** Parses permissions.yml text. On any problem no rule of the file is used (a half-read file could drop a deny). */
export function parseRules(
  text: string,
  source = 'permissions.yml',
): { rules: RuleSet; problem?: string } {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const pos = first.linePos?.[0];
    return {
      rules: emptyRules(),
      problem: `${source}${pos ? `:${pos.line}:${pos.col}` : ''}: not valid YAML: ${first.message.split('\n')[0]}`,
    };
  }
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return {
      rules: emptyRules(),
      problem: `${source}: the top level must map tool names to lists of rules`,
    };
  const set = emptyRules();
  const problems: string[] = [];
  const name = source.slice(source.lastIndexOf('/') + 1); // labels stay short: "permissions.yml: terminal #2"
  for (const [tool, items] of Object.entries(raw)) {
    // `sandbox:` is the OS sandbox's section (src/workers/agent/sandbox/policy.ts), not a tool.
    if (items === null || tool === 'sandbox') continue;
    if (!Array.isArray(items)) {
      problems.push(`${source}: ${tool} must be a list of rules (each line starting with "- ")`);
      continue;
    }
    const rules: Rule[] = [];
    items.forEach((item: unknown, k) => {
      const { rule, fallback } = parseRule(
        item,
        `${source}: ${tool} #${k + 1}`,
        `${name}: ${tool} #${k + 1}`,
        problems,
      );
      if (rule) rules.push(rule);
      if (fallback) set.defaults.set(tool, fallback);
    });
    if (rules.length > 0) set.rules.set(tool, rules);
  }
  if (problems.length > 0) {
    const more = problems.length > 5 ? `\n(and ${problems.length - 5} more)` : '';
    return { rules: emptyRules(), problem: problems.slice(0, 5).join('\n') + more };
  }
  return { rules: set };
}

/**
 * Reads the rules file. A missing file means no rules of yours; an unreadable or invalid one is
 * reported in `problem` (never thrown), and then `previous` (the last good rules) or none are used,
 * so the built-in defaults and hard denies always apply.
 */
export function loadRules(file: string, previous?: RuleSet): { rules: RuleSet; problem?: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { rules: emptyRules() };
    return {
      rules: previous ?? emptyRules(),
      problem: `${file}: cannot read: ${(err as Error).message}`,
    };
  }
  const parsed = parseRules(text, file);
  if (parsed.problem !== undefined)
    return { rules: previous ?? emptyRules(), problem: parsed.problem };
  return parsed;
}
