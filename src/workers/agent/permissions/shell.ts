import { checkBudget } from './budget.js';
import { resolveArg } from './glob.js';
import { parseBash, type Node } from './parser.js';
import { skipWrapperOptions, WRAPPERS } from './wrappers.js';
import { expandWord, visitSubstitutions, type Word, type WordEnv } from './words.js';

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
}

const cloneCtx = (c: Ctx): Ctx => ({
  cwds: c.cwds === null ? null : [...c.cwds],
  depth: c.depth,
  vars: new Map(c.vars),
  fallback: undefined,
});

function union(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null || b === null) return null;
  return [...new Set([...a, ...b])];
}

class Walker {
  readonly out: ParsedLine = {
    commands: [],
    functions: [],
    tooDeep: false,
    unknown: [],
    unread: null,
  };
  private readonly seen = new Set<number>();
  private level = 0;

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
        visitSubstitutions(node, this.wordEnv(ctx)); // ((arithmetic))
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
    if (t === 'variable_assignment' || t === 'variable_assignments')
      return this.assignments(node, ctx, true);
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
      visitSubstitutions(node, this.wordEnv(ctx));
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

  private assignments(node: Node, ctx: Ctx, standalone: boolean): void {
    const list = node.type === 'variable_assignments' ? node.namedChildren : [node];
    for (const a of list) {
      if (!a) continue;
      const name = a.childForFieldName('name')?.text ?? '';
      const valueNode = a.childForFieldName('value');
      const value = valueNode ? expandWord(valueNode, this.wordEnv(ctx)) : null;
      if (SHELL_CONTROL_VARS.has(name))
        this.unknown(`a change to ${name}, which changes what later words mean`);
      if (standalone)
        ctx.vars.set(name, value === null ? '' : value.dynamic || value.glob ? null : value.text);
    }
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
    const redirects: Redirect[] = [];
    const stdin: (string | null)[] = [];
    let stdinFile = false;
    const allRedirects = [...redirectNodes];
    for (const c of node?.namedChildren ?? []) {
      if (!c) continue;
      if (c.type === 'variable_assignment') {
        assigns.push(c.text);
        this.assignments(c, ctx, false);
      } else if (c.type.endsWith('_redirect')) allRedirects.push(c);
      else words.push(expandWord(c, env));
    }
    for (const r of allRedirects) {
      const got = this.redirect(r, env);
      if (!got) continue;
      redirects.push(got.redirect);
      if (got.body !== undefined) stdin.push(got.body);
      if (/^0?<$/.test(got.redirect.op)) stdinFile = true;
    }
    const parsed = this.analyze(words, { redirects, assigns, stdin, stdinFile }, ctx, place);
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
    r: { redirects: Redirect[]; assigns: string[]; stdin: (string | null)[]; stdinFile: boolean },
    ctx: Ctx,
    place: Place,
  ): Parsed {
    let words = allWords;
    const wrappers: number[] = [];
    let start = -1;
    let i = 0;
    let fed = false;
    while (i < words.length) {
      const w = words[i]!;
      const name = basename(w.text);
      const spec = w.dynamic ? undefined : WRAPPERS[name];
      if (!spec) {
        start = i;
        break;
      }
      wrappers.push(i);
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
    const parsed: Parsed = { cmd, words, stdin: r.stdin, stdinFile: r.stdinFile };
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
    if (name === 'find') this.findExec(args, ctx);
    if (name === 'cd' || name === 'pushd' || name === 'popd') this.cd(name, args, ctx);
    return parsed;
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
      if (
        !file ||
        file.dynamic ||
        /^\/dev\/(stdin|fd\/)|^\/proc\/.*\/fd\//.test(file.text) ||
        file.text === '-'
      )
        this.unknown(`${name} of a script that is not a plain file`);
      return;
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
        // python -c / node -e / perl -e: the program is an argument; judged as the interpreter itself.
        if (/^-[a-zA-Z]*[cemE]$|^--eval$|^--command$/.test(a.text) && a.text !== '-m') return;
        if (/^-[a-zA-Z]*m$/.test(a.text)) return; // python -m module
        continue;
      }
      break;
    }
    if (shell && inline) {
      if (inline.dynamic) this.unknown(`${name} -c with a command line only known when it runs`);
      else nested(inline.text);
      return;
    }
    const operand = args[k];
    if (operand && operand.text !== '-') {
      if (operand.dynamic && /^[<>]\(/.test(operand.text))
        this.unknown(`${name} running a process substitution`);
      else if (operand.dynamic)
        this.unknown(`${name} running a script whose name is only known when it runs`);
      else if (/^\/dev\/(stdin|fd\/)|^\/proc\/.*\/fd\//.test(operand.text))
        this.unknown(`${name} reading its script from ${operand.text}`);
      return; // a script file: judged as running that program
    }
    // No script argument: it reads the program from stdin.
    const sources: (string | null)[] = [...p.stdin];
    if (place.pipeIn) sources.push(place.pipeIn.text);
    if (p.stdinFile) sources.push(null);
    if (sources.length === 0) return; // interactive, nothing fed
    if (!shell || sources.some((s) => s === null)) {
      this.unknown(`${name} fed its ${shell ? 'commands' : 'program'} through stdin`);
      return;
    }
    for (const s of sources) nested(s!);
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
          { redirects: [], assigns: [], stdin: [], stdinFile: false },
          { ...cloneCtx(ctx), depth: ctx.depth + 1 },
          { piped: false, background: false, pipeIn: null },
        );
        parsed.cmd.fed = true;
      }
    }
  }
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

/** What a command prints when that is known from its words: echo/printf of literals, cat of a literal here-document. */
function printed(p: Parsed): string | null {
  const { cmd, words } = p;
  if (cmd.start < 0 || cmd.wrappers.length > 0) return null;
  const args = words.slice(cmd.start + 1);
  if (args.some((w) => w.dynamic)) return null;
  if (cmd.name === 'echo' || cmd.name === 'printf') {
    const texts = args
      .map((w) => w.text)
      .filter((t, k) => !(cmd.name === 'echo' && k === 0 && /^-[neE]+$/.test(t)));
    const text = texts.join(' ');
    return cmd.name === 'printf' ? text.replace(/\\n/g, '\n') : text;
  }
  if (cmd.name === 'cat' && args.length === 0 && p.stdin.length === 1) return p.stdin[0] ?? null;
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
