import { checkBudget, LIMITS, noteCap } from './budget.js';
import { globMatches, hostMatches, hostOf, pathMatches, resolveArg, type Places } from './glob.js';
import { realish } from './real.js';
import type { Rule } from './rules.js';
import { safeRegex } from './safe-regex.js';
import { basename, type ParsedLine, type SimpleCommand } from './shell.js';

/**
 * What one rule is checked against. A terminal line gives one unit per command it runs (and one
 * per privilege wrapper in front of it); other tools give a single unit from their path or URL.
 */
export interface Unit {
  /** The words from the command word (or a wrapper) on; null for a tool without a command. */
  words: string[] | null;
  /** Per word in `words`: only known at run time. */
  dynamic: boolean[];
  /** The command this unit comes from (terminal only). */
  cmd: SimpleCommand | null;
  /** A wrapper unit (`sudo …`): it counts only when a rule names it. */
  wrapper: boolean;
  /** Absolute paths the call touches. */
  paths: string[];
  /** Some path argument is only known at run time. */
  unknownPath: boolean;
  hosts: string[];
}

const NET_COMMANDS = new Set([
  'ssh',
  'scp',
  'sftp',
  'rsync',
  'nc',
  'ncat',
  'netcat',
  'telnet',
  'ping',
  'mosh',
  'ftp',
  'dig',
  'host',
  'nslookup',
  'traceroute',
  'socat',
]);
const READ_OPS = new Set(['<', '<>']);

function isRemote(arg: string): boolean {
  return arg.includes('://') || /^[^/\s]+:/.test(arg);
}

/** Hosts named by a command's arguments: URLs, user@host, host:path, and bare names for network tools. */
function hostsOf(cmd: SimpleCommand): string[] {
  const hosts: string[] = [];
  for (const a of cmd.args) {
    if (a.startsWith('-')) continue;
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(a) ? hostOf(a) : null;
    const scp = /^(?:[^@\s/:]+@)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):/.exec(a);
    const userHost = /^[^@\s/:]+@([A-Za-z0-9.-]+)$/.exec(a);
    if (url) hosts.push(url);
    else if (scp && (a.includes('@') || scp[1]!.includes('.') || scp[1] === 'localhost'))
      hosts.push(scp[1]!.toLowerCase().replace(/^\[|\]$/g, ''));
    else if (userHost) hosts.push(userHost[1]!.toLowerCase());
    else if (NET_COMMANDS.has(cmd.name) && /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i.test(a))
      hosts.push(a.toLowerCase());
  }
  return hosts;
}

/**
 * The words a brace expansion makes of a word with nothing else run-time in it (`~/.{ssh,x}`),
 * or null. Bounded: past LIMITS.fields words the check stops and the line asks.
 */
function braces(text: string, home: string): string[] | null {
  if (/[$`'"\\]/.test(text) || !/\{[^{}]*(,|\.\.)[^{}]*\}/.test(text)) return null;
  let words = [text];
  for (let round = 0; round < 8; round++) {
    const next: string[] = [];
    let grew = false;
    for (const w of words) {
      const m = /\{([^{}]*,[^{}]*)\}/.exec(w);
      if (!m) {
        next.push(w);
        continue;
      }
      grew = true;
      for (const alt of m[1]!.split(','))
        next.push(w.slice(0, m.index) + alt + w.slice(m.index + m[0].length));
    }
    words = next;
    if (words.length > LIMITS.fields) {
      noteCap(`a brace expansion of more than ${LIMITS.fields} words`);
      return null;
    }
    if (!grew) break;
  }
  if (words.some((w) => /\{[^{}]*\.\.[^{}]*\}/.test(w))) return null; // {1..9}: a sequence
  return words.map((w) => (w === '~' ? home : w.startsWith('~/') ? home + w.slice(1) : w));
}

/** The folders whose contents the built-in rules protect, as anchors a glob is tried against. */
function anchors(places: Places): string[] {
  const h = places.home;
  return [
    places.svcHome,
    `${h}/.ssh`,
    `${h}/.gnupg`,
    `${h}/.aws`,
    `${h}/.netrc`,
    `${h}/.git-credentials`,
  ];
}

/**
 * The protected paths a glob could reach: where its leading parts match an anchor part by part,
 * the anchor itself and, when the glob goes on below it, the anchor with the rest appended
 * (`~/.ss?/id_*` → `~/.ssh/id_*`, which the key rules match).
 */
function protectedMatches(glob: string, places: Places): string[] {
  const parts = glob.split('/');
  const out: string[] = [];
  for (const anchor of anchors(places)) {
    const a = anchor.split('/');
    if (parts.length < a.length) continue;
    if (!a.every((seg, k) => globMatches(parts[k]!, seg))) continue;
    out.push([...a, ...parts.slice(a.length)].join('/'));
  }
  return out;
}

/** Paths resolved through symbolic links per command at most (each costs a system call). */
const MAX_REAL = 256;

/**
 * The file arguments and redirection targets of a command, made absolute against every folder
 * it may run in, and also as they really lead through symbolic links.
 */
function pathsOf(cmd: SimpleCommand, places: Places): { paths: string[]; unknown: boolean } {
  const paths = new Set<string>();
  let unknown = false;
  let real = 0;
  const add = (text: string, dynamic: boolean) => {
    if (text.length === 0 || isRemote(text)) return;
    if (dynamic) {
      const alternatives = braces(text, places.home);
      if (alternatives) for (const a of alternatives) add(a, false);
      else unknown = true;
      return;
    }
    const bases = text.startsWith('/') ? ['/'] : cmd.cwds;
    if (bases === null) {
      unknown = true;
      return;
    }
    checkBudget();
    for (const b of bases) {
      const abs = resolveArg(text, b);
      paths.add(abs);
      if (real++ < MAX_REAL) paths.add(realish(abs));
      // A glob that could match a protected path is treated as touching it.
      if (/[*?[]/.test(abs)) for (const p of protectedMatches(abs, places)) paths.add(p);
    }
  };
  let done = false;
  cmd.args.forEach((a, k) => {
    const dynamic = cmd.dynamic[cmd.start + 1 + k] ?? false;
    if (!done && a === '--') done = true;
    else if (done || !a.startsWith('-')) add(a, dynamic);
    else if (/^--[^=]+=./.test(a)) {
      const value = a.slice(a.indexOf('=') + 1);
      if (/^[~./]/.test(value)) add(value, dynamic);
    }
  });
  for (const r of cmd.redirects) {
    const bare = r.op.replace(/^\d+/, '');
    if (bare.startsWith('<<')) continue;
    if ((bare === '>&' || bare === '<&') && /^(\d+-?|-)$/.test(r.target)) continue;
    if (READ_OPS.has(bare) || bare.includes('>')) add(r.target, r.dynamic);
  }
  return { paths: [...paths], unknown };
}

/** Units for a parsed terminal line. */
export function commandUnits(line: ParsedLine, places: Places): Unit[] {
  const units: Unit[] = [];
  for (const cmd of line.commands) {
    const { paths, unknown } = pathsOf(cmd, places);
    const hosts = hostsOf(cmd);
    const from = (k: number, wrapper: boolean): Unit => ({
      words: cmd.words.slice(k),
      dynamic: cmd.dynamic.slice(k),
      cmd,
      wrapper,
      paths,
      unknownPath: unknown,
      hosts,
    });
    for (const w of cmd.wrappers) units.push(from(w, true));
    if (cmd.start >= 0) units.push(from(cmd.start, false));
    else if (cmd.wrappers.length === 0)
      units.push({
        words: [],
        dynamic: [],
        cmd,
        wrapper: true,
        paths,
        unknownPath: unknown,
        hosts,
      });
  }
  return units;
}

const wordRegex = new Map<string, { test(text: string): boolean }>();

function wordMatches(pattern: string, word: string, dynamic: boolean): boolean {
  if (pattern === word) return true;
  if (dynamic || !/[*?]/.test(pattern)) return false;
  let re = wordRegex.get(pattern);
  if (!re) {
    re = safeRegex(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      's',
    );
    wordRegex.set(pattern, re);
  }
  return re.test(word);
}

/** Allow: the pattern is the command's first words. Ask/deny: its words appear in this order. */
function commandMatches(pattern: string[], unit: Unit, verdict: Rule['verdict']): boolean {
  const words = unit.words;
  if (!words || words.length === 0 || pattern.length === 0) return false;
  const first = pattern[0]!;
  const head = first.includes('/') ? words[0]! : basename(words[0]!);
  if (!wordMatches(first, head, unit.dynamic[0] ?? false)) return false;
  if (verdict === 'allow') {
    return (
      pattern.length <= words.length &&
      pattern.every((p, k) => k === 0 || wordMatches(p, words[k]!, unit.dynamic[k] ?? false))
    );
  }
  let k = 1;
  for (const p of pattern.slice(1)) {
    while (k < words.length && !wordMatches(p, words[k]!, unit.dynamic[k] ?? false)) k++;
    if (k >= words.length) return false;
    k++;
  }
  return true;
}

/** Whether every matcher of the rule matches the unit; an allow needs all paths and hosts to match. */
export function ruleMatches(rule: Rule, unit: Unit, places: Places): boolean {
  if (rule.commands && !rule.commands.some((p) => commandMatches(p, unit, rule.verdict)))
    return false;
  const all = rule.verdict === 'allow';
  if (rule.paths) {
    const paths = rule.paths;
    if (unit.paths.length === 0 || (all && unit.unknownPath)) return false;
    const hit = (p: string) => pathMatches(paths, p, places);
    if (all ? !unit.paths.every(hit) : !unit.paths.some(hit)) return false;
  }
  if (rule.hosts) {
    const globs = rule.hosts;
    if (unit.hosts.length === 0) return false;
    const hit = (h: string) => globs.some((g) => hostMatches(g, h));
    if (all ? !unit.hosts.every(hit) : !unit.hosts.some(hit)) return false;
  }
  return rule.test ? rule.test(unit, places) : true;
}
