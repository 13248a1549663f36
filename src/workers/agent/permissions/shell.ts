import { lex, type Token, type Word } from './lex.js';
import { skipWrapperOptions, WRAPPERS } from './wrappers.js';

/**
 * Finds every command a shell line would run, so the permission engine judges command words and
 * not text: `git commit -m "fix shutdown"` runs git, while `sudo /sbin/shutdown` and
 * `x; $(bash -c 'shutdown')` run shutdown. Lines are split on ; && || | & and newlines; $(…),
 * backticks, <(…), `sh -c '…'`, `eval …`, `find -exec …`, here-documents fed to a shell and
 * `echo … | sh` are parsed as the commands they are; wrappers (sudo, env, VAR=1, nice, timeout,
 * xargs, …) are looked through. It catches mistakes and plain spellings; a program that builds
 * its commands at run time (python -c, a script file) is beyond any line parser.
 */

export interface Redirect {
  /** The operator as written, with any fd number: `>`, `2>>`, `&>`, `<`, `<<<`, `>&`. */
  op: string;
  /** The file (or fd number, or here-document delimiter) it names. */
  target: string;
  dynamic: boolean;
}

export interface SimpleCommand {
  /** Every word after quote removal, wrappers included, leading assignments left out. */
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
  /** 0 at the top level, more inside $(…), `sh -c`, … */
  depth: number;
}

export interface ParsedLine {
  commands: SimpleCommand[];
  /** Names of shell functions the line defines (`f() { …; }`). */
  functions: string[];
  /** Nesting went deeper than we follow; what lies below was not seen. */
  tooDeep: boolean;
}

export interface ShellOptions {
  /** The user's home folder: `~` and `$HOME` are expanded to it. */
  home?: string;
  /** svc's folder: `$SVC_HOME` is expanded to it. */
  svcHome?: string;
}

interface Raw {
  assigns: Word[];
  words: Word[];
  redirects: { op: string; target: Word }[];
}

const MAX_DEPTH = 8;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'rbash']);
const SKIP_WORDS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'coproc']);
const EXEC_FLAGS = new Set(['-exec', '-execdir', '-ok', '-okdir']);

export function basename(word: string): string {
  const trimmed = word.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** Parses a command line into the simple commands it runs, nested ones included. */
export function parseShell(line: string, opts: ShellOptions = {}): ParsedLine {
  const out: ParsedLine = { commands: [], functions: [], tooDeep: false };
  parseText(line, 0, out, opts);
  return out;
}

function parseText(text: string, depth: number, out: ParsedLine, opts: ShellOptions): void {
  if (depth > MAX_DEPTH) {
    out.tooDeep = true;
    return;
  }
  const onNested = (tokens: Token[], d: number) => new TokenParser(tokens, d, out, opts).run();
  const onTooDeep = () => {
    out.tooDeep = true;
  };
  new TokenParser(lex(text, { home: opts.home, svcHome: opts.svcHome, onNested, onTooDeep }, depth), depth, out, opts).run();
}

const empty = (): Raw => ({ assigns: [], words: [], redirects: [] });

/** Groups tokens into pipelines of simple commands, skipping the shell's reserved words. */
class TokenParser {
  private i = 0;
  private cur: Raw = empty();
  private pipeline: Raw[] = [];
  /** Open `case … esac` blocks: their patterns are not commands. */
  private readonly cases: { state: 'head' | 'pattern' | 'body'; parens: number }[] = [];

  constructor(
    private readonly tokens: Token[],
    private readonly depth: number,
    private readonly out: ParsedLine,
    private readonly opts: ShellOptions,
  ) {}

  run(): void {
    if (this.depth > MAX_DEPTH) {
      this.out.tooDeep = true;
      return;
    }
    while (this.i < this.tokens.length) {
      const tok = this.tokens[this.i++]!;
      const cs = this.cases.at(-1);
      if (cs?.state === 'head') {
        if (tok.kind === 'word' && !tok.word.quoted && tok.word.text === 'in') cs.state = 'pattern';
      } else if (cs?.state === 'pattern') {
        if (tok.kind === 'op' && tok.op === ')') cs.state = 'body';
        else if (tok.kind === 'word' && !tok.word.quoted && tok.word.text === 'esac') this.cases.pop();
      } else if (tok.kind === 'op') {
        this.op(tok.op);
      } else {
        this.word(tok.word);
      }
    }
    this.endPipeline(false);
  }

  private op(op: string): void {
    const cs = this.cases.at(-1);
    if (op === ';' || op === '\n' || op === '&' || op === '&&' || op === '||') {
      this.endPipeline(op === '&');
    } else if (op === ';;' || op === ';&' || op === ';;&') {
      this.endPipeline(false);
      if (cs) cs.state = 'pattern';
    } else if (op === '|' || op === '|&') {
      this.endCommand();
    } else if (op === '(') {
      const next = this.tokens[this.i];
      if (this.cur.words.length === 1 && next?.kind === 'op' && next.op === ')') {
        // `name() body`: a function definition, not a call.
        this.out.functions.push(this.cur.words[0]!.text);
        this.cur = empty();
        this.i++;
        return;
      }
      if (cs) cs.parens++;
      this.endPipeline(false);
    } else if (op === ')') {
      if (cs && cs.parens > 0) cs.parens--;
      this.endPipeline(false);
    } else {
      const next = this.tokens[this.i];
      if (next?.kind === 'word') {
        this.i++;
        this.cur.redirects.push({ op, target: next.word });
      }
    }
  }

  private word(w: Word): void {
    if (this.cur.words.length === 0 && !w.quoted) {
      const kw = w.text;
      const cs = this.cases.at(-1);
      if (cs && kw === 'esac') {
        this.endPipeline(false);
        this.cases.pop();
        return;
      }
      if (SKIP_WORDS.has(kw)) return;
      if (kw === '[[') return this.skipUntil((t) => t.kind === 'word' && t.word.text === ']]');
      if (kw === 'for' || kw === 'select') {
        return this.skipUntil((t) => (t.kind === 'op' && (t.op === ';' || t.op === '\n')) || (t.kind === 'word' && t.word.text === 'do'));
      }
      if (kw === 'case') {
        this.cases.push({ state: 'head', parens: 0 });
        return;
      }
      if (kw === 'function') {
        const name = this.tokens[this.i];
        if (name?.kind === 'word') {
          this.out.functions.push(name.word.text);
          this.i++;
        }
        const a = this.tokens[this.i];
        const b = this.tokens[this.i + 1];
        if (a?.kind === 'op' && a.op === '(' && b?.kind === 'op' && b.op === ')') this.i += 2;
        return;
      }
      if (w.assign) {
        this.cur.assigns.push(w);
        return;
      }
    }
    this.cur.words.push(w);
  }

  private skipUntil(stop: (t: Token) => boolean): void {
    while (this.i < this.tokens.length && !stop(this.tokens[this.i++]!));
  }

  private endCommand(): void {
    const c = this.cur;
    if (c.words.length > 0 || c.assigns.length > 0 || c.redirects.length > 0) this.pipeline.push(c);
    this.cur = empty();
  }

  private endPipeline(background: boolean): void {
    this.endCommand();
    const list = this.pipeline;
    this.pipeline = [];
    list.forEach((raw, k) => analyze(raw, { piped: list.length > 1, background, prev: list[k - 1] }, this.depth, this.out, this.opts));
  }
}

interface Place {
  piped: boolean;
  background: boolean;
  /** The command piping into this one. */
  prev: Raw | undefined;
}

/** The text an `echo`/`printf` with fixed words prints, or null. */
function echoed(raw: Raw | undefined): string | null {
  if (!raw || raw.words.length === 0) return null;
  const name = basename(raw.words[0]!.text);
  if (name !== 'echo' && name !== 'printf') return null;
  const args = raw.words.slice(1);
  if (args.some((w) => w.dynamic)) return null;
  const texts = args.map((w) => w.text).filter((t, k) => !(name === 'echo' && k === 0 && /^-[neE]+$/.test(t)));
  const text = texts.join(' ');
  return name === 'printf' ? text.replace(/\\n/g, '\n') : text;
}

/** Turns one simple command into a SimpleCommand, then parses any command line it carries. */
function analyze(raw: Raw, place: Place, depth: number, out: ParsedLine, opts: ShellOptions): void {
  let words = raw.words;
  const wrappers: number[] = [];
  let start = -1;
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    const name = basename(w.text);
    const spec = w.dynamic ? undefined : WRAPPERS[name];
    if (!spec) {
      start = i;
      break;
    }
    wrappers.push(i);
    // `command -v rm` only looks rm up.
    if (name === 'command' && words.slice(i + 1).some((x) => /^-[a-zA-Z]*[vV]/.test(x.text))) break;
    const skipped = skipWrapperOptions(words, i + 1, spec);
    for (const s of skipped.scripts) parseText(s, depth + 1, out, opts);
    i = skipped.next;
  }
  // `echo a b | xargs rm -rf`: rm gets echo's words.
  const fed = wrappers.some((k) => basename(words[k]!.text) === 'xargs') ? echoed(place.prev) : null;
  if (fed !== null && start >= 0) {
    const extra = fed.split(/\s+/).filter((t) => t.length > 0).map((text): Word => ({ text, quoted: true, dynamic: false, assign: false }));
    words = [...words, ...extra];
  }
  const texts = words.map((w) => w.text);
  const name = start >= 0 ? basename(texts[start]!) : '';
  const args = start >= 0 ? texts.slice(start + 1) : [];
  out.commands.push({
    words: texts,
    dynamic: words.map((w) => w.dynamic),
    start,
    wrappers,
    name,
    args,
    redirects: raw.redirects.map((r) => ({ op: r.op, target: r.target.text, dynamic: r.target.dynamic })),
    assigns: raw.assigns.map((w) => w.text),
    piped: place.piped,
    background: place.background,
    depth,
  });
  if (start < 0 || words[start]!.dynamic) return;
  const argWords = words.slice(start + 1);
  for (const text of carried(name, argWords, raw, place)) parseText(text, depth + 1, out, opts);
  if (name === 'find') findExec(argWords, depth, out, opts);
}

/** Command lines a command runs itself: `bash -c '…'`, `eval …`, `su -c …`, `watch …`, a fed shell. */
function carried(name: string, args: Word[], raw: Raw, place: Place): string[] {
  const texts = args.map((w) => w.text);
  if (name === 'eval') return [texts.join(' ')];
  if (name === 'watch') {
    const { next } = skipWrapperOptions(args, 0, { short: 'n', long: ['--interval'] });
    return next < texts.length ? [texts.slice(next).join(' ')] : [];
  }
  if (name === 'su' || name === 'runuser') {
    for (let k = 0; k < texts.length; k++) {
      const a = texts[k]!;
      if (a.startsWith('--command=')) return [a.slice(10)];
      if (a === '--command' || /^-[a-zA-Z]*c$/.test(a)) return texts[k + 1] !== undefined ? [texts[k + 1]!] : [];
    }
    return [];
  }
  if (!SHELLS.has(name)) return [];
  let cflag = false;
  let k = 0;
  for (; k < texts.length; k++) {
    const a = texts[k]!;
    if (a === '--' || a === '-') {
      k++;
      break;
    }
    if (a.startsWith('--')) {
      if (a === '--rcfile' || a === '--init-file') k++;
      continue;
    }
    if (/^[-+][a-zA-Z]+$/.test(a)) {
      if (a[0] === '-' && a.includes('c')) cflag = true;
      if (/[oO]/.test(a)) k++;
      continue;
    }
    break;
  }
  if (cflag) return texts[k] !== undefined ? [texts[k]!] : [];
  if (k < texts.length) return []; // a script file: beyond what a line parser can see
  // A shell reading commands from stdin: a here-document, a here-string or `echo … |`.
  const fromStdin: string[] = [];
  for (const r of raw.redirects) {
    if (r.op.endsWith('<<<')) fromStdin.push(r.target.text);
    else if (r.op.endsWith('<<') || r.op.endsWith('<<-')) fromStdin.push(r.target.heredoc ?? '');
  }
  const piped = echoed(place.prev);
  if (piped !== null) fromStdin.push(piped);
  return fromStdin;
}

/** `find … -exec cmd args ;` runs cmd. */
function findExec(args: Word[], depth: number, out: ParsedLine, opts: ShellOptions): void {
  for (let k = 0; k < args.length; k++) {
    if (!EXEC_FLAGS.has(args[k]!.text)) continue;
    const words: Word[] = [];
    for (k++; k < args.length && args[k]!.text !== ';' && args[k]!.text !== '+'; k++) words.push(args[k]!);
    if (words.length > 0) {
      if (depth + 1 > MAX_DEPTH) out.tooDeep = true;
      else analyze({ assigns: [], words, redirects: [] }, { piped: false, background: false, prev: undefined }, depth + 1, out, opts);
    }
  }
}
