import { isInside, type Places } from './glob.js';
import { findActions, rmRecursive } from './hard-deny.js';
import { realish } from './real.js';
import type { Unit } from './match.js';
import { patternWords, type Rule, type Verdict } from './rules.js';
import { basename } from './shell.js';
import { privateHost } from './browser-hosts.js';
import { runsNoArguments } from './known.js';

/**
 * Built-in rules, under the user's permissions.yml and above the per-tool defaults. The aim is a
 * setup a careful user can leave on: everyday work runs without prompts (asking about every
 * `npm test` trains people to click yes), while steps that reach out of the machine, change the
 * system, touch credentials or destroy work that no trash can restore stop for a yes. Hard denies
 * (hard-deny.ts) sit above all of this.
 */

export const WRITE_TOOLS = new Set(['write_file', 'edit_file', 'delete_file']);
/** Tools whose ask no rule or mode turns into allow. */
export const ALWAYS_ASK = new Set(['restart_server']);

/**
 * When nothing matches. terminal allows: hard denies and the ask list below catch the dangerous
 * part, and the session mode decides how asks go. Reading, searching, planning and memory are
 * harmless. Writes ask outside the working folder (rules below allow inside it). Unknown tools
 * (e.g. ones added later by MCP servers) ask, since we know nothing about what they do.
 * Kept as one table beside the rules rather than on each tool: it is the security policy, read
 * and reviewed in one place, and the engine judges by name without loading the tools.
 */
const FALLBACK: Record<string, Verdict> = {
  terminal: 'allow',
  terminal_output: 'allow',
  terminal_stop: 'allow',
  read_file: 'allow',
  glob: 'allow',
  grep: 'allow',
  web_fetch: 'allow', // the tool itself refuses private, loopback and metadata addresses
  task_create: 'allow',
  task_update: 'allow',
  task_list: 'allow',
  memory_write: 'allow',
  memory_search: 'allow',
  current_time: 'allow',
  search_history: 'allow', // reads svc's own index of earlier chats, secrets left out
  update_goal: 'allow',
  skill: 'allow', // reads enabled skills only, inside their own folders
  run_workflow: 'allow', // each step of the run asks for itself
  write_file: 'ask',
  edit_file: 'ask',
  delete_file: 'ask',
  restart_server: 'ask',
  // The browser: public pages are allowed; private networks and files ask (BROWSER below).
  browser: 'allow',
  browser_replay: 'allow',
  browser_record: 'allow',
};

/** Whether svc's table decides this tool's default (every built-in tool must be in it; a test holds that). */
export function hasBuiltinVerdict(tool: string): boolean {
  return Object.hasOwn(FALLBACK, tool);
}

export function fallbackVerdict(tool: string): Verdict {
  return Object.hasOwn(FALLBACK, tool) ? FALLBACK[tool]! : 'ask';
}

/** Private keys and credentials: never sent to the model by the file tools unless you allow it. */
const KEY_FILES = [
  '**/.ssh/id_*',
  '**/id_rsa*',
  '**/id_ed25519*',
  '**/id_ecdsa*',
  '**/id_dsa*',
  '**/.aws/credentials',
  '**/.netrc',
  '**/.git-credentials',
  '$SVC_HOME/access_key',
  '!**/*.pub',
];
/** Folders that hold private keys whatever their names: everything in them but public keys. */
const KEY_FOLDERS = [
  '~/.ssh/*/**',
  '~/.ssh/*',
  '~/.gnupg/**',
  '!~/.ssh/*.pub',
  '!~/.ssh',
  '!~/.gnupg',
];
const ENV_FILES = [
  '**/.env',
  '**/.env.*',
  '!**/.env.example',
  '!**/.env.sample',
  '!**/.env.template',
  '!**/.env.dist',
];
const SVC_SECRETS = ['$SVC_HOME/access_key', '$SVC_HOME/config.yml', '$SVC_HOME/serve.env'];
/** svc's own rules, store and control files: a command that edits them could lift every other rule. */
const SVC_CONTROL = [
  '$SVC_HOME/permissions.yml',
  '$SVC_HOME/svc.db',
  '$SVC_HOME/svc.db-*',
  '$SVC_HOME/trash/**',
  '$SVC_HOME/run/**',
  '/proc/*/environ',
  '/proc/*/cmdline',
];
/** Files the shell runs on its own later: a write there is code that runs outside any session. */
const AUTORUN = [
  '~/.bashrc',
  '~/.bash_profile',
  '~/.bash_login',
  '~/.profile',
  '~/.zshrc',
  '~/.zprofile',
  '~/.zshenv',
  '~/.zlogin',
  '~/.config/fish/config.fish',
  '~/.config/autostart/**',
  '~/Library/LaunchAgents/**',
  '**/.git/hooks/**',
  // A repository's config can name hooks, an fsmonitor or aliases that run on the next git
  // command; a `.git` file can point git at another folder. Read-only in the sandbox too.
  '**/.git/config',
  '**/.git/config.worktree',
  '**/.git/modules/**/hooks/**',
  '**/.git/modules/**/config',
  '**/.git/worktrees/*/config.worktree',
  '**/.git',
  '**/.husky/**',
];

const NETWORK = [
  'curl',
  'wget',
  'ssh',
  'scp',
  'sftp',
  'rsync',
  'nc',
  'ncat',
  'netcat',
  'socat',
  'nmap',
  'telnet',
  'ftp',
  'mosh',
];
const SYSTEM = [
  'systemctl',
  'service',
  'crontab',
  'launchctl',
  'iptables',
  'ip6tables',
  'nft',
  'ufw',
  'pfctl',
  'mount',
  'umount',
  'useradd',
  'userdel',
  'usermod',
  'groupadd',
  'groupdel',
  'passwd',
  'chpasswd',
  'visudo',
  'shred',
];
const PRIVILEGE = ['sudo', 'su', 'doas', 'pkexec'];
const RECURSIVE_PERMS = [
  'chmod -*R*',
  'chmod --recursive',
  'chown -*R*',
  'chown --recursive',
  'chgrp -*R*',
  'chgrp --recursive',
];
const DOCKER = [
  'docker rm',
  'docker rmi',
  'docker system prune',
  'docker volume rm',
  'docker volume prune',
  'docker image rm',
  'docker image prune',
  'docker container rm',
  'docker container prune',
];
const GIT_DESTRUCTIVE = [
  'git push -f',
  'git push --force*',
  'git push +*',
  'git push --mirror',
  'git push --delete',
  'git reset --hard',
  'git clean -*f*',
];

/** Commands that only look; they matter when you set `terminal: [{default: ask}]`. */
const READ_ONLY = [
  ...[
    'ls',
    'pwd',
    'cat',
    'head',
    'tail',
    'wc',
    'echo',
    'printf',
    'grep',
    'egrep',
    'fgrep',
    'rg',
    'which',
    'whoami',
    'id',
    'uname',
    'date',
    'du',
    'df',
    'stat',
    'file',
    'basename',
    'dirname',
    'realpath',
    'readlink',
    'diff',
    'cmp',
    'true',
    'false',
    'test',
    '[',
    'find',
  ],
  ...[
    'git status',
    'git log',
    'git diff',
    'git show',
    'git branch',
    'git rev-parse',
    'git ls-files',
    'git blame',
    'git remote -v',
  ],
  ...[
    'node --version',
    'node -v',
    'npm --version',
    'npm -v',
    'python3 --version',
    'python --version',
  ],
];

/**
 * Programs that print a credential (a token, a password, a private key) to stdout, from where it
 * reaches the model: refused unless your permissions.yml allows them. `svc key` is a hard limit
 * (hard-deny.ts).
 */
const CREDENTIAL_PRINTERS = [
  ...['gh auth token', 'gh auth status --show-token', 'gh auth status -t', 'glab auth status -t'],
  ...['git credential fill', 'git credential-* get', 'docker-credential-* get'],
  ...['gpg --export-secret-*', 'gpg2 --export-secret-*', 'kubectl config view --raw'],
  ...['aws configure get', 'aws configure export-credentials', 'aws sts get-session-token'],
  ...['security find-generic-password', 'security find-internet-password'],
  ...['security dump-keychain', 'gcloud auth print-access-token'],
  ...['gcloud auth print-identity-token', 'gcloud auth application-default print-access-token'],
  ...['az account get-access-token', 'heroku auth:token', 'op read', 'op item get --reveal'],
  ...['vault read', 'vault kv get', 'pass show', 'gopass show', 'secret-tool lookup'],
  ...['doctl auth token', 'npm token list', 'keyring get'],
];

/**
 * The principle behind that list, for tools it does not name: a subcommand word that names a
 * credential (`token`, `password`, `secret`, `credentials`, `api-key`, …) among the first words
 * of a program outside the known catalogue asks.
 */
const CREDENTIAL_WORD =
  /^(--?)?([a-z0-9]+[-_:])*(token|tokens|password|passwords|passwd|secret|secrets|credential|credentials|creds|api-?key|apikey|private-key|access-key|passphrase)([-_:][a-z0-9]+)*$/i;

function namesCredential(unit: Unit): boolean {
  const words = unit.words ?? [];
  if (words.length < 2 || unit.dynamic[0] || runsNoArguments(basename(words[0]!))) return false;
  return words.slice(1, 4).some((w, k) => !unit.dynamic[k + 1] && CREDENTIAL_WORD.test(w));
}

const TMP_DIRS = ['/tmp', '/private/tmp', '/var/tmp', '/var/folders'];

function rule(
  verdict: Verdict,
  label: string,
  reason: string,
  m: { command?: string[]; path?: string[]; test?: Rule['test'] },
): Rule {
  return {
    verdict,
    commands: m.command?.map(patternWords) ?? null,
    paths: m.path ?? null,
    hosts: null,
    reason,
    label: `built-in: ${label}`,
    ...(m.test ? { test: m.test } : {}),
  };
}

function writesToFile(unit: Unit): boolean {
  return (unit.cmd?.redirects ?? []).some((r) => {
    const bare = r.op.replace(/^\d+/, '');
    if (!bare.includes('>') || ((bare === '>&' || bare === '<&') && /^(\d+-?|-)$/.test(r.target)))
      return false;
    return !['/dev/null', '/dev/stdout', '/dev/stderr'].includes(r.target);
  });
}

/** A read-only command stays read-only: no file redirections, no find -delete/-exec, no branch edits. */
function staysReadOnly(unit: Unit): boolean {
  const words = unit.words ?? [];
  const name = basename(words[0] ?? '');
  if (writesToFile(unit)) return false;
  if (
    name === 'find' &&
    words.some((w) => /^-(delete|exec|execdir|ok|okdir|fprint.*|fls)$/.test(w))
  )
    return false;
  if (
    name === 'git' &&
    words[1] === 'branch' &&
    words
      .slice(2)
      .some(
        (w) =>
          !w.startsWith('-') ||
          /^-(d|D|m|M|c|C|f)$|^--(delete|move|copy|force|set-upstream|unset-upstream|edit-description)/.test(
            w,
          ),
      )
  )
    return false;
  return true;
}

/** rm -r whose targets are not all inside the working folder or a temp folder. */
function recursiveDeleteOutside(unit: Unit, places: Places): boolean {
  const cmd = unit.cmd;
  if (
    !cmd ||
    unit.wrapper ||
    !((cmd.name === 'rm' && rmRecursive(cmd)) || (cmd.name === 'find' && findActions(cmd).acts))
  )
    return false;
  if (unit.unknownPath) return true;
  // Inside the working folder (as named and as it really is) or a temp folder, never the folder itself.
  const roots = [
    ...(places.cwd ? [places.cwd, realish(places.cwd)] : []),
    ...TMP_DIRS,
    ...TMP_DIRS.map(realish),
  ];
  // find deletes below its starting points, so the working folder itself is fine there.
  const itself = cmd.name === 'find';
  return unit.paths.some(
    (abs) =>
      !abs.startsWith('/dev/') && !roots.some((r) => isInside(abs, r) && (itself || abs !== r)),
  );
}

const TERMINAL: Rule[] = [
  rule('ask', 'network tools', 'This command reaches the network, so it needs your approval.', {
    command: NETWORK,
  }),
  rule(
    'ask',
    'network redirection',
    'This redirects to a network connection (/dev/tcp or /dev/udp), so it needs your approval.',
    { path: ['/dev/tcp/**', '/dev/udp/**'] },
  ),
  rule(
    'ask',
    'system tools',
    'This command changes system services, mounts, accounts or scheduled jobs, so it needs your approval.',
    { command: SYSTEM },
  ),
  rule(
    'ask',
    'admin rights',
    "This runs a command with another user's (usually root's) rights, so it needs your approval.",
    { command: PRIVILEGE },
  ),
  rule(
    'ask',
    'recursive permission change',
    'A recursive chmod/chown/chgrp changes many files at once, so it needs your approval.',
    { command: RECURSIVE_PERMS },
  ),
  rule(
    'ask',
    'docker removals',
    'This removes Docker containers, images or volumes, so it needs your approval.',
    { command: DOCKER },
  ),
  rule(
    'ask',
    'destructive git',
    'This rewrites remote history or throws away uncommitted work (nothing goes to the trash), so it needs your approval.',
    { command: GIT_DESTRUCTIVE },
  ),
  rule(
    'ask',
    'secrets',
    'This command touches credentials or secret files, whose contents would be sent to the model, so it needs your approval.',
    {
      path: [
        ...KEY_FILES.filter((p) => !p.startsWith('!')),
        ...KEY_FOLDERS,
        ...ENV_FILES,
        ...SVC_SECRETS,
        '!**/*.pub',
      ],
    },
  ),
  rule(
    'deny',
    'credentials',
    'This command prints a credential (a token, password or private key), which would be sent to the model; allow it in your permissions.yml if you mean to.',
    { command: CREDENTIAL_PRINTERS },
  ),
  rule(
    'ask',
    'credentials',
    'This command looks like it prints a credential (a token, password or secret), which would be sent to the model, so it needs your approval.',
    { test: namesCredential },
  ),
  rule(
    'ask',
    'svc control files',
    "This command touches svc's own rules, database or control files (or another process's environment), which could undo your rules or leak keys, so it needs your approval.",
    { path: SVC_CONTROL },
  ),
  rule(
    'ask',
    'process internals',
    "This reads another process's environment or memory under /proc, where keys live, so it needs your approval.",
    {
      test: (unit) =>
        (unit.words ?? []).some(
          (w, i) =>
            w.includes('/proc/') &&
            (unit.dynamic[i] === true || /\/(environ|cmdline|mem|maps|auxv)\b/.test(w)),
        ),
    },
  ),
  rule(
    'ask',
    'recursive delete',
    "This deletes a folder tree outside the session's working folder (or one named only at run time), and the shell has no trash, so it needs your approval.",
    { test: recursiveDeleteOutside },
  ),
  rule(
    'ask',
    'computed command',
    'The command to run is only known when it runs (it comes from a variable or a substitution), so it cannot be checked and needs your approval.',
    {
      test: (unit) => !unit.wrapper && (unit.dynamic[0] ?? false),
    },
  ),
  rule('allow', 'read-only commands', 'A read-only command.', {
    command: READ_ONLY,
    test: staysReadOnly,
  }),
];

const WRITES: Rule[] = [
  rule(
    'deny',
    'secrets',
    'Keys, credentials and .env files are off limits to the file tools unless your permissions.yml allows them.',
    {
      path: [
        '**/.ssh/**',
        ...KEY_FILES.filter((p) => !p.startsWith('!')),
        ...ENV_FILES,
        ...SVC_SECRETS,
      ],
    },
  ),
  rule(
    'deny',
    'svc control files',
    "svc's own rules and database are not the agent's to change; edit permissions.yml yourself.",
    { path: SVC_CONTROL },
  ),
  rule(
    'ask',
    'startup files',
    'This file runs on its own later (a shell startup file, autostart entry or git hook), so changing it needs your approval.',
    { path: AUTORUN },
  ),
  rule('allow', 'working folder', "Inside the session's working folder.", { path: ['$CWD/**'] }),
  rule('allow', 'memory', "svc's memory folder.", { path: ['$SVC_HOME/memory/**'] }),
];

const READS: Rule[] = [
  rule(
    'deny',
    'keys',
    'Private keys and credentials are not read into the conversation unless your permissions.yml allows it.',
    { path: [...KEY_FILES, ...KEY_FOLDERS] },
  ),
  rule(
    'ask',
    'secrets',
    "This file holds secrets (.env or svc's own configuration) that would be sent to the model, so reading it needs your approval.",
    { path: [...ENV_FILES, ...SVC_SECRETS] },
  ),
];

const BROWSER: Rule[] = [
  rule(
    'ask',
    'local files',
    'This opens a file of this machine (a file: URL) in the browser, where the model reads it, so it needs your approval.',
    { path: ['/**'] },
  ),
  rule(
    'ask',
    'private network',
    'This opens a page on this machine or a private network (routers, intranets, local services) in the browser, so it needs your approval; allow a host for good with a browser rule in permissions.yml.',
    {
      test: (unit) => unit.hosts.some(privateHost),
    },
  ),
];

const ALWAYS: Rule[] = [
  rule(
    'ask',
    'restart',
    'Restarting svc interrupts every session for a moment, so it always needs your approval.',
    {},
  ),
];

/** The built-in rules for a tool. */
export function builtinRules(tool: string): readonly Rule[] {
  if (tool === 'terminal') return TERMINAL;
  if (WRITE_TOOLS.has(tool)) return WRITES;
  if (tool === 'read_file' || tool === 'grep' || tool === 'glob') return READS;
  if (ALWAYS_ASK.has(tool)) return ALWAYS;
  if (tool === 'browser' || tool === 'browser_replay') return BROWSER;
  return [];
}
