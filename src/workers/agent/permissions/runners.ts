import type { Word } from './words.js';

/**
 * Commands that run another command given to them: in their arguments (`parallel rm ::: x`,
 * `tmux send-keys 'rm …' Enter`, `ssh host cmd`), in an option (`tar --to-command=…`, `rsync -e
 * …`, `vim -c '!…'`), or in configuration they are handed (`git -c core.fsmonitor=…`,
 * `GIT_SSH_COMMAND=…`, `LESSOPEN=…`). The principle: the inner command is judged as a command,
 * recursively, whenever it can be extracted; when it cannot (a computed value, a script language
 * the check does not read), it is reported as unknown, so the line asks.
 *
 * Runners that are in no table here are caught by `argumentCommand`: an argument that names a
 * program the engine has rules about starts a command line, unless the program is known not to
 * run its arguments.
 */
export type Inner =
  | { kind: 'words'; words: Word[] }
  | { kind: 'text'; text: string }
  | { kind: 'unknown'; what: string };

const lit = (text: string): Word => ({
  text,
  dynamic: false,
  glob: false,
  assign: false,
  quoted: true,
});

/** A value that is itself a command line; a computed one cannot be seen. */
function textOf(w: Word | undefined, what: string): Inner[] {
  if (!w) return [];
  if (w.dynamic) return [{ kind: 'unknown', what: `${what} only known when it runs` }];
  return [{ kind: 'text', text: w.text }];
}

/** The value of option `i` (`-e x`, `-ex`, `--rsh=x`, `--rsh x`), and how many words it took. */
function optionValue(args: Word[], i: number, at: number): { value?: Word; used: number } {
  const a = args[i]!;
  if (at < a.text.length) return { value: { ...a, text: a.text.slice(at) }, used: 1 };
  return { value: args[i + 1], used: 2 };
}

/**
 * Environment variables whose value a program runs as a command, by name: git's GIT_SSH_COMMAND,
 * GIT_EDITOR, GIT_PAGER…, EDITOR, VISUAL, PAGER, MANPAGER, LESSOPEN, SSH_ASKPASS, BROWSER, and
 * any *_COMMAND, *_CMD, *_EDITOR, *_PAGER, *_ASKPASS or *_PROGRAM.
 */
export function commandVariable(name: string): boolean {
  return /^(EDITOR|VISUAL|PAGER|MANPAGER|LESSOPEN|LESSCLOSE|BROWSER|TERMINAL|GIT_SSH|GIT_EXTERNAL_DIFF|DIFFPROG|[A-Z0-9_]*_(COMMAND|CMD|EDITOR|PAGER|ASKPASS|PROGRAM|PROXY))$/.test(
    name,
  );
}

/** The command a command-valued variable's value runs (`|lesspipe %s`, `!cmd`, `-cmd` prefixes dropped). */
export function variableCommand(value: string): string {
  return value.replace(/^\s*(\|\|?|-|!)/, '').replace(/%s/g, 'x');
}

const BOOL = /^(true|false|yes|no|on|off|0|1|always|never|auto)$/i;

/**
 * One git configuration pair, from `-c`, `git config`, or GIT_CONFIG_KEY_n/VALUE_n: keys whose
 * value git runs (by git's naming: *.command, *.cmd, *.program, *editor, *pager, *helper,
 * *.driver, *hook, *textconv, *.clean, *.smudge, *.process, *external, *sshcommand, *askpass,
 * *proxy, fsmonitor, and `alias.*` starting with `!`) are judged as commands; keys that make git
 * read configuration or hooks from elsewhere cannot be seen through.
 */
export function gitConfigPair(key: string, value: Word | undefined): Inner[] {
  const k = key.toLowerCase();
  if (/^(include|includeif\..*)\.path$|^core\.hookspath$|^protocol\..*allow$/.test(k))
    return [{ kind: 'unknown', what: `git configuration (${key}) that runs files from elsewhere` }];
  const isAlias = k.startsWith('alias.');
  const runs =
    /(\.command|\.cmd|program|editor|pager|helper|\.driver|hook|textconv|\.clean|\.smudge|\.process|external|sshcommand|askpass|proxy|fsmonitor)$/.test(
      k,
    ) || /^pager\./.test(k);
  if (!isAlias && !runs) return [];
  if (!value) return [];
  if (value.dynamic) return [{ kind: 'unknown', what: `git ${key} only known when it runs` }];
  const v = value.text;
  if (isAlias) {
    if (v.startsWith('!')) return [{ kind: 'text', text: v.slice(1) }];
    return /(^|\s)(-c|--config-env|--exec-path)\b/.test(v)
      ? [{ kind: 'unknown', what: `a git alias that changes git's configuration (${key})` }]
      : [];
  }
  if (BOOL.test(v) || v === '') return [];
  // credential.helper without `!` names a git-credential-<name> helper: a program, judged by name.
  if (k.endsWith('helper') && !v.startsWith('!'))
    return [{ kind: 'words', words: [lit(v.startsWith('/') ? v : `git-credential-${v}`)] }];
  return [{ kind: 'text', text: v.replace(/^!/, '') }];
}

function gitInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a.dynamic && a.text.startsWith('-'))
      return [{ kind: 'unknown', what: 'a git option only known when it runs' }];
    if (
      a.text === '-c' ||
      (a.text.startsWith('-c') && a.text.length > 2 && !a.text.startsWith('--'))
    ) {
      const { value, used } = optionValue(args, i, 2);
      i += used - 1;
      if (!value) break;
      if (value.dynamic) out.push({ kind: 'unknown', what: 'git -c only known when it runs' });
      else {
        const eq = value.text.indexOf('=');
        const key = eq < 0 ? value.text : value.text.slice(0, eq);
        out.push(
          ...gitConfigPair(key, eq < 0 ? undefined : { ...value, text: value.text.slice(eq + 1) }),
        );
      }
    } else if (/^--(config-env|exec-path)(=|$)/.test(a.text)) {
      out.push({
        kind: 'unknown',
        what: `git ${a.text.split('=')[0]}, which makes git run other programs`,
      });
      if (!a.text.includes('=')) i++;
    } else if (
      ['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--list-cmds'].includes(
        a.text,
      )
    )
      i++;
    else if (!a.text.startsWith('-')) break;
  }
  const sub = args[i]?.text;
  if (sub !== 'config') return out;
  // git config [scope and type options] key value, or git config set key value
  const rest = args.slice(i + 1);
  const operands: Word[] = [];
  for (let k = 0; k < rest.length; k++) {
    const a = rest[k]!;
    if (a.dynamic) {
      operands.push(a);
      continue;
    }
    if (['-f', '--file', '--blob', '--type', '--default', '--comment', '--value'].includes(a.text))
      k++;
    else if (!a.text.startsWith('-')) operands.push(a);
  }
  if (operands[0]?.text === 'set') operands.shift();
  const [key, value] = operands;
  if (key && value) {
    if (key.dynamic)
      out.push({ kind: 'unknown', what: 'git config of a key only known when it runs' });
    else out.push(...gitConfigPair(key.text, value));
  }
  return out;
}

/** GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n pairs and config files handed to git through the environment. */
export function gitEnvironment(assigns: Map<string, Word>): Inner[] {
  const out: Inner[] = [];
  for (const [name, value] of assigns) {
    const m = /^GIT_CONFIG_KEY_(\d+)$/.exec(name);
    if (m) {
      if (value.dynamic) out.push({ kind: 'unknown', what: `${name} only known when it runs` });
      else out.push(...gitConfigPair(value.text, assigns.get(`GIT_CONFIG_VALUE_${m[1]}`)));
    } else if (
      /^GIT_CONFIG(_GLOBAL|_SYSTEM|_PARAMETERS)?$|^GIT_EXEC_PATH$|^GIT_TEMPLATE_DIR$/.test(name) &&
      value.text !== '/dev/null'
    )
      out.push({
        kind: 'unknown',
        what: `${name}, which hands git configuration the check cannot see`,
      });
  }
  return out;
}

/** GNU tar: options whose value is a program it runs. */
const TAR_RUNS = [
  'to-command',
  'checkpoint-action',
  'use-compress-program',
  'info-script',
  'new-volume-script',
  'rsh-command',
  'rmt-command',
];

function tarInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const given = t.slice(2, eq < 0 ? undefined : eq);
      // GNU takes any unambiguous prefix: `--to-com=…` is --to-command.
      const hit = given.length >= 2 ? TAR_RUNS.find((n) => n.startsWith(given)) : undefined;
      if (!hit) continue;
      const value: Word | undefined = eq < 0 ? args[++i] : { ...a, text: t.slice(eq + 1) };
      if (!value) continue;
      if (hit === 'checkpoint-action') {
        const m = /^(exec|sleep|echo|ttyout|bell|dot|totals|wait)(=(.*))?$/s.exec(value.text);
        if (value.dynamic)
          out.push({ kind: 'unknown', what: 'a tar checkpoint action only known when it runs' });
        else if (m?.[1] === 'exec') out.push({ kind: 'text', text: m[3] ?? '' });
      } else out.push(...textOf(value, `tar --${hit}`));
    } else if (/^-[A-Za-z]*[IF]/.test(t)) {
      const at = t.search(/[IF]/) + 1;
      const { value, used } = optionValue(args, i, at);
      i += used - 1;
      out.push(...textOf(value, 'tar -I'));
    }
  }
  return out;
}

function makeInner(args: Word[]): Inner[] {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic) continue;
    if (
      t === '-E' ||
      /^-[A-Za-z]*E/.test(t) ||
      (t.startsWith('--e') && 'eval'.startsWith(t.slice(2).split('=')[0]!))
    )
      return [{ kind: 'unknown', what: 'make --eval, whose makefile text runs commands' }];
    if (
      (t === '-f' || t === '--file' || t === '--makefile') &&
      /^(-|\/dev\/stdin|\/dev\/fd\/\d+)$/.test(args[i + 1]?.text ?? '')
    )
      return [{ kind: 'unknown', what: 'make reading its makefile from stdin' }];
    if (
      /^(SHELL|MAKESHELL|\.SHELLFLAGS|MAKEFLAGS|MAKEFILES)=/.test(t) ||
      (/^[A-Za-z_][A-Za-z0-9_.]*=/.test(t) && /\$\(shell|`/.test(t))
    )
      return [{ kind: 'unknown', what: `make with ${t.split('=')[0]} set on the command line` }];
  }
  return [];
}

/**
 * What a sed script runs: the `e` command (with a command, or the pattern space), and the `e`
 * flag of `s///`. Writes (`w file`, `s///w file`) are found by writers.ts.
 */
export function sedScripts(args: Word[]): { scripts: Word[]; files: Word[]; sandbox: boolean } {
  const scripts: Word[] = [];
  const files: Word[] = [];
  let sandbox = false;
  let fromFile = false;
  const operands: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (a.dynamic || !t.startsWith('-') || t === '-') {
      operands.push(a);
      continue;
    }
    if (t === '--sandbox') sandbox = true;
    else if (t === '-e' || t === '--expression') scripts.push(args[++i] ?? lit(''));
    else if (t.startsWith('--expression=')) scripts.push({ ...a, text: t.slice(13) });
    else if (t === '-f' || t === '--file' || t.startsWith('--file=')) {
      fromFile = true;
      if (t === '-f' || t === '--file') i++;
    } else if (t === '-l' || t === '--line-length') i++;
    else if (/^-[a-zA-Z]+$/.test(t)) {
      const e = t.indexOf('e');
      const f = t.indexOf('f');
      if (e > 0 && (f < 0 || e < f)) {
        const rest = t.slice(e + 1);
        scripts.push(rest ? { ...a, text: rest } : (args[++i] ?? lit('')));
      } else if (f > 0) {
        fromFile = true;
        if (f === t.length - 1) i++;
      }
    }
  }
  if (scripts.length === 0 && !fromFile && operands.length > 0) scripts.push(operands.shift()!);
  files.push(...operands);
  if (fromFile && !sandbox) scripts.push({ ...lit('a sed script file'), dynamic: true });
  return { scripts, files, sandbox };
}

/** Splits a sed script into commands and reports what they run and write. */
export function readSed(script: string): { runs: string[]; unknown: boolean; writes: string[] } {
  const runs: string[] = [];
  const writes: string[] = [];
  let unknown = false;
  let i = 0;
  const n = script.length;
  const skipBlank = () => {
    while (i < n && /[\s;]/.test(script[i]!)) i++;
  };
  const toEol = () => {
    const end = script.indexOf('\n', i);
    const s = script.slice(i, end < 0 ? n : end);
    i = end < 0 ? n : end + 1;
    return s;
  };
  const delimited = (d: string) => {
    while (i < n && script[i] !== d) {
      if (script[i] === '\\') i++;
      i++;
    }
    i++;
  };
  let guard = 0;
  while (i < n && guard++ < 10_000) {
    skipBlank();
    // addresses: numbers, $, /re/, \cREc, first~step, ranges, !
    for (;;) {
      if (i < n && /[0-9$~+,!]/.test(script[i]!)) i++;
      else if (script[i] === '/') {
        i++;
        delimited('/');
      } else if (script[i] === '\\' && i + 1 < n) {
        const d = script[i + 1]!;
        i += 2;
        delimited(d);
      } else if (script[i] === ' ' || script[i] === '\t') i++;
      else break;
    }
    if (i >= n) break;
    const c = script[i++]!;
    if (c === '{' || c === '}' || c === ';' || c === '\n') continue;
    if (
      c === '#' ||
      c === ':' ||
      c === 'b' ||
      c === 't' ||
      c === 'T' ||
      c === 'a' ||
      c === 'i' ||
      c === 'c'
    ) {
      // labels, comments and text run to the end of the line (a, i, c in GNU one-liner form too)
      if (c === '#' || c === ':' || 'aic'.includes(c)) toEol();
      else {
        while (i < n && !/[;\n}]/.test(script[i]!)) i++;
      }
      continue;
    }
    if (c === 'e') {
      const cmd = toEol().trim();
      if (cmd) runs.push(cmd);
      else unknown = true; // runs the pattern space
      continue;
    }
    if (c === 'w' || c === 'W') {
      writes.push(toEol().trim());
      continue;
    }
    if (c === 'r' || c === 'R') {
      toEol();
      continue;
    }
    if (c === 's' || c === 'y') {
      const d = script[i++] ?? '/';
      delimited(d);
      delimited(d);
      if (c === 'y') continue;
      while (i < n && /[gpiImMe0-9]/.test(script[i]!)) {
        if (script[i] === 'e') unknown = true; // runs the result as a command
        i++;
      }
      if (script[i] === 'w') {
        i++;
        writes.push(toEol().trim());
      }
      continue;
    }
    // one-letter commands without arguments (p, d, n, N, g, G, h, H, x, l, q, Q, =, z, F, D, P)
    if (/[qQlL]/.test(c)) while (i < n && /[0-9 ]/.test(script[i]!)) i++;
  }
  return { runs, unknown, writes };
}

function sedInner(args: Word[]): Inner[] {
  const { scripts, sandbox } = sedScripts(args);
  if (sandbox) return [];
  const out: Inner[] = [];
  for (const s of scripts) {
    if (s.dynamic) {
      out.push({ kind: 'unknown', what: 'a sed script only known when it runs' });
      continue;
    }
    const r = readSed(s.text);
    for (const run of r.runs) out.push({ kind: 'text', text: run });
    if (r.unknown)
      out.push({ kind: 'unknown', what: 'a sed script that runs its text as a command' });
  }
  return out;
}

/** Masks string and regular-expression literals of an awk program, returning the strings. */
function maskAwk(program: string): { masked: string; strings: string[] } {
  const strings: string[] = [];
  let masked = '';
  let prev = '';
  for (let i = 0; i < program.length; i++) {
    const c = program[i]!;
    if (c === '"') {
      let s = '';
      for (i++; i < program.length && program[i] !== '"'; i++) {
        if (program[i] === '\\' && i + 1 < program.length) {
          const e = program[++i]!;
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else s += program[i];
      }
      masked += `"${strings.length}"`;
      strings.push(s);
      prev = '"';
      continue;
    }
    if (c === '/' && (prev === '' || /[(,~!{};&|\n]/.test(prev))) {
      for (i++; i < program.length && program[i] !== '/'; i++) if (program[i] === '\\') i++;
      masked += '/re/';
      prev = '/';
      continue;
    }
    masked += c;
    if (!/\s/.test(c)) prev = c;
  }
  return { masked, strings };
}

function awkProgram(args: Word[]): Word | null {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic) return args[i]!;
    if (
      t === '-f' ||
      t === '--file' ||
      t === '-i' ||
      t === '--include' ||
      t === '-l' ||
      t === '--load'
    )
      return { ...lit(`awk ${t}`), dynamic: true };
    if (t === '-e' || t === '--source') return args[i + 1] ?? null;
    if (t === '-F' || t === '-v' || t === '--assign' || t === '--field-separator') i++;
    else if (t === '--') return args[i + 1] ?? null;
    else if (!t.startsWith('-')) return args[i]!;
  }
  return null;
}

function awkInner(args: Word[]): Inner[] {
  const program = awkProgram(args);
  if (!program) return [];
  if (program.dynamic)
    return [
      { kind: 'unknown', what: 'an awk program the check cannot read (computed, or from a file)' },
    ];
  const { masked, strings } = maskAwk(program.text);
  const out: Inner[] = [];
  const str = (ref: string | undefined) => (ref === undefined ? undefined : strings[Number(ref)]);
  for (const m of masked.matchAll(/\bsystem\s*\(\s*("(\d+)"\s*\))?/g)) {
    const s = str(m[2]);
    out.push(
      s === undefined
        ? { kind: 'unknown', what: 'awk system() of a computed command' }
        : { kind: 'text', text: s },
    );
  }
  for (const m of masked.matchAll(/(?:"(\d+)"\s*)?\|(?!\|)&?\s*(?:"(\d+)"|getline)?/g)) {
    const before = masked.slice(0, m.index);
    if (before.endsWith('|')) continue; // the second half of ||
    const s = str(m[2]) ?? str(m[1]);
    if (s === undefined)
      out.push({ kind: 'unknown', what: 'an awk pipe to or from a computed command' });
    else if (
      m[2] !== undefined &&
      /^\s*(\S*\/)?((ba|z|da|k|c|tc|fi)?sh|python\d*|perl|ruby|node|php|lua)\b/.test(s)
    )
      // awk's output becomes the program of a shell or interpreter: text the check cannot see.
      out.push({ kind: 'unknown', what: 'awk printing into a shell' });
    else out.push({ kind: 'text', text: s });
  }
  return out;
}

function rsyncInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (/^--(rsh|rsync-path)=/.test(t))
      out.push(...textOf({ ...a, text: t.slice(t.indexOf('=') + 1) }, 'rsync --rsh'));
    else if (t === '--rsh' || t === '--rsync-path') out.push(...textOf(args[++i], 'rsync --rsh'));
    else if (/^-[A-Za-z]*e/.test(t) && !t.startsWith('--')) {
      const { value, used } = optionValue(args, i, t.indexOf('e') + 1);
      i += used - 1;
      out.push(...textOf(value, 'rsync -e'));
    }
  }
  return out;
}

/** An editor's ex command: `!cmd` runs cmd; commands that reach a script language or the shell cannot be seen. */
function exCommand(w: Word): Inner[] {
  if (w.dynamic) return [{ kind: 'unknown', what: 'an editor command only known when it runs' }];
  const t = w.text.replace(/^[\s:]+/, '');
  const bang = /^[.%$\d,'<>a-z]*(?:r(?:ead)?|w(?:rite)?|exe(?:cute)?)?\s*!(.*)$/s.exec(t);
  if (bang) return [{ kind: 'text', text: bang[1]! }];
  if (
    /!|\b(system|systemlist|term(inal)?|py3?|python3?|pyx|pythonx|lua|luafile|perl|ruby|pyfile|py3file|so(urce)?|call|exe(cute)?|norm(al)?|silent|make|grep)\b/.test(
      t,
    )
  )
    return [{ kind: 'unknown', what: 'an editor command that can run programs' }];
  return [];
}

function vimInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (t === '-c' || t === '--cmd') out.push(...(args[i + 1] ? exCommand(args[++i]!) : []));
    else if (t.startsWith('+') && t.length > 1) out.push(...exCommand({ ...a, text: t.slice(1) }));
    else if (t === '-S' || t === '-u' || t === '-U' || t === '-s' || t === '-W')
      out.push({ kind: 'unknown', what: `an editor script read with ${t}` });
  }
  return out;
}

function sshInner(name: string, args: Word[]): Inner[] {
  const out: Inner[] = [];
  const values = name === 'ssh' ? 'BbcDEeFIiJLlmOoPpQRSWw' : 'cDFiJlooPSXB';
  let host = name !== 'ssh';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const t = a.text;
    if (!host && (a.dynamic || !t.startsWith('-'))) {
      host = true;
      const rest = args.slice(i + 1);
      if (rest.length > 0) {
        if (rest.some((w) => w.dynamic))
          out.push({ kind: 'unknown', what: 'an ssh command only known when it runs' });
        else out.push({ kind: 'text', text: rest.map((w) => w.text).join(' ') });
      }
      break;
    }
    if (!t.startsWith('-') || t === '--') continue;
    for (let k = 1; k < t.length; k++) {
      const ch = t[k]!;
      if (!values.includes(ch)) continue;
      const { value, used } = optionValue(args, i, k + 1);
      i += used - 1;
      if (ch === 'o' && value) {
        const m =
          /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)\s*[= ]\s*(.*)$/is.exec(
            value.text,
          );
        if (m) out.push(...textOf({ ...value, text: m[2]! }, `ssh -o ${m[1]}`));
        if (/^\s*(Include|PKCS11Provider|SecurityKeyProvider)\b/i.test(value.text))
          out.push({ kind: 'unknown', what: 'an ssh option that loads code or configuration' });
      } else if (ch === 'F' || (ch === 'S' && name !== 'ssh')) {
        if (ch === 'S') out.push(...textOf(value, `${name} -S`));
        else
          out.push({ kind: 'unknown', what: 'an ssh configuration file, which may run commands' });
      }
      break;
    }
  }
  return out;
}

function lessInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  for (const a of args)
    if (a.text.startsWith('+') && a.text.includes('!'))
      out.push(...textOf({ ...a, text: a.text.slice(a.text.indexOf('!') + 1) }, 'a less command'));
  return out;
}

/** GNU parallel: the command before `:::`, run once per input (inputs after `:::`, substituted for `{}`). */
function parallelInner(args: Word[]): Inner[] {
  const VALUES = new Set([
    '-j',
    '-S',
    '-a',
    '-d',
    '-E',
    '-I',
    '-n',
    '-N',
    '-L',
    '--jobs',
    '--sshlogin',
    '--arg-file',
    '--colsep',
    '--delimiter',
    '--joblog',
    '--results',
    '--tmpdir',
    '--workdir',
    '--timeout',
    '--max-args',
    '--env',
    '--tag-string',
    '--shebang',
  ]);
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith('-') && !args[i]!.dynamic) {
    if (args[i]!.text === '--') {
      i++;
      break;
    }
    i += VALUES.has(args[i]!.text) ? 2 : 1;
  }
  const sep = args.findIndex((w, k) => k >= i && /^:::[:+]*$/.test(w.text));
  const command = args.slice(i, sep < 0 ? undefined : sep);
  const inputs = sep < 0 ? [] : args.slice(sep + 1).filter((w) => !/^:::[:+]*$/.test(w.text));
  if (command.length === 0)
    return [{ kind: 'unknown', what: 'parallel running the commands its input holds' }];
  if (command.some((w) => w.dynamic) || inputs.some((w) => w.dynamic))
    return [{ kind: 'unknown', what: 'parallel running a command only known when it runs' }];
  const line = command.map((w) => w.text).join(' ');
  const each = inputs.length > 0 ? inputs.slice(0, 8) : [lit('{}')];
  return each.map((inp) => ({
    kind: 'text' as const,
    text: /\{[^}]*\}/.test(line) ? line.replace(/\{[^}]*\}/g, inp.text) : `${line} ${inp.text}`,
  }));
}

const TMUX_RUNS = new Set([
  'new-session',
  'new',
  'new-window',
  'neww',
  'split-window',
  'splitw',
  'respawn-pane',
  'respawnp',
  'respawn-window',
  'respawnw',
  'run-shell',
  'run',
  'display-popup',
  'popup',
  'pipe-pane',
  'pipep',
  'if-shell',
  'if',
]);
const TMUX_KEYS = new Set(['send-keys', 'send']);
const TMUX_VALUES = new Set([
  '-c',
  '-e',
  '-F',
  '-n',
  '-s',
  '-t',
  '-x',
  '-y',
  '-f',
  '-l',
  '-N',
  '-w',
  '-h',
  '-T',
  '-S',
  '-b',
  '-d',
  '-E',
  '-B',
  '-s',
]);
const TMUX_FLAGS_ONLY = new Set([
  '-d',
  '-P',
  '-A',
  '-D',
  '-X',
  '-E',
  '-h',
  '-v',
  '-b',
  '-k',
  '-a',
  '-l',
  '-R',
  '-M',
  '-H',
  '-K',
  '-Z',
  '-I',
  '-O',
  '-o',
]);

function tmuxInner(args: Word[]): Inner[] {
  const out: Inner[] = [];
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith('-'))
    i += ['-L', '-S', '-f', '-c', '-T'].includes(args[i]!.text) ? 2 : 1;
  // tmux commands are separated by `;` words (`\;` in the shell)
  const groups: Word[][] = [[]];
  for (const w of args.slice(i)) {
    if (w.text === ';') groups.push([]);
    else groups.at(-1)!.push(w);
  }
  for (const g of groups) {
    const sub = g[0]?.text ?? '';
    if (!TMUX_RUNS.has(sub) && !TMUX_KEYS.has(sub)) continue;
    let k = 1;
    while (k < g.length && g[k]!.text.startsWith('-') && g[k]!.text.length > 1 && !g[k]!.dynamic)
      k += TMUX_VALUES.has(g[k]!.text) && !TMUX_FLAGS_ONLY.has(g[k]!.text) ? 2 : 1;
    const rest = g.slice(k);
    if (rest.length === 0) continue;
    if (rest.some((w) => w.dynamic)) {
      out.push({ kind: 'unknown', what: `tmux ${sub} with a command only known when it runs` });
      continue;
    }
    if (TMUX_KEYS.has(sub)) {
      const keys = rest
        .map((w) => (/^(Enter|C-m|C-j|KPEnter)$/.test(w.text) ? '\n' : w.text))
        .join('');
      out.push({ kind: 'text', text: keys });
    } else if (sub === 'if-shell' || sub === 'if') out.push({ kind: 'text', text: rest[0]!.text });
    else out.push({ kind: 'text', text: rest.map((w) => w.text).join(' ') });
  }
  return out;
}

function screenInner(args: Word[]): Inner[] {
  const VALUES = new Set([
    '-S',
    '-c',
    '-e',
    '-h',
    '-p',
    '-s',
    '-t',
    '-T',
    '-Logfile',
    '-r',
    '-x',
    '-R',
  ]);
  let i = 0;
  let remote = false;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (args[i]!.dynamic || !t.startsWith('-')) break;
    if (t === '-X' || t === '-Q') remote = true;
    else if (VALUES.has(t)) i++;
  }
  const rest = args.slice(i);
  if (rest.length === 0) return [];
  if (rest.some((w) => w.dynamic))
    return [{ kind: 'unknown', what: 'screen running a command only known when it runs' }];
  if (!remote) return [{ kind: 'words', words: rest }];
  const [cmd, ...more] = rest;
  if (cmd?.text === 'stuff')
    return [
      { kind: 'text', text: more.map((w) => w.text.replace(/\^M|\\r|\\n/g, '\n')).join(' ') },
    ];
  if (cmd?.text === 'exec' || cmd?.text === 'screen')
    return more.length
      ? [{ kind: 'words', words: more.filter((w) => !/^[!.:|]+$/.test(w.text)) }]
      : [];
  return [];
}

function scriptInner(args: Word[]): Inner[] {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t.startsWith('--command=')) return textOf({ ...args[i]!, text: t.slice(10) }, 'script -c');
    if (t === '--command' || /^-[a-zA-Z]*c$/.test(t)) return textOf(args[i + 1], 'script -c');
    if (/^-[a-zA-Z]*c./.test(t))
      return textOf({ ...args[i]!, text: t.slice(t.indexOf('c') + 1) }, 'script -c');
  }
  return [];
}

function emacsInner(args: Word[]): Inner[] {
  return args.some((a) => /^--?(eval|execute|load|l|f|funcall|script|x)(=|$)/.test(a.text))
    ? [{ kind: 'unknown', what: 'emacs running Lisp code' }]
    : [];
}

/** The command lines a known tool runs from its arguments or options. */
export function innerCommands(name: string, args: Word[]): Inner[] {
  switch (name) {
    case 'git':
      return gitInner(args);
    case 'tar':
    case 'gtar':
    case 'bsdtar':
      return tarInner(args);
    case 'make':
    case 'gmake':
      return makeInner(args);
    case 'sed':
    case 'gsed':
      return sedInner(args);
    case 'awk':
    case 'gawk':
    case 'mawk':
    case 'nawk':
      return awkInner(args);
    case 'rsync':
      return rsyncInner(args);
    case 'vim':
    case 'vi':
    case 'nvim':
    case 'ex':
    case 'view':
    case 'gvim':
    case 'vimdiff':
    case 'rvim':
      return vimInner(args);
    case 'emacs':
    case 'emacsclient':
      return emacsInner(args);
    case 'ssh':
    case 'scp':
    case 'sftp':
      return sshInner(name, args);
    case 'less':
    case 'more':
    case 'most':
      return lessInner(args);
    case 'parallel':
      return parallelInner(args);
    case 'tmux':
      return tmuxInner(args);
    case 'screen':
      return screenInner(args);
    case 'script':
      return scriptInner(args);
    default:
      return [];
  }
}

/**
 * The generalisation for runners in no table: the first argument that names a program in
 * `significant` (one the engine has rules about) starts a command with the words after it, and
 * an argument that is a whole command line starting with one (`hyperfine "rm -rf ~"`) is read as
 * one. Programs known not to run their arguments (ls, grep, git, npm, package managers, …) are
 * left alone by the caller.
 */
export function argumentCommand(
  args: Word[],
  significant: (name: string) => boolean,
  base: (word: string) => string,
): Inner[] {
  const out: Inner[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a.dynamic || a.text.startsWith('-')) continue;
    const first = /^\s*(\S+)\s+\S/.exec(a.text);
    if (first && significant(base(first[1]!))) {
      out.push({ kind: 'text', text: a.text });
      continue;
    }
    if (/\s/.test(a.text) || !significant(base(a.text))) continue;
    out.push({ kind: 'words', words: args.slice(k) });
    break;
  }
  return out;
}
