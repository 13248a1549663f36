import type { Rule, RuleSet, Verdict } from './rules.js';

/**
 * permissions.yml names tools exactly, or with `*` wildcards (`mcp__github__*` for every tool of
 * one MCP server, `mcp__*` for all of them). Matched with a linear two-pointer scan, never a
 * backtracking regex.
 */
export function toolNameMatches(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === name[n]) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

const isPattern = (key: string) => key !== '*' && key.includes('*');

/** The user's rules for a tool: those under its own name, under every pattern it matches, and under `*`. */
export function rulesForTool(set: RuleSet, tool: string): Rule[] {
  const out = [...(set.rules.get(tool) ?? [])];
  for (const [key, rules] of set.rules)
    if (isPattern(key) && toolNameMatches(key, tool)) out.push(...rules);
  out.push(...(set.rules.get('*') ?? []));
  return out;
}

/** The user's default for a tool: its own, else the longest pattern that matches it, else `*`'s. */
export function defaultForTool(set: RuleSet, tool: string): Verdict | undefined {
  const own = set.defaults.get(tool);
  if (own) return own;
  let best: [string, Verdict] | undefined;
  for (const [key, v] of set.defaults)
    if (isPattern(key) && toolNameMatches(key, tool) && (!best || key.length > best[0].length))
      best = [key, v];
  return best?.[1] ?? set.defaults.get('*');
}
