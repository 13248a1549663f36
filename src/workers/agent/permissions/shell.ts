import { posix } from 'node:path';
import { checkBudget, LIMITS, noteCap } from './budget.js';
import { resolveArg } from './glob.js';
import { readOptions } from './options.js';
import { noteLink } from './real.js';
import { parseBash, type Node } from './parser.js';
import { readCode } from './inline-code.js';
import { runsNoArguments } from './known.js';
import {
  argumentCommand,
  commandVariable,
  gitEnvironment,
  innerCommands,
  variableCommand,
  type Inner,
} from './runners.js';
import { SUB_RUNNERS, skipWrapperOptions, WRAPPERS } from './wrappers.js';
import {
  ansiC,
  arithmeticVariable,
  expandWord,
  visitSubstitutions,
  type Word,
  type WordEnv,
} from './words.js';

/**
 * Finds every command a bash line would run, from the tree-sitter-bash parse tree, so the
 * permission engine judges command words and not text: `git commit -m "fix shutdown"` runs git,
 * while `sudo /sbin/shutdown` and `x; $(bash -c 'shutdown')` run shutdown. It follows `cd`
 * through the line, expands what can be known before the line runs, looks through wrappers
 * (sudo, env, timeout, xargs, …) and parses the command lines other commands carry (`bash -c`,
 * `eval`, a here-document fed to a shell, `find -exec`).
 *
 * It fails closed: whatever it cannot see through (a parse error, a node it does not handle, a
 * computed command word, a shell reading its script from a pipe, an alias or function, …) is
 * listed in `unknown`, and the engine asks about the line.
 */

export interface Redirect {
  /** The operator with any fd number: `>`, `2>>`, `&>`, `<`, `<<<`, `>&`, `<<`. */
  op: string;
  /** The file (or fd number, or here-document delimiter) it names. */
  target: string;
  dynamic: boolean;
}

export interface SimpleCommand {
  /** Every word after expansion, wrappers included, leading assignments left out. */
  words: string[];
  /** Per word: its value is only known at run time. */
  dynamic: boolean[];
  /** Index of the command word in `words`, or -1 when the command only assigns or redirects. */
  start: number;
  /** Indexes of the wrapper words (sudo, env, timeout, …) in front of the command word. */
  wrappers: number[];
  /** Basename of the command word (`/sbin/shutdown` → `shutdown`); '' when there is none. */
  name: string;
  /** The words after the command word. */
  args: string[];
  redirects: Redirect[];
  assigns: string[];
  /** Part of a pipeline with more than one command. */
  piped: boolean;
  /** Run with a trailing `&`. */
  background: boolean;
  /** 0 at the top level, more inside `sh -c`, `eval`, … */
  depth: number;
  /** The folders it may run in (more than one after a `cd` that may fail); null when unknown. */
  cwds: string[] | null;
  /** More arguments are added when it runs (xargs input, find's `{}`). */
  fed: boolean;
  /** The words of the command piping into this one, when it is a simple command. */
  feeder: string[] | null;
}

export interface ParsedLine {
  commands: SimpleCommand[];
  /** Names of shell functions the line defines. */
  functions: string[];
  /** Nesting went deeper than we follow; what lies below was not seen. */
  tooDeep: boolean;
  /** What could not be seen through, each as a short phrase ("a parse error", "eval of a computed string"). */
  unknown: string[];
  /** Why the line (or a text it carries) could not be read at all: too long, or too slow to parse. */
  unread: string | null;
  /** What inline code of interpreters (`python3 -c`, `node -e`, …) in the line names. */
  code: { kills: (number | 'parent' | 'all')[]; svcHome: boolean; protectedRefs: string[] };
}

export interface ShellOptions {
  /** The user's home folder: `~` and `$HOME` are expanded to it. */
  home?: string;
  /** svc's folder: `$SVC_HOME` is expanded to it. */
  svcHome?: string;
  /** The folder the line starts in. */
  cwd?: string | null;
}

const MAX_DEPTH = 8;
/** Longer command texts are not parsed (their worst cases would take too long): they always ask. */
const MAX_TEXT = 12 * 1024;
/** Tree levels walked at most (the grammar nests a node per `(`, `$(`, `{`, …). */
const MAX_LEVEL = 200;
const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'rbash',
  'csh',
  'tcsh',
  'busybox',
]);
const INTERPRETERS = new Set([
  'python',
  'python2',
  'python3',
  'node',
  'nodejs',
  'perl',
  'ruby',
  'php',
  'lua',
  'luajit',
  'Rscript',
  'R',
  'tclsh',
  'wish',
  'osascript',
  'deno',
  'bun',
  'pwsh',
  'powershell',
  'jshell',
  'irb',
  'groovy',
  'scala',
  'julia',
  'guile',
  'sbcl',
  'expect',
]);
const RESERVED = new Set([
  '{',
  '}',
  '!',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  'case',
  'esac',
  'select',
  'function',
  'in',
  '[[',
  ']]',
  'time',
  'coproc',
]);
const EXEC_FLAGS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** Variables that change how later words are read or which program a name runs. */
const SHELL_CONTROL_VARS = new Set([
  'PATH',
  'IFS',
  'BASH_ENV',
  'ENV',
  'CDPATH',
  'SHELLOPTS',
  'BASHOPTS',
  'PROMPT_COMMAND',
  'PS4',
  'GLOBIGNORE',
  'BASH_ALIASES',
  'BASH_CMDS',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
]);
/** Tree nodes that are plain statements or containers we walk. */
const CONTAINERS = new Set([
  'program',
  'compound_statement',
  'do_group',
  'else_clause',
  'elif_clause',
  'if_statement',
  'while_statement',
  'case_item',
  'negated_command',
]);

const LITERAL: Word = { text: '', dynamic: false, glob: false, assign: false, quoted: true };

/** Programs the engine has rules about: an argument naming one starts a command (runners.ts). */
const SIGNIFICANT = new Set([
  ...['rm', 'rmdir', 'unlink', 'mv', 'cp', 'ln', 'install', 'chmod', 'chown', 'chgrp', 'dd'],
  ...['truncate', 'shred', 'wipe', 'srm', 'kill', 'pkill', 'killall', 'killall5', 'shutdown'],
  ...['reboot', 'poweroff', 'halt', 'init', 'telinit', 'systemctl', 'loginctl', 'mkswap'],
  ...['mke2fs', 'fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'parted', 'wipefs', 'blkdiscard'],
  ...['cryptsetup', 'badblocks', 'nvme', 'hdparm', 'tee', 'find', 'xargs', 'sed', 'tar', 'svc'],
  ...['curl', 'wget', 'ssh', 'scp', 'sftp', 'rsync', 'nc', 'ncat', 'netcat', 'socat', 'nmap'],
  ...['telnet', 'ftp', 'sudo', 'su', 'doas', 'pkexec', 'crontab', 'mount', 'umount', 'useradd'],
  ...['userdel', 'usermod', 'passwd', 'chpasswd', 'visudo', 'iptables', 'eval', 'exec', 'source'],
  ...['gh', 'gpg', 'kubectl', 'aws', 'security', 'gcloud', 'az', 'heroku', 'op', 'vault', 'git'],
  ...['pass', 'secret-tool', 'doctl', 'awk', 'make', 'env', 'timeout', 'nohup', 'setsid'],
]);
const significant = (name: string): boolean =>
  SIGNIFICANT.has(name) ||
  SHELLS.has(name) ||
  INTERPRETERS.has(name) ||
  Object.hasOwn(WRAPPERS, name) ||
  name.startsWith('mkfs');

export function basename(word: string): string {
  const trimmed = word.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

interface Ctx {
  cwds: string[] | null;
  depth: number;
  vars: Map<string, string | null>;
  /** Set by a `cd`: where the line stays if that cd fails (unless `&&` follows). */
  fallback: string[] | null | undefined;
}

/** How a simple command is placed in its pipeline. */
interface Place {
  piped: boolean;
  background: boolean;
  /** What feeds its stdin through a pipe: the text when it is known (echo of literals, cat of a here-document), else null. */
  pipeIn: { text: string | null; words: string[] | null } | null;
}

interface Parsed {
  cmd: SimpleCommand;
  words: Word[];
  /** Here-document / here-string bodies fed to it: their text, or null when it holds expansions. */
  stdin: (string | null)[];
  /** A redirect reads a file into stdin. */
  stdinFile: boolean;
  /** What a pipe feeds it, when known. */
  input: string | null;
}

const cloneCtx = (c: Ctx): Ctx => ({
  cwds: c.cwds === null ? null : [...c.cwds],
  depth: c.depth,
  vars: new Map(c.vars),
  fallback: undefined,
});

function union(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null || b === null) return null;
  const all = [...new Set([...a, ...b])];
  if (all.length <= LIMITS.cwds) return all;
  noteCap(`more than ${LIMITS.cwds} folders the line may run in`);
  return null;
}

class Walker {
  readonly out: ParsedLine = {
    commands: [],
    functions: [],
    tooDeep: false,
    unknown: [],
    unread: null,
    code: { kills: [], svcHome: false, protectedRefs: [] },
  };
  private readonly seen = new Set<number>();
  private level = 0;
  private innerCount = 0;

  constructor(private readonly opts: { home: string; svcHome: string }) {}

  unknown(what: string): void {
    if (!this.out.unknown.includes(what) && this.out.unknown.length < 20)
      this.out.unknown.push(what);
  }

  /** Parses a command text (the whole line, or one a command carries) and walks it. */
  text(text: string, ctx: Ctx): void {
    if (ctx.depth > MAX_DEPTH) {
      this.out.tooDeep = true;
      return;
    }
    if (text.length > MAX_TEXT) {
      this.out.unread = `it is ${Math.ceil(text.length / 1024)} kB long, more than the ${MAX_TEXT / 1024} kB the permission check reads`;
      return;
    }
    const tree = parseBash(text);
    if (tree === null) {
      this.out.unread = 'the bash grammar could not read it within its time budget';
      return;
    }
    try {
      const root = tree.rootNode;
      if (root.hasError) this.unknown('a syntax error (bash may read this line differently)');
      this.statement(root, ctx, { piped: false, background: false, pipeIn: null });
      this.checkAllSeen(root);
    } finally {
      tree.delete();
    }
  }

  /** The safety net: every command and substitution in the tree must have been walked. */
  private checkAllSeen(root: Node): void {
    const cursor = root.walk();
    try {
      let more = true;
      while (more) {
        const t = cursor.nodeType;
        if (
          (t === 'command' ||
            t === 'command_substitution' ||
            t === 'process_substitution' ||
            t === 'function_definition') &&
          !this.seen.has(cursor.nodeId)
        ) {
          this.unknown(`a ${t.replace('_', ' ')} in a place the checker does not follow`);
        }
        if (cursor.gotoFirstChild()) continue;
        while (!cursor.gotoNextSibling()) {
          if (!cursor.gotoParent()) {
            more = false;
            break;
          }
        }
      }
    } finally {
      cursor.delete();
    }
  }

  private wordEnv(ctx: Ctx): WordEnv {
    return {
      home: ctx.vars.get('HOME') ?? this.opts.home,
      svcHome: this.opts.svcHome,
      cwd: ctx.cwds?.length === 1 ? ctx.cwds[0]! : null,
      vars: ctx.vars,
      nested: (n) => this.substitution(n, ctx),
      code: (text) => this.inner([{ kind: 'text', text }], ctx),
      unknown: (what) => this.unknown(what),
    };
  }

  private substitution(node: Node, ctx: Ctx): void {
    this.seen.add(node.id);
    const inner = cloneCtx(ctx);
    for (const c of node.namedChildren)
      if (c) this.statement(c, inner, { piped: false, background: false, pipeIn: null });
  }

  private enter(): boolean {
    if (++this.level > MAX_LEVEL) {
      this.out.tooDeep = true;
      this.level--;
      return false;
    }
    return true;
  }

  statement(node: Node, ctx: Ctx, place: Place): void {
    checkBudget();
    if (!this.enter()) return;
    try {
      this.dispatch(node, ctx, place);
    } finally {
      this.level--;
    }
  }

  /** A run of statements separated by `;`, `&`, newlines, `&&` or `||`. */
  private sequence(nodes: (Node | null)[], ctx: Ctx): void {
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i];
      if (!n || !n.isNamed) continue;
      const next = n.nextSibling;
      const background = next?.type === '&';
      this.statement(n, ctx, { piped: false, background, pipeIn: null });
      this.connect(ctx, next?.type === '&&');
    }
  }

  /** After a statement: a `cd` that may have failed leaves the line in either folder. */
  private connect(ctx: Ctx, and: boolean): void {
    if (ctx.fallback !== undefined) {
      if (!and) ctx.cwds = union(ctx.cwds, ctx.fallback);
      ctx.fallback = undefined;
    }
  }

  private dispatch(node: Node, ctx: Ctx, place: Place): void {
    const t = node.type;
    if (t === 'comment' || !node.isNamed) return;
    if (t === 'ERROR') {
      this.unknown('a syntax error (bash may read this line differently)');
      return;
    }
    if (t === 'command') {
      this.command(node, [], ctx, place);
      return;
    }
    if (t === 'program' || t === 'compound_statement' || t === 'do_group') {
      const body =
        t === 'compound_statement' &&
        node.firstNamedChild &&
        node.firstNamedChild.type.endsWith('expression')
          ? []
          : node.children;
      if (body.length === 0 && t === 'compound_statement') {
        visitSubstitutions(node, this.wordEnv(ctx), true); // ((arithmetic))
        return;
      }
      return this.sequence(body, ctx);
    }
    if (t === 'list') {
      const [left, op, right] = [node.child(0), node.child(1), node.child(2)];
      if (left) this.statement(left, ctx, place);
      this.connect(ctx, op?.type === '&&');
      if (right) this.statement(right, ctx, place);
      return;
    }
    if (t === 'pipeline')
      return this.pipeline(
        node.namedChildren.filter((c): c is Node => c !== null),
        ctx,
        place,
      );
    if (t === 'redirected_statement') {
      this.redirected(node, ctx, place);
      return;
    }
    if (t === 'subshell') return this.sequence(node.children, cloneCtx(ctx));
    if (t === 'function_definition') {
      this.seen.add(node.id);
      const name = node.childForFieldName('name')?.text ?? '';
      this.out.functions.push(name);
      this.unknown(`a shell function (${name}) defined in the line`);
      const body = node.childForFieldName('body');
      if (body) this.statement(body, cloneCtx(ctx), place);
      return;
    }
    if (t === 'variable_assignment' || t === 'variable_assignments') {
      this.assignments(node, ctx, true);
      return;
    }
    if (t === 'declaration_command' || t === 'unset_command') {
      for (const c of node.namedChildren) {
        if (!c) continue;
        if (c.type === 'variable_assignment') this.assignments(c, ctx, true);
        else if (c.type === 'variable_name') ctx.vars.set(c.text, null);
        else visitSubstitutions(c, this.wordEnv(ctx));
      }
      return;
    }
    if (t === 'test_command') {
      visitSubstitutions(node, this.wordEnv(ctx), true); // [[ x -eq 1 ]] evaluates x
      return;
    }
    if (
      CONTAINERS.has(t) ||
      t === 'for_statement' ||
      t === 'c_style_for_statement' ||
      t === 'case_statement'
    )
      return this.compound(node, ctx);
    this.unknown(`a ${t.replace(/_/g, ' ')} the checker does not handle`);
    visitSubstitutions(node, this.wordEnv(ctx));
  }

  /** if / while / for / case: their words are expanded for substitutions, their bodies walked; a cd inside may or may not have happened. */
  private compound(node: Node, ctx: Ctx): void {
    const inner = cloneCtx(ctx);
    const env = this.wordEnv(ctx);
    if (node.type === 'for_statement' || node.type === 'c_style_for_statement') {
      const v = node.childForFieldName('variable');
      if (v) inner.vars.set(v.text, null);
    }
    const statements: Node[] = [];
    for (const c of node.namedChildren) {
      if (!c) continue;
      const field = fieldOf(node, c);
      if (
        field === 'value' ||
        field === 'variable' ||
        field === 'initializer' ||
        field === 'update' ||
        c.type.endsWith('expression') ||
        c.type === 'extglob_pattern' ||
        isWordNode(c)
      ) {
        visitSubstitutions(c, env);
      } else statements.push(c);
    }
    for (const s of statements) {
      this.statement(s, inner, { piped: false, background: false, pipeIn: null });
      this.connect(inner, true);
    }
    if (JSON.stringify(inner.cwds) !== JSON.stringify(ctx.cwds))
      ctx.cwds = union(ctx.cwds, inner.cwds);
    for (const [k, v] of inner.vars) if (ctx.vars.get(k) !== v) ctx.vars.set(k, null);
  }

  private assignments(node: Node, ctx: Ctx, standalone: boolean): Map<string, Word> {
    const got = new Map<string, Word>();
    const list = node.type === 'variable_assignments' ? node.namedChildren : [node];
    for (const a of list) {
      if (!a) continue;
      const name = a.childForFieldName('name')?.text ?? '';
      const valueNode = a.childForFieldName('value');
      const value = valueNode ? expandWord(valueNode, this.wordEnv(ctx)) : null;
      if (SHELL_CONTROL_VARS.has(name))
        this.unknown(`a change to ${name}, which changes what later words mean`);
      this.environment(name, value, ctx);
      if (value && !value.dynamic && value.text.length > LIMITS.value) {
        noteCap(`a variable longer than ${LIMITS.value} characters`);
        value.dynamic = true;
      }
      if (standalone)
        ctx.vars.set(name, value === null ? '' : value.dynamic || value.glob ? null : value.text);
      got.set(name, value ?? { ...LITERAL, text: '' });
    }
    return got;
  }

  private pipeline(parts: Node[], ctx: Ctx, place: Place): void {
    let pipeIn = place.pipeIn;
    parts.forEach((p, k) => {
      const last = k === parts.length - 1;
      const sub = cloneCtx(ctx);
      const parsed = this.statementParsed(p, sub, {
        piped: true,
        background: place.background && last,
        pipeIn,
      });
      pipeIn = { text: parsed ? printed(parsed) : null, words: parsed ? parsed.cmd.words : null };
    });
  }

  /** Walks a pipeline part; returns the simple command when it is one (so the next part knows its input). */
  private statementParsed(node: Node, ctx: Ctx, place: Place): Parsed | null {
    if (node.type === 'command') return this.command(node, [], ctx, place);
    if (node.type === 'redirected_statement' && node.childForFieldName('body')?.type === 'command')
      return this.redirected(node, ctx, place);
    this.statement(node, ctx, place);
    return null;
  }

  private redirected(node: Node, ctx: Ctx, place: Place): Parsed | null {
    const body = node.childForFieldName('body');
    const redirects = node.namedChildren.filter((c): c is Node => c !== null && c.id !== body?.id);
    // tree-sitter-bash hangs what follows a here-document's opening line (`| sh`, `&& x`) under it.
    const trailing: Node[] = [];
    for (const r of redirects)
      if (r.type === 'heredoc_redirect')
        for (const c of r.namedChildren) if (c && !c.type.startsWith('heredoc_')) trailing.push(c);
    const pipedOn = trailing.some((n) => n.type === 'pipeline' && n.child(0)?.type === '|');
    const own: Place = pipedOn ? { ...place, piped: true } : place;
    let parsed: Parsed | null = null;
    if (body?.type === 'command') parsed = this.command(body, redirects, ctx, own);
    else {
      if (body) this.statement(body, ctx, own);
      // Redirections of a compound statement: judged as a command with no words.
      parsed = this.command(null, redirects, ctx, own);
    }
    for (const tnode of trailing) {
      if (tnode.type === 'pipeline' && tnode.child(0)?.type === '|') {
        const inner = tnode.namedChildren.filter((c): c is Node => c !== null);
        const feed = {
          text: parsed ? printed(parsed) : null,
          words: parsed ? parsed.cmd.words : null,
        };
        // `| a && b` is read as one list: the pipe feeds a only.
        if (inner.length === 1 && inner[0]!.type === 'list') {
          const list = inner[0]!;
          const first = list.child(0);
          if (first)
            this.statementParsed(first, cloneCtx(ctx), {
              piped: true,
              background: false,
              pipeIn: feed,
            });
          this.connect(ctx, list.child(1)?.type === '&&');
          const right = list.child(2);
          if (right) this.statement(right, ctx, place);
        } else this.pipeline(inner, ctx, { ...place, pipeIn: feed });
      } else {
        this.connect(ctx, tnode.previousSibling?.type === '&&');
        this.statement(tnode, ctx, place);
      }
    }
    return parsed;
  }

  /** One simple command (or, with node null, the redirections of a compound statement). */
  private command(node: Node | null, redirectNodes: Node[], ctx: Ctx, place: Place): Parsed {
    if (node) this.seen.add(node.id);
    const env = this.wordEnv(ctx);
    const words: Word[] = [];
    const assigns: string[] = [];
    const prefix = new Map<string, Word>();
    const redirects: Redirect[] = [];
    const stdin: (string | null)[] = [];
    let stdinFile = false;
    const allRedirects = [...redirectNodes];
    for (const c of node?.namedChildren ?? []) {
      if (!c) continue;
      if (c.type === 'variable_assignment') {
        assigns.push(c.text);
        for (const [k, v] of this.assignments(c, ctx, false)) prefix.set(k, v);
      } else if (c.type.endsWith('_redirect')) allRedirects.push(c);
      else words.push(...splitFields(expandWord(c, env)));
    }
    for (const r of allRedirects) {
      const got = this.redirect(r, env);
      if (!got) continue;
      redirects.push(got.redirect);
      if (got.body !== undefined) stdin.push(got.body);
      if (/^0?<$/.test(got.redirect.op)) stdinFile = true;
    }
    const parsed = this.analyze(
      words,
      { redirects, assigns, stdin, stdinFile, env: prefix },
      ctx,
      place,
    );
    return parsed;
  }

  private redirect(node: Node, env: WordEnv): { redirect: Redirect; body?: string | null } | null {
    if (node.type === 'heredoc_redirect') {
      const bodyNode = node.namedChildren.find((c) => c?.type === 'heredoc_body') ?? null;
      const delim = node.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '';
      let body: string | null = bodyNode ? bodyNode.text : '';
      if (bodyNode && bodyNode.namedChildCount > 0) {
        let literal = true;
        for (const c of bodyNode.namedChildren) {
          if (!c || c.type === 'heredoc_content') continue;
          literal = false;
          visitSubstitutions(c, env);
        }
        if (!literal) body = null;
      }
      const op = node.child(0)?.text ?? '<<';
      return { redirect: { op, target: delim, dynamic: false }, body };
    }
    if (node.type === 'herestring_redirect') {
      const w = node.namedChildren.at(-1);
      const word = w ? expandWord(w, env) : null;
      return {
        redirect: { op: '<<<', target: word?.text ?? '', dynamic: word?.dynamic ?? true },
        body: word && !word.dynamic ? word.text + '\n' : null,
      };
    }
    if (node.type !== 'file_redirect') {
      this.unknown(`a ${node.type.replace(/_/g, ' ')}`);
      visitSubstitutions(node, env);
      return null;
    }
    const fd = node.childForFieldName('descriptor')?.text ?? '';
    const opNode = node.children.find((c) => c !== null && !c.isNamed);
    const dests = node.namedChildren.filter(
      (c): c is Node => c !== null && c.type !== 'file_descriptor',
    );
    if (dests.length !== 1) this.unknown('a redirection the checker cannot read');
    const dest = dests.at(-1);
    const word = dest ? expandWord(dest, env) : { text: '', dynamic: true, glob: false };
    if (word.glob) word.dynamic = true;
    return {
      redirect: { op: `${fd}${opNode?.text ?? '>'}`, target: word.text, dynamic: word.dynamic },
    };
  }

  /** Turns a simple command's words into a SimpleCommand, then follows what it runs. */
  private analyze(
    allWords: Word[],
    r: {
      redirects: Redirect[];
      assigns: string[];
      stdin: (string | null)[];
      stdinFile: boolean;
      /** Prefix assignments (`X=1 cmd`) by name, as expanded words. */
      env: ReadonlyMap<string, Word>;
    },
    ctx: Ctx,
    place: Place,
  ): Parsed {
    let words = allWords;
    const wrappers: number[] = [];
    let start = -1;
    let i = 0;
    let fed = false;
    const given = new Map<string, Word>(r.env);
    while (i < words.length) {
      const w = words[i]!;
      const name = basename(w.text);
      const runner = w.dynamic ? undefined : SUB_RUNNERS[name];
      const sub = words[i + 1];
      if (runner && sub && !sub.dynamic && runner.subs.includes(sub.text)) {
        // `npm exec -- x`, `uv run x`: the manager and its subcommand are wrappers.
        wrappers.push(i, i + 1);
        const skipped = skipWrapperOptions(words, i + 2, runner.spec);
        for (const s of skipped.scripts) this.text(s, { ...cloneCtx(ctx), depth: ctx.depth + 1 });
        if (skipped.dynamicScript) this.unknown(`${name} running a computed command line`);
        i = skipped.next;
        continue;
      }
      const spec = w.dynamic ? undefined : WRAPPERS[name];
      if (!spec) {
        start = i;
        break;
      }
      wrappers.push(i);
      if (spec.assigns) {
        // env takes any NAME=VALUE before the command (BASH_FUNC_x%%=… included), not only identifiers.
        words = [...words];
        for (let k = i + 1; k < words.length; k++) {
          const x = words[k]!;
          if (x.dynamic || x.text.startsWith('-')) continue;
          const eq = x.text.indexOf('=');
          if (eq <= 0) break;
          words[k] = { ...x, assign: true };
          this.environment(x.text.slice(0, eq), { ...x, text: x.text.slice(eq + 1) }, ctx);
          given.set(x.text.slice(0, eq), { ...x, text: x.text.slice(eq + 1) });
        }
      }
      if (name === 'command') {
        // `command -v rm` only looks rm up; `command rm -rfv` runs rm.
        let k = i + 1;
        while (k < words.length && /^-[pvV]+$/.test(words[k]!.text)) k++;
        if (words.slice(i + 1, k).some((x) => /[vV]/.test(x.text))) break;
      }
      if (name === 'xargs') fed = true;
      if (name === 'env' || name === 'sudo')
        for (const x of words.slice(i + 1))
          if (
            x.assign &&
            SHELL_CONTROL_VARS.has(x.text.slice(0, x.text.indexOf('=')).replace(/\+$/, ''))
          )
            this.unknown(
              `a change to ${x.text.slice(0, x.text.indexOf('='))}, which changes what the command runs`,
            );
      const skipped = skipWrapperOptions(words, i + 1, spec);
      for (const s of skipped.scripts) this.text(s, { ...cloneCtx(ctx), depth: ctx.depth + 1 });
      if (skipped.dynamicScript) this.unknown(`${name} running a computed command line`);
      i = skipped.next;
    }
    // `echo a b | xargs rm -rf`: rm gets echo's words.
    if (fed && start >= 0 && place.pipeIn?.text != null) {
      const extra = place.pipeIn.text
        .split(/\s+/)
        .filter((t) => t.length > 0)
        .map((text): Word => ({ text, dynamic: false, glob: false, assign: false, quoted: true }));
      words = [...words, ...extra];
      fed = false;
    }
    const texts = words.map((w) => w.text);
    const cmdWord = start >= 0 ? words[start]! : null;
    const name = cmdWord ? basename(cmdWord.text) : '';
    const cmd: SimpleCommand = {
      words: texts,
      dynamic: words.map((w) => w.dynamic),
      start,
      wrappers,
      name,
      args: start >= 0 ? texts.slice(start + 1) : [],
      redirects: r.redirects,
      assigns: r.assigns,
      piped: place.piped,
      background: place.background,
      depth: ctx.depth,
      cwds: ctx.cwds === null ? null : [...ctx.cwds],
      fed,
      feeder: place.pipeIn?.words ?? null,
    };
    checkBudget();
    this.out.commands.push(cmd);
    const parsed: Parsed = {
      cmd,
      words,
      stdin: r.stdin,
      stdinFile: r.stdinFile,
      input: place.pipeIn?.text ?? null,
    };
    if (start < 0) {
      if (
        r.redirects.some((x) => x.op.replace(/^\d+/, '') === '<<' || x.op.endsWith('<<-')) &&
        wrappers.length > 0
      )
        this.unknown('exec with redirections');
      if (wrappers.some((k) => texts[k] === 'exec') && r.redirects.length > 0)
        this.unknown('exec with redirections, which changes where later commands read and write');
      return parsed;
    }
    if (cmdWord!.dynamic) {
      this.unknown('a command word only known when it runs');
      return parsed;
    }
    if (cmdWord!.glob) {
      this.unknown(`a command word with a glob (${cmdWord!.text})`);
      return parsed;
    }
    if (RESERVED.has(cmdWord!.text) && !cmdWord!.quoted) {
      this.unknown(
        `\`${cmdWord!.text}\` where the bash grammar expects a command (it may misread the line)`,
      );
      return parsed;
    }
    const args = words.slice(start + 1);
    this.carried(name, args, parsed, ctx, place);
    const inner = innerCommands(name, args);
    if (name === 'git') {
      for (const [k, v] of ctx.vars)
        if (!given.has(k) && v !== null) given.set(k, { ...LITERAL, text: v });
      inner.push(...gitEnvironment(given));
    }
    if (
      inner.length === 0 &&
      !runsNoArguments(name) &&
      !SHELLS.has(name) &&
      !INTERPRETERS.has(name)
    )
      inner.push(...argumentCommand(args, significant, basename));
    this.inner(inner, ctx);
    if (name === 'find') this.findExec(args, ctx);
    if (name === 'ln' || name === 'cp') this.links(name, args, ctx);
    if (name === 'cd' || name === 'pushd' || name === 'popd') this.cd(name, args, ctx);
    return parsed;
  }

  /**
   * `ln -s TARGET LINK` (and hard links, `cp -s`, `cp -l`) made in the line: later paths through
   * LINK are judged by where it leads, since the file system cannot tell yet.
   */
  private links(name: string, args: Word[], ctx: Ctx): void {
    const o = readOptions(
      args.map((a) => a.text),
      args.map((a) => a.dynamic),
      { shortValue: 'tS', longValue: ['target-directory', 'suffix', 'backup'] },
    );
    const symbolic = o.flags.has('s') || o.flags.has('symbolic') || o.flags.has('symbolic-link');
    if (name === 'cp' && !symbolic && !o.flags.has('l') && !o.flags.has('link')) return;
    if (o.operands.some((x) => x.dynamic) || o.dynamicOption) {
      this.unknown(`${name} making a link to or at a path only known when it runs`);
      return;
    }
    const dir = o.values.get('t') ?? o.values.get('target-directory');
    const ops = o.operands.map((x) => x.text);
    const pairs: [string, string][] =
      dir !== undefined
        ? ops.map((t) => [t, `${dir}/${basename(t)}`])
        : ops.length === 1
          ? [[ops[0]!, basename(ops[0]!)]]
          : ops
              .slice(0, -1)
              .map((t) => [t, ops.length > 2 ? `${ops.at(-1)}/${basename(t)}` : ops.at(-1)!]);
    for (const base of ctx.cwds ?? []) {
      for (const [target, link] of pairs) {
        const at = resolveArg(link, base);
        // A symbolic link's relative target is read from the link's folder; a hard link's from here.
        const to = resolveArg(target, symbolic && !o.flags.has('r') ? posix.dirname(at) : base);
        if (!noteLink(at, to)) noteCap('more links made in the line than the check follows');
      }
    }
  }

  /** Commands found inside another command's arguments or options, judged as commands. */
  private inner(found: Inner[], ctx: Ctx): void {
    for (const f of found) {
      if (++this.innerCount > LIMITS.inner) {
        noteCap(`more than ${LIMITS.inner} commands inside other commands`);
        return;
      }
      if (f.kind === 'unknown') this.unknown(f.what);
      else if (ctx.depth + 1 > MAX_DEPTH) this.out.tooDeep = true;
      else if (f.kind === 'text') this.text(f.text, { ...cloneCtx(ctx), depth: ctx.depth + 1 });
      else
        this.analyze(
          f.words,
          { redirects: [], assigns: [], stdin: [], stdinFile: false, env: new Map() },
          { ...cloneCtx(ctx), depth: ctx.depth + 1 },
          { piped: false, background: false, pipeIn: null },
        );
    }
  }

  /**
   * A variable handed to a command's environment (or exported): one a program runs as a command
   * (GIT_SSH_COMMAND, EDITOR, LESSOPEN, …) is judged as that command, and an exported function
   * (BASH_FUNC_name%%) as the function body it defines.
   */
  private environment(name: string, value: Word | null, ctx: Ctx): void {
    const fn = /^BASH_FUNC_(.+?)(%%|\(\))?$/.exec(name);
    if (fn) {
      this.unknown(`an exported function (${name}), which changes what a name runs`);
      if (value?.dynamic) return;
      if (value) this.inner([{ kind: 'text', text: `__exported_function ${value.text}` }], ctx);
      return;
    }
    if (!commandVariable(name) || value === null) return;
    if (value.dynamic) this.unknown(`${name} only known when it runs`);
    else this.inner([{ kind: 'text', text: variableCommand(value.text) }], ctx);
  }

  private cd(name: string, args: Word[], ctx: Ctx): void {
    const before = ctx.cwds;
    const operands = args.filter((a) => a.dynamic || !/^-[LPe@]+$/.test(a.text) || a.text === '-');
    const ops = operands[0]?.text === '--' ? operands.slice(1) : operands;
    let to: string[] | null;
    if (name === 'popd' || (name === 'pushd' && ops.length === 0)) to = null;
    else if (ops.length === 0 || (!ops[0]!.dynamic && ops[0]!.text === ''))
      to = [ctx.vars.get('HOME') ?? this.opts.home];
    else if (
      ops[0]!.dynamic ||
      ops[0]!.text === '-' ||
      /^[+-]\d+$/.test(ops[0]!.text) ||
      ops[0]!.glob
    )
      to = null;
    else {
      const target = ops[0]!.text;
      to =
        before === null
          ? target.startsWith('/')
            ? [resolveArg(target, '/')]
            : null
          : before.map((b) => resolveArg(target, b));
    }
    ctx.cwds = to;
    ctx.fallback = before;
  }

  /** Command lines a command runs itself: `bash -c '…'`, `eval …`, `su -c …`, a shell fed its script. */
  private carried(name: string, args: Word[], p: Parsed, ctx: Ctx, place: Place): void {
    const nested = (text: string) => this.text(text, { ...cloneCtx(ctx), depth: ctx.depth + 1 });
    const texts = args.map((w) => w.text);
    const anyDynamic = args.some((w) => w.dynamic);
    if (name === 'eval') {
      if (anyDynamic) this.unknown('eval of a string only known when it runs');
      else nested(texts.join(' '));
      return;
    }
    if (name === 'source' || name === '.') {
      const file = args[0];
      const fd = file && !file.dynamic ? fdOf(file.text) : null;
      if (fd === 0 && place.pipeIn?.text != null) nested(place.pipeIn.text);
      else if (!file || file.dynamic || fd !== null)
        this.unknown(`${name} of a script that is not a plain file`);
      return;
    }
    if (name === 'let' || (name === 'declare' && texts.some((t) => /^-[a-zA-Z]*i/.test(t)))) {
      // let and declare -i evaluate their words as arithmetic, variables' values included.
      const env = this.wordEnv(ctx);
      for (const t of texts)
        for (const id of t.match(/[A-Za-z_]\w*/g) ?? []) arithmeticVariable(id, env);
    }
    if (name === 'alias' && args.some((a) => a.text.includes('=')))
      return this.unknown('an alias defined in the line');
    if (name === 'hash' && args.some((a) => /^-[a-z]*p/.test(a.text)))
      return this.unknown('hash -p, which makes a name run another program');
    if (name === 'coproc') return this.unknown('coproc');
    if (name === 'trap' && args.some((a) => !/^-[lp]$/.test(a.text)))
      return this.unknown('trap, which runs a command later');
    if (name === 'enable' || (name === 'shopt' && texts.includes('expand_aliases')))
      return this.unknown(`${name}, which changes what names run`);
    if (name === 'watch') {
      const { next, dynamicScript } = skipWrapperOptions(args, 0, {
        short: 'ndgqx',
        long: ['--interval', '--differences', '--exec'],
      });
      if (dynamicScript || args.slice(next).some((w) => w.dynamic))
        this.unknown('watch running a computed command');
      else if (next < texts.length) nested(texts.slice(next).join(' '));
      return;
    }
    if (name === 'su' || name === 'runuser') {
      for (let k = 0; k < args.length; k++) {
        const a = texts[k]!;
        const value = a.startsWith('--command=')
          ? args[k]
          : a === '--command' || /^-[a-zA-Z]*c$/.test(a)
            ? args[k + 1]
            : undefined;
        if (value === undefined) continue;
        if (value.dynamic) this.unknown(`${name} -c with a computed command`);
        else nested(a.startsWith('--command=') ? value.text.slice(10) : value.text);
        return;
      }
      return;
    }
    const shell = SHELLS.has(name);
    if (!shell && !INTERPRETERS.has(name)) return;
    // Where does the script come from: -c, a file, or stdin?
    let inline: Word | null = null;
    let k = 0;
    for (; k < args.length; k++) {
      const a = args[k]!;
      if (a.dynamic) break;
      if (a.text === '--' || a.text === '-') {
        if (a.text === '--') k++;
        break;
      }
      if (shell && /^[-+][a-zA-Z]+$/.test(a.text)) {
        if (a.text[0] === '-' && a.text.includes('c')) inline = args[k + 1] ?? null;
        if (/[oO]/.test(a.text)) k++;
        if (inline) break;
        continue;
      }
      if (shell && a.text.startsWith('--')) {
        if (a.text === '--rcfile' || a.text === '--init-file') k++;
        continue;
      }
      if (!shell && a.text.startsWith('-')) {
        if (/^-[a-zA-Z]*m$/.test(a.text)) return; // python -m module
        // python -c / node -e / perl -e / php -r: the program is an argument.
        const eq = /^--(eval|print|command)=(.*)$/s.exec(a.text);
        if (eq) return this.code({ ...a, text: eq[2]! }, ctx);
        if (/^-[a-zA-Z]*[ceEpr]$|^--?(eval|print|command|Command)$/.test(a.text))
          return this.code(args[k + 1], ctx);
        continue;
      }
      if (!shell && (name === 'deno' || name === 'bun') && a.text === 'eval')
        return this.code(args[k + 1], ctx);
      break;
    }
    if (shell && inline) {
      if (inline.dynamic) this.unknown(`${name} -c with a command line only known when it runs`);
      else nested(inline.text);
      return;
    }
    const operand = args[k];
    // /dev/stdin however spelled (/dev/fd/0, /proc/self/fd/0, //dev/./stdin) is stdin.
    if (operand && operand.text !== '-' && (operand.dynamic || fdOf(operand.text) !== 0)) {
      if (operand.dynamic && /^[<>]\(/.test(operand.text))
        this.unknown(`${name} running a process substitution`);
      else if (operand.dynamic)
        this.unknown(`${name} running a script whose name is only known when it runs`);
      else if (fdOf(operand.text) !== null)
        this.unknown(`${name} reading its script from ${operand.text}`);
      return; // a script file: judged as running that program
    }
    // No script argument: it reads the program from stdin.
    const sources: (string | null)[] = [...p.stdin];
    if (place.pipeIn) sources.push(place.pipeIn.text);
    if (p.stdinFile) sources.push(null);
    if (sources.length === 0) return; // interactive, nothing fed
    if (sources.some((s) => s === null)) {
      this.unknown(`${name} fed its ${shell ? 'commands' : 'program'} through stdin`);
      return;
    }
    for (const s of sources) {
      if (shell) nested(s!);
      else this.code({ ...LITERAL, text: s! }, ctx);
    }
  }

  /** Inline code of an interpreter: its strings, kills and references are judged (inline-code.ts). */
  private code(w: Word | undefined, ctx: Ctx): void {
    if (!w) return;
    if (w.dynamic) return this.unknown('inline code only known when it runs');
    const found = readCode(w.text, {
      home: this.opts.home,
      svcHome: this.opts.svcHome,
      significant,
    });
    const c = this.out.code;
    c.kills.push(...found.kills);
    c.svcHome ||= found.svcHome;
    for (const r of found.protectedRefs) if (!c.protectedRefs.includes(r)) c.protectedRefs.push(r);
    this.inner(
      found.commands.map((text) => ({ kind: 'text', text })),
      ctx,
    );
  }

  /** `find … -exec cmd args ;` runs cmd, with `{}` only known when it runs. */
  private findExec(args: Word[], ctx: Ctx): void {
    for (let k = 0; k < args.length; k++) {
      if (!EXEC_FLAGS.has(args[k]!.text)) continue;
      const words: Word[] = [];
      for (k++; k < args.length && args[k]!.text !== ';' && args[k]!.text !== '+'; k++) {
        const w = args[k]!;
        words.push(w.text.includes('{}') ? { ...w, dynamic: true } : w);
      }
      if (words.length === 0) continue;
      if (ctx.depth + 1 > MAX_DEPTH) this.out.tooDeep = true;
      else {
        const parsed = this.analyze(
          words,
          { redirects: [], assigns: [], stdin: [], stdinFile: false, env: new Map() },
          { ...cloneCtx(ctx), depth: ctx.depth + 1 },
          { piped: false, background: false, pipeIn: null },
        );
        parsed.cmd.fed = true;
      }
    }
  }
}

/** The words bash's field splitting makes of one expanded word (bounded). */
function splitFields(w: Word): Word[] {
  if (!w.fields) return [w];
  if (w.fields.length > LIMITS.fields) {
    noteCap(`a word that splits into more than ${LIMITS.fields} words`);
    return [{ ...w, dynamic: true, fields: undefined }];
  }
  return w.fields.map((text, k) => ({
    text,
    dynamic: false,
    glob: w.glob && /[*?[]/.test(text),
    assign: k === 0 && w.assign,
    quoted: true,
  }));
}

function isWordNode(n: Node): boolean {
  return [
    'word',
    'string',
    'raw_string',
    'concatenation',
    'simple_expansion',
    'expansion',
    'number',
    'command_substitution',
    'ansi_c_string',
    'variable_name',
  ].includes(n.type);
}

function fieldOf(parent: Node, child: Node): string | null {
  for (let i = 0; i < parent.childCount; i++)
    if (parent.child(i)?.id === child.id) return parent.fieldNameForChild(i);
  return null;
}

/** The file descriptor a path names (/dev/stdin, /dev/fd/N, /proc/self/fd/N), however spelled; else null. */
function fdOf(path: string): number | null {
  const p = posix.normalize(path);
  if (p === '/dev/stdin') return 0;
  const m = /^\/(?:dev|proc\/(?:self|thread-self|\d+))\/fd\/(\d+)$/.exec(p);
  return m ? Number(m[1]) : null;
}

/** The value of echo -e / printf %b escapes. */
function echoEscapes(s: string): { text: string; stop: boolean } {
  let stop = false;
  const text = s.replace(
    /\\(0[0-7]{0,3}|x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|c|.)/gs,
    (_m, e: string) => {
      if (stop) return '';
      if (e === 'c') {
        stop = true;
        return '';
      }
      if (e[0] === '0') return String.fromCharCode(parseInt(e.slice(1) || '0', 8) & 0xff);
      return ansiC(`\\${e}`);
    },
  );
  return { text, stop };
}

/** What `printf FORMAT ARGS…` prints (bash's builtin, for the conversions a payload would use), or null. */
function printfText(args: string[]): string | null {
  if (args[0] === '--') args = args.slice(1);
  const [format, ...rest] = args;
  if (format === undefined || format.startsWith('-v')) return null;
  const fmt = format.replace(/\\([0-7]{1,3})/g, (_m, o: string) =>
    String.fromCharCode(parseInt(o, 8) & 0xff),
  );
  let out = '';
  let k = 0;
  for (let round = 0; round < 64; round++) {
    let used = false;
    let bad = false;
    const once = fmt.replace(
      /%([-+ #0]*\d*(?:\.\d+)?)([sbcdiuxXoq%])|\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|.)/gs,
      (m, _flags, conv: string | undefined, esc: string | undefined) => {
        if (esc !== undefined) return ansiC(`\\${esc}`);
        if (conv === '%') return '%';
        used = true;
        const a = rest[k++] ?? '';
        if (conv === 's' || conv === 'q') return a;
        if (conv === 'b') return echoEscapes(a).text;
        if (conv === 'c') return a.slice(0, 1);
        const n = Number(a || 0);
        if (!Number.isFinite(n)) bad = true;
        return conv === 'x'
          ? n.toString(16)
          : conv === 'X'
            ? n.toString(16).toUpperCase()
            : conv === 'o'
              ? n.toString(8)
              : String(Math.trunc(n));
      },
    );
    if (bad) return null;
    out += once;
    if (!used || k >= rest.length) break;
  }
  return out;
}

/**
 * What a command prints when that is known: echo and printf of literals (their escapes read as
 * bash reads them), cat of a literal here-document or of its known input, and the decoders a
 * payload hides behind (`base64 -d`, `xxd -r -p`, `rev`) over a known input.
 */
function printed(p: Parsed): string | null {
  const { cmd, words } = p;
  if (cmd.start < 0 || cmd.wrappers.length > 0) return null;
  const args = words.slice(cmd.start + 1);
  if (args.some((w) => w.dynamic)) return null;
  const texts = args.map((w) => w.text);
  const input = p.stdin.length === 1 ? p.stdin[0]! : p.stdin.length === 0 ? p.input : null;
  if (cmd.name === 'echo') {
    let k = 0;
    let escapes = false;
    for (; k < texts.length && /^-[neE]+$/.test(texts[k]!); k++)
      escapes = /e[^E]*$/.test(texts[k]!);
    const text = texts.slice(k).join(' ');
    return escapes ? echoEscapes(text).text : text;
  }
  if (cmd.name === 'printf') return printfText(texts);
  if (input === null || input === undefined) return null;
  const flags = texts.filter((t) => t.startsWith('-')).join(' ');
  const files = texts.filter((t) => !t.startsWith('-'));
  if (cmd.name === 'cat' && files.length === 0) return input;
  if (
    cmd.name === 'base64' &&
    /(^|\s)(-[a-zA-Z]*[dD]|--decode)\b/.test(flags) &&
    files.length === 0
  )
    return Buffer.from(input.replace(/\s+/g, ''), 'base64').toString('latin1');
  if (cmd.name === 'xxd' && /r/.test(flags) && /p/.test(flags) && files.length === 0) {
    const hex = input.replace(/[^0-9a-fA-F]/g, '');
    return Buffer.from(hex.length % 2 ? hex.slice(0, -1) : hex, 'hex').toString('latin1');
  }
  if (cmd.name === 'rev' && files.length === 0)
    return input
      .split('\n')
      .map((l) => [...l].reverse().join(''))
      .join('\n');
  return null;
}

/** Parses a command line into the simple commands it runs, nested ones included. Needs loadShellParser() first. */
export function parseShell(line: string, opts: ShellOptions = {}): ParsedLine {
  const home = opts.home ?? '/';
  const w = new Walker({ home, svcHome: opts.svcHome ?? `${home}/.svc` });
  const cwd = opts.cwd === undefined ? home : (opts.cwd ?? home);
  w.text(line, { cwds: [cwd], depth: 0, vars: new Map(), fallback: undefined });
  return w.out;
}
