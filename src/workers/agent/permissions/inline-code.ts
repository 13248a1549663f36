/**
 * Inline code of interpreters (`python3 -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`, …) and
 * programs fed to them through stdin. The check does not run a Python or Perl parser; it reads
 * the code for what the hard limits protect:
 *
 * - shell command lines in its strings (`os.system("rm -rf ~")`, `['rm', '-rf', '/']`,
 *   backticks) are judged as commands, so a hard deny stays a deny;
 * - a kill of svc's own pids, or of the interpreter's parent, is refused like `kill <pid>`;
 * - a reference to svc's folder, a key folder or credential file, or a delete of the home
 *   folder or `/`, makes the line always ask: the check cannot see what the code does with it.
 */
export interface CodeFindings {
  /** Shell command lines found in the code's strings. */
  commands: string[];
  /** Pids the code kills: numbers, `parent` (its parent process) or `all` (-1). */
  kills: (number | 'parent' | 'all')[];
  svcHome: boolean;
  /** What protected thing it names, in words. */
  protectedRefs: string[];
}

const STRING = /(['"`])((?:\\.|(?!\1)[^\\])*)\1/gs;
const LIST =
  /[[(]\s*((?:(['"])(?:\\.|(?!\2)[^\\])*\2\s*,\s*)+(['"])(?:\\.|(?!\3)[^\\])*\3)\s*,?\s*[\])]/gs;
const KEYS =
  /\.ssh\b|\.gnupg\b|\.aws[\\/]+credentials|\.netrc\b|\.git-credentials|\bid_(rsa|ed25519|ecdsa|dsa)\b|\baccess_key\b|\.kube[\\/]+config|\.docker[\\/]+config\.json/;
const DELETE =
  /rmtree|rmSync|rmdirSync|rm_rf|rm_r\b|remove_tree|removeSync|rimraf|remove_dir_all|RemoveAll|deleteRecursively|unlink|rmdir|os\.remove|File::Path|FileUtils/;
const HOME_REF =
  /expanduser|homedir|Dir\.home|Path\.home|getenv\(\s*['"]HOME|ENV\s*\[\s*['"]HOME|ENV\s*\{\s*HOME|environ(\.get\(|\[)\s*['"]HOME|env\.get\(\s*['"]HOME|\$HOME|USERPROFILE|(['"`])~\/?\1/;
const ROOT_REF = /(['"`])\/\*?\1/;

function unescapeString(s: string): string {
  return s.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

/** Shell-quotes one word for a command line rebuilt from a list of strings. */
function quote(w: string): string {
  return /^[A-Za-z0-9_./~=:,+-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

export function readCode(
  code: string,
  opts: { home: string; svcHome: string; significant: (first: string) => boolean },
): CodeFindings {
  const found: CodeFindings = { commands: [], kills: [], svcHome: false, protectedRefs: [] };
  const first = (line: string) => /^\s*(\S+)/.exec(line)?.[1] ?? '';
  const consider = (line: string) => {
    if (found.commands.length < 16 && opts.significant(first(line).replace(/^.*\//, '')))
      found.commands.push(line);
  };
  for (const m of code.matchAll(STRING)) {
    const body = unescapeString(m[2]!);
    if (m[1] === '`' && body.trim()) found.commands.push(body);
    else consider(body);
  }
  for (const m of code.matchAll(LIST)) {
    const words = [...m[1]!.matchAll(STRING)].map((s) => unescapeString(s[2]!));
    consider(words.map(quote).join(' '));
  }
  for (const m of code.matchAll(/\bkill\w*\b\s*\(?([^;)\n]*)/g)) {
    const args = m[1]!;
    if (/ppid|getppid/i.test(args)) found.kills.push('parent');
    for (const n of args.matchAll(/(^|[^\w.])(-?)\s*(\d+)\b/g)) {
      if (n[2] === '-' && n[3] === '1') found.kills.push('all');
      else found.kills.push(Number(n[3]));
    }
  }
  const svc = code.indexOf(opts.svcHome);
  if (
    (svc >= 0 && !/[A-Za-z0-9._-]/.test(code[svc + opts.svcHome.length] ?? '')) ||
    /(^|[^A-Za-z0-9_-])\.svc(?![A-Za-z0-9_-])|SVC_HOME/.test(code)
  )
    found.svcHome = true;
  const key = KEYS.exec(code);
  if (key) found.protectedRefs.push(`a key or credential file (${key[0]})`);
  const home = ['"', "'", '`'].some((q) => code.includes(`${q}${opts.home}${q}`));
  if (DELETE.test(code) && (HOME_REF.test(code) || home || ROOT_REF.test(code)))
    found.protectedRefs.push('a delete of your home folder or of /');
  return found;
}
