import type { Node } from './parser.js';

/**
 * A shell word from the parse tree, expanded as far as it can be known before it runs: quotes
 * removed, `~`, `$HOME`, `${HOME:?…}`, `${HOME%/}`, `$SVC_HOME`, `$PWD` and variables the same
 * line set to a literal are replaced by their values; anything else ($VAR, $(…), {a,b}, ~user)
 * makes the word dynamic, and then `text` is the word as written.
 */
export interface Word {
  text: string;
  /** Its value is only known at run time. */
  dynamic: boolean;
  /** Holds unquoted glob characters (`*`, `?`, `[`). */
  glob: boolean;
  /** Starts with an unquoted `NAME=`. */
  assign: boolean;
  /** Some part was quoted or escaped. */
  quoted: boolean;
  /** The words bash's field splitting makes of it (an unquoted `$c` holding `rm -rf`), when more than one. */
  fields?: string[];
}

export interface WordEnv {
  home: string;
  svcHome: string;
  /** The folder the word is expanded in, when known ($PWD, `~+`). */
  cwd: string | null;
  /** Variables set earlier in the line: their literal value, or null when it is not known. */
  vars: ReadonlyMap<string, string | null>;
  /** A command or process substitution inside the word: its commands run too. */
  nested: (node: Node) => void;
  /** A text bash runs as commands when it expands the word (`${x@P}`, `$((x))` with x=`a[$(…)]`). */
  code: (text: string) => void;
  unknown: (what: string) => void;
}

const SUBSTITUTIONS = new Set(['command_substitution', 'process_substitution']);

/** Nodes whose variables bash evaluates as arithmetic (where `a[$(cmd)]` in a value runs cmd). */
const ARITHMETIC = new Set(['arithmetic_expansion', 'subscript']);

/**
 * A variable evaluated as arithmetic: bash reads its value as an expression, recursively, and an
 * array subscript in it (`a[$(cmd)]`) runs cmd. A value the line set that holds a substitution is
 * handed to env.code.
 */
export function arithmeticVariable(name: string, env: WordEnv): void {
  let value = env.vars.get(name);
  for (let hops = 0; hops < 8 && value && /^[A-Za-z_]\w*$/.test(value); hops++)
    value = env.vars.get(value);
  if (value && /\$\(|`|[<>]\(/.test(value)) env.code(`: ${value}`);
}

/**
 * Hands every substitution under `node` (not inside another one) to env.nested; iterative, so
 * depth cannot overflow. With `arithmetic` (or inside `$((…))` and subscripts) the variables it
 * names are evaluated as bash would.
 */
export function visitSubstitutions(node: Node, env: WordEnv, arithmetic = false): void {
  const stack: [Node, boolean][] = [[node, arithmetic || ARITHMETIC.has(node.type)]];
  while (stack.length > 0) {
    const [n, arith] = stack.pop()!;
    if (SUBSTITUTIONS.has(n.type)) {
      env.nested(n);
      continue;
    }
    if (arith && (n.type === 'variable_name' || n.type === 'word') && /^[A-Za-z_]\w*$/.test(n.text))
      arithmeticVariable(n.text, env);
    const inner = arith || ARITHMETIC.has(n.type);
    for (let i = n.childCount - 1; i >= 0; i--) {
      const c = n.child(i);
      if (c) stack.push([c, inner]);
    }
  }
}

function variable(name: string, env: WordEnv): string | null {
  if (env.vars.has(name)) return env.vars.get(name) ?? null;
  if (name === 'HOME') return env.home;
  if (name === 'SVC_HOME') return env.svcHome;
  if (name === 'PWD') return env.cwd;
  return null;
}

/** `${NAME}`, `${NAME:?…}`, `${NAME:-…}`, `${NAME%/}`: the value when NAME is known and set. */
function braced(text: string, env: WordEnv): string | null {
  const m = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[?=-])[^}]*|(%%?)\/?)?\}$/.exec(text);
  if (!m) return null;
  const value = variable(m[1]!, env);
  if (value === null || value === '') return null;
  return m[3] !== undefined ? value.replace(/\/$/, '') : value;
}

const ANSI: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/** The value of `$'…'`. */
export function ansiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_m, e: string) => {
      if (e[0] === 'x' && e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
      if ((e[0] === 'u' || e[0] === 'U') && e.length > 1) {
        const cp = parseInt(e.slice(1), 16);
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
      }
      if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
      if (e[0] === 'c' && e.length === 2) return String.fromCharCode(e.charCodeAt(1) & 0x1f);
      return ANSI[e] ?? `\\${e}`;
    },
  );
}

interface Acc {
  text: string;
  dynamic: boolean;
  glob: boolean;
  quoted: boolean;
  /** The unquoted characters as written, for brace and tilde checks. */
  bare: string;
  /** Where in `text` field splitting cuts (blank runs of unquoted expansions), as [start, end). */
  breaks: [number, number][];
}

function unquoted(raw: string, acc: Acc): void {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      acc.quoted = true;
      if (raw[i + 1] === '\n') i++;
      else if (i + 1 < raw.length) out += raw[++i];
      acc.bare += '_';
      continue;
    }
    if (c === '*' || c === '?' || c === '[') acc.glob = true;
    out += c;
    acc.bare += c;
  }
  acc.text += out;
}

function inDouble(raw: string): string {
  return raw.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

function part(node: Node, env: WordEnv, acc: Acc, inString: boolean): void {
  switch (node.type) {
    case 'word':
    case 'number':
    case 'command_name':
      if (node.type === 'command_name' && node.namedChildCount > 0) {
        for (const c of node.namedChildren) if (c) part(c, env, acc, inString);
        return;
      }
      if (inString) acc.text += inDouble(node.text);
      else unquoted(node.text, acc);
      return;
    case 'string_content':
    case 'heredoc_content':
      acc.text += inDouble(node.text);
      return;
    case 'raw_string':
      acc.quoted = true;
      acc.text += node.text.slice(1, -1);
      acc.bare += '_';
      return;
    case 'ansi_c_string':
      acc.quoted = true;
      acc.text += ansiC(node.text.slice(2, -1));
      acc.bare += '_';
      return;
    case 'string':
    case 'translated_string': {
      acc.quoted = true;
      acc.bare += '_';
      const open = node.type === 'string' ? 1 : 2;
      let pos = node.startIndex + open;
      const end = node.endIndex - 1;
      const src = node.text;
      const base = node.startIndex;
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.startIndex > pos) acc.text += inDouble(src.slice(pos - base, c.startIndex - base));
        part(c, env, acc, true);
        pos = c.endIndex;
      }
      if (end > pos) acc.text += inDouble(src.slice(pos - base, end - base));
      return;
    }
    case 'simple_expansion': {
      const name = node.text.slice(1);
      const value = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? variable(name, env) : null;
      if (value === null) acc.dynamic = true;
      else if (!inString) split(value, acc);
      acc.text += value ?? node.text;
      acc.bare += '_';
      return;
    }
    case 'expansion': {
      const prompt = /^\$\{([A-Za-z_]\w*)@P\}$/.exec(node.text);
      if (prompt) {
        // Prompt expansion runs the $(…) in the value.
        const v = variable(prompt[1]!, env);
        if (v === null) env.unknown('a prompt expansion (@P) of a value only known when it runs');
        else if (/\$\(|`/.test(v)) env.code(`: ${v}`);
      }
      const value = prompt ? null : braced(node.text, env);
      if (value === null) {
        acc.dynamic = true;
        visitSubstitutions(node, env);
      } else if (!inString) split(value, acc);
      acc.text += value ?? node.text;
      acc.bare += '_';
      return;
    }
    case 'concatenation':
      for (const c of node.children) if (c) part(c, env, acc, inString);
      return;
    default:
      // $(…), <(…), $((…)), {1..3}, arrays, patterns: run-time values.
      visitSubstitutions(node, env);
      acc.dynamic = true;
      acc.text += node.text;
      acc.bare += '_';
  }
}

/** An unquoted expansion's value is split on blanks (default IFS) and globbed: record where. */
function split(value: string, acc: Acc): void {
  if (/[*?[]/.test(value)) acc.glob = true;
  for (const m of value.matchAll(/[ \t\n]+/g))
    acc.breaks.push([acc.text.length + m.index, acc.text.length + m.index + m[0].length]);
}

function fields(text: string, breaks: [number, number][]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const [a, b] of breaks) {
    out.push(text.slice(from, a));
    from = b;
  }
  out.push(text.slice(from));
  return out.filter((f) => f.length > 0);
}

/** Expands one argument node (a word, string, concatenation, expansion, …). */
export function expandWord(node: Node, env: WordEnv): Word {
  const acc: Acc = { text: '', dynamic: false, glob: false, quoted: false, bare: '', breaks: [] };
  part(node, env, acc, false);
  const raw = node.text;
  const assign = /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(raw);
  // Brace expansion makes several words of one; which ones is the shell's business.
  if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(acc.bare)) acc.dynamic = true;
  const parts = acc.breaks.length > 0 && !acc.dynamic ? fields(acc.text, acc.breaks) : null;
  if (!acc.dynamic && acc.bare.startsWith('~')) {
    const tilde = /^~([^/]*)/.exec(acc.text)![1]!;
    const shift = (t: string) =>
      tilde === ''
        ? env.home + t.slice(1)
        : tilde === '+' && env.cwd !== null
          ? env.cwd + t.slice(2)
          : t;
    if (tilde === '' || (tilde === '+' && env.cwd !== null)) {
      acc.text = shift(acc.text);
      if (parts) parts[0] = shift(parts[0]!);
    } else acc.dynamic = true;
  }
  if (acc.dynamic) acc.text = raw;
  const word: Word = {
    text: acc.text,
    dynamic: acc.dynamic,
    glob: acc.glob,
    assign,
    quoted: acc.quoted,
  };
  if (parts && !acc.dynamic && parts.length !== 1) word.fields = parts;
  return word;
}
