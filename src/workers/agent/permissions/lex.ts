/**
 * A lexer for POSIX shell command lines, written for the permission engine: it must see every
 * word the shell will run, so it follows the shell's quoting exactly, and it hands every nested
 * command text ($(…), backticks, <(…), here-document bodies) to a callback to be parsed too.
 * It never fails: input the shell would reject is lexed as far as it goes (the shell then runs
 * nothing, so a lenient reading can only over-report).
 */

export interface Word {
  /** The value after quote removal; `~` and `$HOME` are expanded, other expansions kept as written. */
  text: string;
  /** Some part was quoted or escaped (so it is not a reserved word such as `if` or `{`). */
  quoted: boolean;
  /** Holds an expansion whose value is only known when it runs ($VAR, $(…), `…`). */
  dynamic: boolean;
  /** Starts with an unquoted `NAME=` (an assignment when it comes before the command word). */
  assign: boolean;
  /** For the delimiter word after `<<`: the here-document body, once read. */
  heredoc?: string;
}

export type Token = { kind: 'word'; word: Word } | { kind: 'op'; op: string };

export interface LexOptions {
  /** The user's home folder, for `~` and `$HOME`. */
  home?: string;
  /** svc's folder, for `$SVC_HOME` (commands see it in their environment). */
  svcHome?: string;
  /** Receives the tokens of each nested command text and how deeply it is nested. */
  onNested: (tokens: Token[], depth: number) => void;
  /** Called when nesting goes deeper than MAX_LEVEL; the rest of that text is not lexed. */
  onTooDeep?: () => void;
}

/** Sub-lexers of any kind ($(…), $((…)), ${…}, arrays, here-documents) nest at most this deep. */
const MAX_LEVEL = 24;

const OPS = [';;&', '&>>', '<<-', '<<<', '&&', '||', ';;', ';&', '|&', '>>', '>|', '<>', '<<', '>&', '<&', '&>', ';', '&', '|', '(', ')', '<', '>'];
const META = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const SPECIAL_PARAM = /^[?$!#@*0-9-]/;

/** A lexer over `src` from `start`; with `untilParen` it stops at the `)` that closes a `$(`. */
class Lexer {
  pos: number;
  readonly tokens: Token[] = [];
  private readonly heredocs: { word: Word; strip: boolean; literal: boolean }[] = [];
  private expectDelimiter: { strip: boolean } | null = null;

  constructor(
    private readonly src: string,
    start: number,
    private readonly opts: LexOptions,
    private readonly depth: number,
    private readonly untilParen: boolean,
    private readonly level = 0,
  ) {
    this.pos = start;
  }

  run(): number {
    const { src } = this;
    if (this.level > MAX_LEVEL) {
      this.opts.onTooDeep?.();
      return (this.pos = src.length);
    }
    let parens = 0;
    while (this.pos < src.length) {
      const c = src[this.pos]!;
      if (c === ' ' || c === '\t' || c === '\r') {
        this.pos++;
      } else if (c === '\\' && src[this.pos + 1] === '\n') {
        this.pos += 2;
      } else if (c === '\n') {
        this.tokens.push({ kind: 'op', op: '\n' });
        this.pos++;
        this.readHeredocs();
      } else if (c === '#') {
        while (this.pos < src.length && src[this.pos] !== '\n') this.pos++;
      } else if (this.untilParen && c === ')' && parens === 0) {
        return this.pos;
      } else if ((c === '<' || c === '>') && src[this.pos + 1] === '(') {
        this.word();
      } else if (META.has(c)) {
        const op = OPS.find((o) => src.startsWith(o, this.pos))!;
        this.pos += op.length;
        if (op === '(') parens++;
        if (op === ')') parens--;
        if (op === '<<' || op === '<<-') this.expectDelimiter = { strip: op === '<<-' };
        this.tokens.push({ kind: 'op', op });
      } else {
        this.word();
      }
    }
    return this.pos;
  }

  /** One word; an all-digit word right before `<` or `>` becomes part of the redirection. */
  private word(): void {
    const { src } = this;
    const w: Word = { text: '', quoted: false, dynamic: false, assign: false };
    const begin = this.pos;
    while (this.pos < src.length) {
      const c = src[this.pos]!;
      if ((c === '<' || c === '>') && src[this.pos + 1] === '(' && this.pos === begin) {
        // Process substitution: its command runs; the word stands for a file name.
        this.pos = this.nested(this.pos + 2);
        w.text += src.slice(begin, this.pos);
        w.dynamic = true;
        continue;
      }
      if (c === '(' && !w.quoted && /^[A-Za-z_][A-Za-z0-9_]*\+?=$/.test(w.text)) {
        // An array assignment `a=(x y)`: data, though substitutions inside still run.
        const end = this.skipParens(this.pos + 1);
        w.text += src.slice(this.pos, end);
        this.pos = end;
        continue;
      }
      if (META.has(c)) break;
      if (c === "'") {
        const end = src.indexOf("'", this.pos + 1);
        const stop = end < 0 ? src.length : end;
        w.text += src.slice(this.pos + 1, stop);
        w.quoted = true;
        this.pos = stop + 1;
      } else if (c === '"') {
        this.pos++;
        this.doubleQuoted(w, '"');
        w.quoted = true;
      } else if (c === '\\') {
        const next = src[this.pos + 1];
        if (next === '\n') this.pos += 2;
        else {
          if (next !== undefined) w.text += next;
          w.quoted = true;
          this.pos += 2;
        }
      } else if (c === '$') {
        this.dollar(w, false);
      } else if (c === '`') {
        this.backtick(w);
      } else if (c === '~' && this.pos === begin && this.opts.home && (this.pos + 1 >= src.length || src[this.pos + 1] === '/' || META.has(src[this.pos + 1]!))) {
        w.text += this.opts.home;
        this.pos++;
      } else if (c === '~' && this.pos === begin) {
        // ~user, ~+, ~- name folders only the shell knows: the word's value is not what it reads.
        w.dynamic = true;
        w.text += c;
        this.pos++;
      } else if (c === '{' && /^\{[^{}\s]*,[^{}\s]*\}/.test(src.slice(this.pos))) {
        // Brace expansion ({a,b}) turns one word into several, each then tilde-expanded: unknown here.
        w.dynamic = true;
        w.text += c;
        this.pos++;
      } else {
        if (c === '=' && !w.quoted && !w.assign && /^[A-Za-z_][A-Za-z0-9_]*\+?$/.test(w.text)) w.assign = true;
        w.text += c;
        this.pos++;
      }
    }
    const next = src[this.pos];
    if (!w.quoted && /^\d+$/.test(w.text) && (next === '<' || next === '>') && this.pos > begin) {
      const op = OPS.find((o) => src.startsWith(o, this.pos))!;
      this.pos += op.length;
      if (op === '<<' || op === '<<-') this.expectDelimiter = { strip: op === '<<-' };
      this.tokens.push({ kind: 'op', op: w.text + op });
      return;
    }
    if (this.expectDelimiter) {
      this.heredocs.push({ word: w, strip: this.expectDelimiter.strip, literal: w.quoted });
      this.expectDelimiter = null;
    }
    this.tokens.push({ kind: 'word', word: w });
  }

  /** Variables whose value is known here: a path through them is checked as the path it is. */
  private known(name: string): string | undefined {
    if (name === 'HOME') return this.opts.home;
    if (name === 'SVC_HOME') return this.opts.svcHome;
    return undefined;
  }

  /** Inside "…" (or a here-document body when `end` is null): only $, ` and \ are special. */
  private doubleQuoted(w: Word, end: '"' | null): void {
    const { src } = this;
    while (this.pos < src.length) {
      const c = src[this.pos]!;
      if (end !== null && c === end) {
        this.pos++;
        return;
      }
      if (c === '\\') {
        const next = src[this.pos + 1];
        if (next === '\n') this.pos += 2;
        else if (next !== undefined && '$`"\\'.includes(next)) {
          w.text += next;
          this.pos += 2;
        } else {
          w.text += c;
          this.pos++;
        }
      } else if (c === '$') {
        this.dollar(w, true);
      } else if (c === '`') {
        this.backtick(w);
      } else {
        w.text += c;
        this.pos++;
      }
    }
  }

  private dollar(w: Word, inDouble: boolean): void {
    const { src } = this;
    const at = this.pos;
    const rest = src.slice(at + 1, at + 3);
    if (rest.startsWith('((')) {
      // Arithmetic: not a command; skipParens still reports any $(…) inside it.
      const end = this.skipParens(at + 2);
      w.text += src.slice(at, end);
      w.dynamic = true;
      this.pos = end;
    } else if (rest.startsWith('(')) {
      this.pos = this.nested(at + 2);
      w.text += src.slice(at, this.pos);
      w.dynamic = true;
    } else if (rest.startsWith('{')) {
      const end = this.skipBraces(at + 2);
      const inner = src.slice(at + 2, end - 1);
      const known = this.known(inner);
      if (known !== undefined) w.text += known;
      else {
        this.scanText(inner);
        w.text += src.slice(at, end);
        w.dynamic = true;
      }
      this.pos = end;
    } else if (!inDouble && rest.startsWith("'")) {
      this.pos = at + 2;
      w.text += this.ansiC();
      w.quoted = true;
    } else if (!inDouble && rest.startsWith('"')) {
      this.pos = at + 2;
      this.doubleQuoted(w, '"');
      w.quoted = true;
    } else {
      const name = NAME.exec(src.slice(at + 1))?.[0] ?? SPECIAL_PARAM.exec(src.slice(at + 1))?.[0];
      if (name === undefined) {
        w.text += '$';
        this.pos++;
      } else {
        const known = this.known(name);
        if (known !== undefined) w.text += known;
        else {
          w.text += '$' + name;
          w.dynamic = true;
        }
        this.pos = at + 1 + name.length;
      }
    }
  }

  /** `…`: the text up to the next unescaped backtick, unescaped once, is a nested command. */
  private backtick(w: Word): void {
    const { src } = this;
    let i = this.pos + 1;
    let inner = '';
    while (i < src.length && src[i] !== '`') {
      if (src[i] === '\\' && i + 1 < src.length && '$`\\'.includes(src[i + 1]!)) {
        inner += src[i + 1];
        i += 2;
      } else inner += src[i++];
    }
    this.scanCommands(inner);
    w.text += src.slice(this.pos, Math.min(i + 1, src.length));
    w.dynamic = true;
    this.pos = i + 1;
  }

  /** $'…': backslash escapes are decoded (so $'\x72eboot' is seen as reboot). */
  private ansiC(): string {
    const { src } = this;
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };
    let out = '';
    while (this.pos < src.length && src[this.pos] !== "'") {
      const c = src[this.pos]!;
      if (c !== '\\') {
        out += c;
        this.pos++;
        continue;
      }
      const e = src[this.pos + 1] ?? '';
      const tail = src.slice(this.pos + 2);
      let m: RegExpExecArray | null;
      if (e in simple) {
        out += simple[e];
        this.pos += 2;
      } else if (e === 'x' && (m = /^[0-9a-fA-F]{1,2}/.exec(tail))) {
        out += String.fromCharCode(parseInt(m[0], 16));
        this.pos += 2 + m[0].length;
      } else if ((e === 'u' || e === 'U') && (m = /^[0-9a-fA-F]{1,8}/.exec(tail))) {
        out += String.fromCodePoint(Math.min(parseInt(m[0], 16), 0x10ffff));
        this.pos += 2 + m[0].length;
      } else if ((m = /^[0-7]{1,3}/.exec(src.slice(this.pos + 1)))) {
        out += String.fromCharCode(parseInt(m[0], 8) & 0xff);
        this.pos += 1 + m[0].length;
      } else {
        out += c + e;
        this.pos += 2;
      }
    }
    this.pos++;
    return out;
  }

  /** Lexes a nested command starting at `from` (just after `$(` or `<(`); returns the index after its `)`. */
  private nested(from: number): number {
    const inner = new Lexer(this.src, from, this.opts, this.depth + 1, true, this.level + 1);
    const end = inner.run();
    this.opts.onNested(inner.tokens, this.depth + 1);
    return Math.min(end + 1, this.src.length);
  }

  private scanCommands(text: string): void {
    const inner = new Lexer(text, 0, this.opts, this.depth + 1, false, this.level + 1);
    inner.run();
    this.opts.onNested(inner.tokens, this.depth + 1);
  }

  /** Finds $(…) and backticks in text that is otherwise data (${…}, $((…)), here-documents). */
  private scanText(text: string): void {
    const inner = new Lexer(text, 0, this.opts, this.depth, false, this.level + 1);
    if (this.level + 1 > MAX_LEVEL) return this.opts.onTooDeep?.();
    inner.doubleQuoted({ text: '', quoted: false, dynamic: false, assign: false }, null);
  }

  /** The index after the `)` matching an already opened `(` at depth 1, skipping quoted text. */
  private skipParens(from: number): number {
    const inner = new Lexer(this.src, from, this.opts, this.depth, true, this.level + 1);
    const end = inner.run();
    return Math.min(end + 1, this.src.length);
  }

  private skipBraces(from: number): number {
    const { src } = this;
    let depth = 1;
    let i = from;
    while (i < src.length && depth > 0) {
      const c = src[i]!;
      if (c === '\\') i++;
      else if (c === "'") i = src.indexOf("'", i + 1) < 0 ? src.length : src.indexOf("'", i + 1);
      else if (c === '{') depth++;
      else if (c === '}') depth--;
      i++;
    }
    return i;
  }

  /** After a newline: the bodies of pending here-documents, in order. */
  private readHeredocs(): void {
    const { src } = this;
    while (this.heredocs.length > 0) {
      const h = this.heredocs.shift()!;
      const lines: string[] = [];
      let found = false;
      while (this.pos < src.length) {
        const nl = src.indexOf('\n', this.pos);
        const line = src.slice(this.pos, nl < 0 ? src.length : nl);
        this.pos = nl < 0 ? src.length : nl + 1;
        const cmp = h.strip ? line.replace(/^\t+/, '') : line;
        if (cmp === h.word.text) {
          found = true;
          break;
        }
        lines.push(cmp);
      }
      h.word.heredoc = lines.join('\n') + (found || lines.length > 0 ? '\n' : '');
      if (!h.literal) this.scanText(h.word.heredoc);
    }
  }
}

/** The tokens of `src`; nested command texts go to `opts.onNested`. */
export function lex(src: string, opts: LexOptions, depth = 0): Token[] {
  const l = new Lexer(src, 0, opts, depth, false);
  l.run();
  return l.tokens;
}
