import { isInside, resolveArg, type Places } from './glob.js';
import type { Unit } from './match.js';

/** `/usr/bin/rm` → `rm` (shell.ts has the same; this file stays free of the parser). */
const basename = (w: string): string => w.replace(/\/+$/, '').replace(/^.*\//, '');

/**
 * The programs the engine knows, for a machine where commands run without an OS sandbox: there
 * a command that no rule and no list here knows asks, because nothing else bounds what it does.
 * The list is the ordinary work of an agent in a project folder: looking (ls, cat, grep, git
 * status), building and testing (npm test, make, cargo build), editing files in place (cp, mv,
 * sed) and the shell's own builtins. Programs that reach the network, change the system or
 * destroy work have their own ask rules (defaults.ts) above this, and hard limits above those.
 *
 * Interpreters are known when they run a file of the project (`node scripts/gen.js`, as `npm
 * test` runs the project's code) or a known module (`python3 -m pytest`); inline code
 * (`python3 -c …`) and a script outside the working folder are not, since the engine cannot see
 * what they do.
 */
const KNOWN = new Set([
  // shell builtins and plumbing
  ...['cd', 'pushd', 'popd', 'dirs', 'export', 'set', 'unset', 'local', 'declare', 'typeset'],
  ...['readonly', 'read', 'shift', 'exit', 'return', 'break', 'continue', 'wait', 'jobs'],
  ...['fg', 'bg', 'ulimit', 'umask', ':', 'true', 'false', 'test', '[', '[[', 'echo', 'printf'],
  ...['type', 'getopts', 'let', 'history', 'help', 'disown', 'times', 'sleep', 'seq', 'yes'],
  // looking at files and the machine
  ...['ls', 'pwd', 'cat', 'tac', 'head', 'tail', 'wc', 'grep', 'egrep', 'fgrep', 'rg', 'ag'],
  ...['tree', 'du', 'df', 'stat', 'file', 'basename', 'dirname', 'realpath', 'readlink'],
  ...['diff', 'cmp', 'comm', 'sort', 'uniq', 'cut', 'tr', 'paste', 'join', 'column', 'fold'],
  ...['nl', 'expand', 'unexpand', 'fmt', 'rev', 'od', 'hexdump', 'xxd', 'strings', 'less'],
  ...['more', 'jq', 'yq', 'sha1sum', 'sha256sum', 'sha512sum', 'md5sum', 'cksum', 'b2sum'],
  ...['base64', 'which', 'whereis', 'whoami', 'id', 'groups', 'uname', 'hostname', 'date'],
  ...['cal', 'uptime', 'nproc', 'free', 'ps', 'pgrep', 'lsof', 'env', 'printenv', 'man'],
  ...['locale', 'tty', 'stty', 'clear', 'tput', 'iconv', 'dos2unix', 'unix2dos', 'bc', 'expr'],
  ...['fd', 'fdfind', 'bat', 'delta', 'glow', 'find', 'awk', 'gawk', 'mawk', 'sed', 'tee'],
  // changing files of the project
  ...['mkdir', 'touch', 'cp', 'mv', 'rm', 'rmdir', 'ln', 'chmod', 'install', 'mktemp', 'patch'],
  ...['tar', 'zip', 'unzip', 'gzip', 'gunzip', 'zcat', 'xz', 'unxz', 'bzip2', 'bunzip2', 'zstd'],
  ...['split', 'csplit', 'truncate', 'kill', 'pkill', 'killall'],
  // editors and terminal tools (what they are told to run is judged itself: runners.ts)
  ...['vim', 'vi', 'nvim', 'nano', 'emacs', 'watch', 'tmux', 'screen', 'ssh-keygen'],
  // version control and project tools
  ...['git', 'npm', 'pnpm', 'yarn', 'corepack', 'nvm', 'node', 'nodejs', 'deno', 'bun', 'tsc'],
  ...['tsx', 'ts-node', 'vitest', 'jest', 'mocha', 'ava', 'uvu', 'eslint', 'prettier', 'biome'],
  ...['vite', 'webpack', 'esbuild', 'rollup', 'parcel', 'turbo', 'nx', 'lerna', 'playwright'],
  ...['python', 'python3', 'pip', 'pip3', 'pytest', 'ruff', 'mypy', 'pyright', 'black'],
  ...['isort', 'flake8', 'pylint', 'tox', 'nox', 'uv', 'poetry', 'pipenv', 'pdm', 'hatch'],
  ...['make', 'gmake', 'cmake', 'ninja', 'meson', 'ctest', 'cc', 'gcc', 'g++', 'clang'],
  ...['clang++', 'ld', 'ar', 'nm', 'objdump', 'strip', 'pkg-config', 'autoreconf', 'autoconf'],
  ...['cargo', 'rustc', 'rustup', 'rustfmt', 'go', 'gofmt', 'javac', 'java', 'mvn', 'gradle'],
  ...['dotnet', 'swift', 'swiftc', 'ruby', 'gem', 'bundle', 'rake', 'rspec', 'php', 'composer'],
  ...['perl', 'lua', 'zig', 'ghc', 'cabal', 'stack', 'mix', 'elixir', 'erl', 'rebar3'],
  ...['shellcheck', 'shfmt', 'hadolint', 'terraform', 'sh', 'bash', 'zsh', 'dash'],
]);

/** Interpreters: known for a project file, a known module or a version question; not for inline code. */
const INTERPRETERS = new Set([
  ...['node', 'nodejs', 'deno', 'bun', 'python', 'python3', 'ruby', 'perl', 'php', 'lua'],
  ...['sh', 'bash', 'zsh', 'dash', 'tsx', 'ts-node'],
]);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash']);
/** `python3 -m <module>` modules that build, test, lint or serve nothing outside the project. */
const PY_MODULES = new Set([
  ...['pytest', 'unittest', 'pip', 'venv', 'build', 'mypy', 'black', 'ruff', 'isort', 'flake8'],
  ...['pylint', 'coverage', 'doctest', 'compileall', 'py_compile', 'json.tool', 'tox', 'twine'],
  ...['django', 'alembic', 'uvicorn', 'flask', 'pyright', 'pdb', 'timeit', 'cProfile'],
]);
/** Docker commands that only look or build in their own containers. */
const DOCKER_LOOKS = new Set(['ps', 'images', 'logs', 'inspect', 'version', 'info', 'build']);
const COMPOSE_LOOKS = new Set(['ps', 'logs', 'config', 'version', 'ls', 'images', 'build']);

/** Whether a path a command runs (`./run.sh`, `scripts/gen.js`) lies inside the working folder, in every folder the command may start in. */
function insideProject(path: string, unit: Unit, places: Places): boolean {
  if (places.cwd === null) return false;
  const cwds = path.startsWith('/') ? ['/'] : unit.cmd?.cwds;
  if (!cwds) return false;
  return cwds.every((c) => isInside(resolveArg(path, c), places.cwd!));
}

function interpreterKnown(name: string, args: string[], dyn: boolean[], unit: Unit, p: Places) {
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (dyn[k]) return false;
    if (a === '--') {
      const next = args[k + 1];
      return next === undefined || insideProject(next, unit, p);
    }
    if (a === '-') return SHELLS.has(name); // a shell's stdin is read where it is fed; a program is inline code
    if (a.startsWith('-')) {
      if (/^--?(version|help|v|V|h)$/.test(a)) return true;
      if (SHELLS.has(name)) {
        if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(a)) return true; // the line it runs is judged itself
        if (a === '-o' || a === '+o' || a === '-O' || a === '+O') k++;
        continue;
      }
      if (/^-[a-zA-Z]*[ceEpr]$|^--(eval|print|command)\b/.test(a)) return false; // inline code
      if (/^-[a-zA-Z]*m$/.test(a)) return PY_MODULES.has(args[k + 1] ?? '');
      continue;
    }
    if ((name === 'deno' || name === 'bun') && ['run', 'test', 'task'].includes(a)) continue;
    if ((name === 'deno' || name === 'bun') && ['fmt', 'lint', 'check', 'install'].includes(a))
      return true;
    return insideProject(a, unit, p);
  }
  // No script: a shell reads commands from stdin (judged where they are fed); another
  // interpreter reads a program, which is inline code.
  return SHELLS.has(name);
}

/**
 * Programs known not to run the words they are given as commands (the catalogue above, package
 * managers, manuals): the check does not look for a command line in their arguments.
 */
export function runsNoArguments(name: string): boolean {
  return KNOWN.has(name) || NOT_RUNNERS.has(name);
}
const NOT_RUNNERS = new Set([
  ...['apt', 'apt-get', 'apt-cache', 'dpkg', 'brew', 'dnf', 'yum', 'pacman', 'apk', 'zypper'],
  ...['port', 'snap', 'flatpak', 'nix-env', 'choco', 'winget', 'whatis', 'apropos', 'info'],
  ...['tldr', 'whereis', 'compgen', 'complete', 'hash', 'pidof', 'pgrep', 'command', 'builtin'],
]);

/** Whether a terminal unit is a command the engine knows (so it runs unasked without a sandbox). */
export function knownCommand(unit: Unit, places: Places): boolean {
  const words = unit.words ?? [];
  const first = words[0];
  if (first === undefined) return true; // only assignments or redirections: judged by path
  if (unit.dynamic[0]) return false;
  const args = words.slice(1);
  const dyn = unit.dynamic.slice(1);
  const name = basename(first);
  // A program of the project itself (`./scripts/run.sh`, `bin/dev`).
  if (first.includes('/') && !/^\/(usr\/)?(s?bin)\//.test(first))
    return insideProject(first, unit, places);
  if (INTERPRETERS.has(name)) return interpreterKnown(name, args, dyn, unit, places);
  if (name === 'docker') {
    if (args[0] === 'compose') return COMPOSE_LOOKS.has(args[1] ?? '');
    return DOCKER_LOOKS.has(args[0] ?? '');
  }
  return KNOWN.has(name);
}
