import { statSync } from 'node:fs';
import { checkBudget } from './budget.js';
import { globMatches, isInside, resolveArg, resolvePath } from './glob.js';
import { CHMOD, CHOWN, readOptions, RM } from './options.js';
import { realish } from './real.js';
import { patternWords } from './rules.js';
import { safeTest } from './safe-regex.js';
import { basename, type ParsedLine, type SimpleCommand } from './shell.js';
import { erasesDisk, writeTargets } from './writers.js';

/**
 * Refusals no permissions.yml can lift: steps that destroy the system, the user's home or svc
 * itself. They are matched on command words and their arguments as the shell sees them (see
 * shell.ts), so `sudo /sbin/reboot` is caught and `git commit -m "fix reboot"` is not.
 */

export interface HardDeny {
  /** A short stable name, e.g. `rm-root`, `power`, `svc-kill`. */
  id: string;
  reason: string;
}

export interface HardEnv {
  home: string;
  svcHome: string;
  /** Process ids of svc's supervisor, gateway and workers. */
  svcPids: readonly number[];
  cwd: string | null;
}

const LIMIT = 'This is a hard limit: no permission rule can allow it.';
/** Folders whose removal (or recursive chmod/chown) wrecks the machine. */
const SYSTEM_DIRS = [
  '/usr',
  '/bin',
  '/sbin',
  '/boot',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/var',
  '/opt',
  '/System',
  '/Library',
  '/Applications',
  '/private',
  '/home',
  '/Users',
  '/root',
];
/** Folders nothing svc runs should write into. */
const WRITE_PROTECTED = [
  '/bin',
  '/sbin',
  '/usr',
  '/boot',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/System',
  '/proc',
  '/sys',
  '/dev',
  '/private/etc',
];
/** Device files that are safe to write. */
const DEV_OK = ['/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/tty'];
const POWER = new Set(['shutdown', 'reboot', 'poweroff', 'halt']);
const POWER_VERBS = new Set(['poweroff', 'reboot', 'halt', 'kexec', 'soft-reboot']);
const POWER_TARGETS = new Set([
  'poweroff.target',
  'reboot.target',
  'halt.target',
  'kexec.target',
  'rescue.target',
  'emergency.target',
]);
const FORMATTERS = new Set([
  'mke2fs',
  'mkdosfs',
  'mkntfs',
  'newfs',
  'newfs_apfs',
  'newfs_hfs',
  'newfs_msdos',
]);
const PARTITIONERS: Record<string, string[]> = {
  fdisk: ['-l', '--list', '-s', '--getsz'],
  sfdisk: [
    '-l',
    '--list',
    '-d',
    '--dump',
    '-s',
    '--show-size',
    '-V',
    '--verify',
    '-J',
    '--json',
    '-g',
    '--show-geometry',
  ],
  cfdisk: [],
  gdisk: ['-l'],
  sgdisk: ['-p', '--print', '-v', '--verify', '-i', '--info'],
  parted: ['-l', '--list'],
  wipefs: [],
};
const DISKUTIL_ERASE = new Set([
  'eraseDisk',
  'eraseVolume',
  'secureErase',
  'partitionDisk',
  'zeroDisk',
  'randomDisk',
  'reformat',
]);
const FIND_FILTERS = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-regex',
  '-iregex',
  '-newer',
  '-mtime',
  '-mmin',
  '-atime',
  '-amin',
  '-ctime',
  '-cmin',
  '-size',
  '-empty',
  '-user',
  '-group',
  '-uid',
  '-gid',
  '-inum',
  '-samefile',
  '-links',
  '-perm',
  '-lname',
  '-ilname',
]);

/** Disks and partitions by name, for when the device file is not there to ask. */
const DISK_NAME =
  /^\/dev\/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|loop|dm-|md|sr|nbd|zram|ram|mapper\/|root$|mem$|kmem$|port$)/;

/** A device a write to destroys data or the running system: a block device, or memory. */
function dangerousDevice(abs: string): boolean {
  if (DISK_NAME.test(abs)) return true;
  try {
    return statSync(abs).isBlockDevice();
  } catch {
    return false;
  }
}

/**
 * Whether writing `abs` would write inside a system folder (harmless devices excepted: a serial
 * port or terminal is fine, a disk is not). The session's own working folder is writable wherever
 * it is (`/usr/src/app`), except under /proc, /sys and /dev.
 */
export function isSystemWrite(abs: string, cwd: string | null = null): string | null {
  if (DEV_OK.includes(abs) || /^\/dev\/fd\/\d+$/.test(abs) || isInside(abs, '/dev/shm'))
    return null;
  // bash's /dev/tcp and /dev/udp are network connections, not files: defaults.ts asks about them.
  if (isInside(abs, '/dev/tcp') || isInside(abs, '/dev/udp')) return null;
  if (isInside(abs, '/dev')) return dangerousDevice(abs) ? '/dev' : null;
  const dir = WRITE_PROTECTED.find((d) => isInside(abs, d)) ?? null;
  if (
    dir &&
    cwd !== null &&
    cwd !== '/' &&
    !['/proc', '/sys'].includes(dir) &&
    !WRITE_PROTECTED.includes(cwd) &&
    isInside(abs, cwd)
  )
    return null;
  return dir;
}

/** A write-tool path (write_file, edit_file, delete_file) into a system folder. */
export function hardDenyWrite(abs: string, cwd: string | null = null): HardDeny | null {
  const dir = isSystemWrite(abs, cwd);
  if (!dir) return null;
  return {
    id: 'system-write',
    reason: `Refused: ${abs} is inside the system folder ${dir}, and svc never writes or deletes there. ${LIMIT}`,
  };
}

type Protected = { kind: 'root' | 'home' | 'system'; path: string; contents?: true; above?: true };

function protectedDir(p: string, home: string): Protected | null {
  if (p === '/') return { kind: 'root', path: p };
  if (p === home) return { kind: 'home', path: p };
  if (isInside(home, p)) return { kind: 'home', path: p, above: true };
  if (SYSTEM_DIRS.includes(p)) return { kind: 'system', path: p };
  return null;
}

/**
 * Whether a target of rm -r / chmod -R names /, the home folder (or one above it), a system
 * folder, or all of the contents of one (`/*`, `~/*`); globs are tried against those folders.
 */
function protectedTarget(target: string, base: string | null, home: string): Protected | null {
  if (base === null && !target.startsWith('/')) return null;
  const named = resolveArg(target, base ?? '/');
  const real = realish(named);
  return protectedPath(named, home) ?? (real !== named ? protectedPath(real, home) : null);
}

function protectedPath(abs: string, home: string): Protected | null {
  const contents = /^(.*?)\/(?:\*|\.\*|\*\*|\{\*,\.\*\}|\.\[!.\]\*)$/.exec(abs);
  if (contents) {
    const hit = protectedDir(contents[1] || '/', home);
    if (hit) return { ...hit, contents: true };
  }
  if (/[*?[{]/.test(abs)) {
    const ancestors: string[] = [];
    for (let d = home; d !== '/' && d.length > 0; d = d.slice(0, d.lastIndexOf('/')) || '/')
      ancestors.push(d);
    for (const candidate of ['/', ...ancestors, ...SYSTEM_DIRS])
      if (globMatches(abs, candidate)) return protectedDir(candidate, home);
    return null;
  }
  return protectedDir(abs, home);
}

function describe(p: Protected): string {
  const all = p.contents ? 'everything in ' : '';
  if (p.kind === 'root')
    return p.contents ? 'everything in the file system (/)' : 'the whole file system (/)';
  if (p.kind === 'home')
    return p.above
      ? `${all}${p.path}, which holds your home folder`
      : `${all}your home folder (${p.path})`;
  return `${all}the system folder ${p.path}`;
}

/** Arguments before `--` that are options, and the operands (everything else). */
function split(args: readonly string[]): { flags: string[]; operands: string[] } {
  const flags: string[] = [];
  const operands: string[] = [];
  let done = false;
  for (const a of args) {
    if (!done && a === '--') done = true;
    else if (!done && a.startsWith('-') && a.length > 1) flags.push(a);
    else operands.push(a);
  }
  return { flags, operands };
}

function hasShort(flags: string[], letter: string): boolean {
  return flags.some((f) => !f.startsWith('--') && f.slice(1).includes(letter));
}

function operandsOf(cmd: SimpleCommand): { text: string; dynamic: boolean }[] {
  const out: { text: string; dynamic: boolean }[] = [];
  let done = false;
  cmd.args.forEach((a, k) => {
    if (!done && a === '--') done = true;
    else if (done || !a.startsWith('-') || a.length === 1)
      out.push({ text: a, dynamic: cmd.dynamic[cmd.start + 1 + k] ?? false });
  });
  return out;
}

/** The arguments after the command word, with whether each is only known at run time. */
function argsOf(cmd: SimpleCommand): { args: string[]; dynamic: boolean[] } {
  return {
    args: cmd.args,
    dynamic: cmd.args.map((_a, k) => cmd.dynamic[cmd.start + 1 + k] ?? false),
  };
}

/** rm with -r/-R/--recursive (or any abbreviation of it). */
export function rmRecursive(cmd: SimpleCommand): boolean {
  const { args, dynamic } = argsOf(cmd);
  const o = readOptions(args, dynamic, RM);
  return o.flags.has('r') || o.flags.has('R') || o.flags.has('recursive');
}

function removal(cmd: SimpleCommand, base: string | null, env: HardEnv): HardDeny | null {
  if (!rmRecursive(cmd)) return null;
  const { args, dynamic } = argsOf(cmd);
  for (const op of readOptions(args, dynamic, RM).operands) {
    if (op.dynamic) continue;
    const hit = protectedTarget(op.text, base, env.home);
    if (hit)
      return {
        id: `rm-${hit.kind}`,
        reason: `Refused: \`rm -r ${op.text}\` would delete ${describe(hit)}. ${LIMIT}`,
      };
  }
  return null;
}

/** `mv ~ /tmp/x` takes the home folder (or /, or a system folder) away as surely as rm -r. */
function moveHome(cmd: SimpleCommand, base: string | null, env: HardEnv): HardDeny | null {
  const { args, dynamic } = argsOf(cmd);
  const o = readOptions(args, dynamic, {
    shortValue: 'tS',
    longValue: ['target-directory', 'suffix', 'backup'],
  });
  const target = o.values.get('t') ?? o.values.get('target-directory');
  const sources = target === undefined ? o.operands.slice(0, -1) : o.operands;
  for (const op of sources) {
    if (op.dynamic) continue;
    const hit = protectedTarget(op.text, base, env.home);
    if (hit)
      return {
        id: `mv-${hit.kind}`,
        reason: `Refused: \`mv ${op.text}\` would move away ${describe(hit)}. ${LIMIT}`,
      };
  }
  return null;
}

function recursiveOwnership(
  cmd: SimpleCommand,
  base: string | null,
  env: HardEnv,
): HardDeny | null {
  const { args, dynamic } = argsOf(cmd);
  const o = readOptions(args, dynamic, cmd.name === 'chmod' ? CHMOD : CHOWN);
  if (!(o.flags.has('R') || o.flags.has('recursive'))) return null;
  for (const op of o.operands) {
    if (op.dynamic) continue;
    const hit = protectedTarget(op.text, base, env.home);
    if (hit)
      return {
        id: `${cmd.name}-recursive`,
        reason: `Refused: \`${cmd.name} -R\` on ${describe(hit)} would break file permissions across it. ${LIMIT}`,
      };
  }
  return null;
}

const FIND_GLOBAL = new Set(['-H', '-L', '-P']);

/** find's starting points and whether its expression deletes (or runs rm on) everything it visits. */
export function findActions(cmd: SimpleCommand): {
  roots: { text: string; dynamic: boolean }[];
  acts: boolean;
  unfiltered: boolean;
  complex: boolean;
} {
  const { args, dynamic } = argsOf(cmd);
  let i = 0;
  while (
    i < args.length &&
    (FIND_GLOBAL.has(args[i]!) || /^-O\d*$/.test(args[i]!) || args[i] === '-D')
  )
    i += args[i] === '-D' ? 2 : 1;
  const roots: { text: string; dynamic: boolean }[] = [];
  for (; i < args.length && !(args[i]!.startsWith('-') || args[i] === '(' || args[i] === '!'); i++)
    roots.push({ text: args[i]!, dynamic: dynamic[i] ?? false });
  if (roots.length === 0) roots.push({ text: '.', dynamic: false });
  const expr = args.slice(i);
  let acts = false;
  let unfiltered = false;
  let filtered = false;
  const complex = expr.some(
    (a) => a === '(' || a === '!' || a === '-not' || a === '-o' || a === '-or' || a === ',',
  );
  for (let k = 0; k < expr.length; k++) {
    const a = expr[k]!;
    const action =
      a === '-delete' ||
      ((a === '-exec' || a === '-execdir' || a === '-ok' || a === '-okdir') &&
        basename(expr[k + 1] ?? '') === 'rm');
    if (action) {
      acts = true;
      // -delete acts wherever it stands: the tests after it filter nothing it already did.
      if (!filtered) unfiltered = true;
    } else if (FIND_FILTERS.has(a)) filtered = true;
  }
  return { roots, acts, unfiltered, complex };
}

function findDelete(cmd: SimpleCommand, base: string | null, env: HardEnv): HardDeny | null {
  const f = findActions(cmd);
  if (!f.acts || !f.unfiltered || f.complex) return null;
  for (const r of f.roots) {
    if (r.dynamic) continue;
    const hit = protectedTarget(r.text, base, env.home);
    if (hit && !hit.contents)
      return {
        id: `rm-${hit.kind}`,
        reason: `Refused: this find would delete everything under ${describe(hit)}. ${LIMIT}`,
      };
  }
  return null;
}

function devices(cmd: SimpleCommand): string[] {
  return cmd.args
    .map((a) => (a.startsWith('of=') ? a.slice(3) : a))
    .filter((a) => a.startsWith('/dev/') && dangerousDevice(a));
}

function disks(cmd: SimpleCommand): HardDeny | null {
  const { name, args } = cmd;
  // A file system made in an image file (`mkfs.ext4 -F rootfs.img`) harms nothing.
  if (
    (name.startsWith('mkfs') || FORMATTERS.has(name) || name === 'mkswap') &&
    devices(cmd).length > 0
  ) {
    return {
      id: 'mkfs',
      reason: `Refused: ${name} formats a disk or partition and destroys everything on it. ${LIMIT}`,
    };
  }
  if (erasesDisk(cmd)) {
    const dev = devices(cmd)[0];
    if (dev)
      return {
        id: 'disk-erase',
        reason: `Refused: ${name} on ${dev} erases or overwrites a disk or partition. ${LIMIT}`,
      };
  }
  if (name === 'diskutil' && args.some((a) => DISKUTIL_ERASE.has(a))) {
    return {
      id: 'mkfs',
      reason: `Refused: diskutil ${args.find((a) => DISKUTIL_ERASE.has(a))} erases a disk. ${LIMIT}`,
    };
  }
  if (name === 'dd') {
    const of = args.find((a) => a.startsWith('of='))?.slice(3);
    if (of && of.startsWith('/dev/') && dangerousDevice(of))
      return {
        id: 'dd-device',
        reason: `Refused: dd writing to ${of} overwrites a disk or device directly. ${LIMIT}`,
      };
  }
  const readOnly = Object.hasOwn(PARTITIONERS, name) ? PARTITIONERS[name] : undefined;
  if (readOnly) {
    const devs = devices(cmd);
    if (devs.length === 0) return null;
    const { flags, operands } = split(args);
    let harmless = flags.some((f) => readOnly.includes(f));
    if (name === 'parted')
      harmless ||=
        operands.filter((o) => !o.startsWith('/dev/')).every((o) => o === 'print') &&
        operands.length > devs.length;
    if (name === 'wipefs')
      harmless = !(
        hasShort(flags, 'a') ||
        hasShort(flags, 'o') ||
        flags.some((f) => f === '--all' || f.startsWith('--offset'))
      );
    if (!harmless)
      return {
        id: 'partition',
        reason: `Refused: ${name} on ${devs[0]} changes or erases a disk's partitions. ${LIMIT}`,
      };
  }
  return null;
}

function power(cmd: SimpleCommand): HardDeny | null {
  const { name, args } = cmd;
  const off = `would shut down or restart the machine svc runs on. To restart svc itself, use the restart_server tool. ${LIMIT}`;
  if (POWER.has(name)) return { id: 'power', reason: `Refused: ${name} ${off}` };
  if ((name === 'init' || name === 'telinit') && ['0', '1', '6'].includes(args[0] ?? ''))
    return { id: 'power', reason: `Refused: ${name} ${args[0]} ${off}` };
  if (
    (name === 'systemctl' || name === 'loginctl') &&
    args.some((a) => POWER_VERBS.has(a) || POWER_TARGETS.has(a))
  ) {
    return {
      id: 'power',
      reason: `Refused: ${name} ${args.find((a) => POWER_VERBS.has(a) || POWER_TARGETS.has(a))} ${off}`,
    };
  }
  return null;
}

function svcKill(what: string): HardDeny {
  return {
    id: 'svc-kill',
    reason: `Refused: \`${what}\` would stop svc itself (its supervisor, gateway or workers). To restart svc, use the restart_server tool.`,
  };
}

const KILL_ALL = `Refused: this sends a signal to every process you own, svc and your desktop session included. ${LIMIT}`;

/** The pid operands of kill (after the signal), or [] when it only lists signals. */
function killTargets(args: readonly string[]): string[] {
  let signal = false;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      i++;
      break;
    }
    if (signal || !a.startsWith('-') || a.length === 1) break;
    if (/^-(l|L|-list|-table)/.test(a)) return [];
    if (a === '-s' || a === '-n' || a === '--signal') i++;
    signal = true;
  }
  return args.slice(i);
}

/** Whether a pkill/killall pattern would match svc's processes (named node; `-f` also sees `svc serve`). */
function matchesSvc(
  pattern: string,
  opts: { regex: boolean; exact: boolean; ignoreCase: boolean; full: boolean; inverse: boolean },
): boolean {
  // With -f the pattern sees whole command lines: those of the supervisor and of every child.
  const names = opts.full
    ? [
        'node',
        'svc',
        'svc serve',
        'bin/svc.js',
        '/usr/bin/node /work/x/bin/svc.js serve --addr 127.0.0.1:8088',
        'dist/src/gateway/main.js',
        'dist/src/workers/agent/main.js',
        'dist/bundle/gateway/main.js',
        'dist/bundle/workers/agent/main.js',
      ]
    : ['node', 'svc'];
  return names.some((n) => {
    if (!opts.regex) return opts.ignoreCase ? pattern.toLowerCase() === n : pattern === n;
    // Model-written patterns run on RE2 (linear time); one RE2 cannot read is assumed to match.
    return (
      safeTest(opts.exact ? `^(?:${pattern})$` : pattern, opts.ignoreCase ? 'i' : '', n) ?? true
    );
  });
}

function matchesEverything(pattern: string): boolean {
  return ['init', 'node', 'zsh', 'x', 'Xorg'].every((n) => safeTest(pattern, '', n) === true);
}

function kills(cmd: SimpleCommand, env: HardEnv): HardDeny | null {
  const { name, args } = cmd;
  // `svc serve --stop` (however svc is started) stops the server this agent runs in.
  const svcCli =
    name === 'svc' ||
    ((name === 'node' || name === 'npx') &&
      args.some((a) => a === 'svc' || a.endsWith('bin/svc.js')));
  if (svcCli && args.includes('--stop')) return svcKill(`${name} ${args.join(' ')}`);
  // `svc key show` prints the access key: with it a command could answer its own approvals.
  if (svcCli && args.includes('key'))
    return {
      id: 'svc-key',
      reason: `Refused: \`${name} ${args.join(' ')}\` would print svc's access key, with which a command could change its own session or answer its own approvals. ${LIMIT}`,
    };
  if (name === 'killall5') return { id: 'kill-all', reason: KILL_ALL };
  if (name === 'kill') {
    for (const t of killTargets(args)) {
      if (/^-0*1$/.test(t)) return { id: 'kill-all', reason: KILL_ALL };
      // kill reads a pid as strtol does: blanks around it, a `+`, leading zeros (still decimal).
      const n = t.trim().replace(/^\+/, '');
      if (/^-?\d+$/.test(n) && env.svcPids.includes(Math.abs(Number(n))))
        return svcKill(`kill ${t}`);
      if (/\$\{?PPID\b/.test(t)) return svcKill(`kill ${t}`);
      // `kill $(pgrep -f x)`: judged as pkill -f x would be; other substitutions by what they name.
      const finder = /^"?(?:\$\(|`)\s*(pgrep|pidof)\s+([^`)]*?)\s*(?:\)|`)"?$/.exec(t);
      if (finder) {
        if (pkillHit(finder[1] === 'pidof' ? 'killall' : 'pkill', patternWords(finder[2]!), env))
          return svcKill(`kill ${t}`);
      } else if (/\$\(|`/.test(t) && /\b(node|svc|PPID)\b|svc\.pid/.test(t))
        return svcKill(`kill ${t}`);
    }
    // `pgrep node | xargs kill`: the pids are whatever pgrep finds.
    if (cmd.fed && cmd.feeder && ['pgrep', 'pidof'].includes(basename(cmd.feeder[0] ?? ''))) {
      const hit = pkillHit(
        cmd.feeder[0] === 'pidof' ? 'killall' : 'pkill',
        cmd.feeder.slice(1),
        env,
      );
      if (hit) return svcKill(`${cmd.feeder.join(' ')} | xargs kill`);
    }
    return null;
  }
  if (name !== 'pkill' && name !== 'killall') return null;
  return pkillHit(name, args, env);
}

/** What pkill/killall (or pgrep/pidof feeding kill) with these arguments would hit that it must not. */
function pkillHit(name: string, args: readonly string[], env: HardEnv): HardDeny | null {
  const valueShort = name === 'pkill' ? 'gGPstuUFq' : 'suoynZ';
  const valueLong =
    name === 'pkill'
      ? [
          '--signal',
          '--pgroup',
          '--group',
          '--parent',
          '--session',
          '--terminal',
          '--euid',
          '--uid',
          '--pidfile',
          '--ns',
          '--nslist',
        ]
      : ['--signal', '--user', '--older-than', '--younger-than', '--ns', '--context'];
  const ownerOpts =
    name === 'pkill'
      ? [
          '-u',
          '-U',
          '-g',
          '-G',
          '-s',
          '-t',
          '--euid',
          '--uid',
          '--group',
          '--pgroup',
          '--session',
          '--terminal',
        ]
      : ['-u', '--user'];
  const patterns: string[] = [];
  const letters = new Set<string>();
  let signal = false;
  const values: { opt: string; value: string }[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-1' && signal) return { id: 'kill-all', reason: KILL_ALL };
    if (/^-(\d+|[A-Z][A-Z0-9+-]+)$/.test(a)) {
      signal = true; // -9, -KILL, -SIGKILL
      continue;
    }
    if (a.startsWith('--')) {
      const [opt, inline] = a.split('=', 2) as [string, string | undefined];
      if (valueLong.includes(opt)) values.push({ opt, value: inline ?? args[++i] ?? '' });
      else letters.add(opt);
    } else if (a.startsWith('-') && a.length > 1) {
      for (let k = 1; k < a.length; k++) {
        const ch = a[k]!;
        if (valueShort.includes(ch)) {
          values.push({
            opt: `-${ch}`,
            value: k + 1 < a.length ? a.slice(k + 1) : (args[++i] ?? ''),
          });
          break;
        }
        letters.add(ch);
      }
    } else patterns.push(a);
  }
  const byOwner = values.some((v) => ownerOpts.includes(v.opt));
  if (patterns.length === 0 && byOwner) return { id: 'kill-all', reason: KILL_ALL };
  if (name === 'pkill' && patterns.some(matchesEverything))
    return { id: 'kill-all', reason: KILL_ALL };
  const parent = values.find((v) => v.opt === '-P' || v.opt === '--parent');
  if (
    parent &&
    (parent.value.split(',').some((p) => env.svcPids.includes(Number(p))) ||
      /PPID/.test(parent.value))
  )
    return svcKill(`${name} -P ${parent.value}`);
  const pidfile = values.find((v) => v.opt === '-F' || v.opt === '--pidfile');
  if (pidfile && isInside(resolvePath(pidfile.value, env.cwd ?? env.home, env.home), env.svcHome))
    return svcKill(`${name} -F ${pidfile.value}`);
  const opts = {
    inverse: name === 'pkill' && (letters.has('v') || letters.has('--inverse')),
    regex: name === 'pkill' || letters.has('r') || letters.has('--regexp'),
    exact: letters.has('x') || letters.has('--exact'),
    ignoreCase: letters.has('i') || letters.has('I') || letters.has('--ignore-case'),
    full: name === 'pkill' && (letters.has('f') || letters.has('--full')),
  };
  if (opts.inverse)
    return {
      id: 'kill-all',
      reason: `Refused: pkill -v signals every process that does not match, svc and your desktop session included. ${LIMIT}`,
    };
  const hit = patterns.find((p) => matchesSvc(p, opts));
  if (hit !== undefined) return svcKill(`${name} ${hit}`);
  return null;
}

function isWriteOp(op: string, target: string): boolean {
  const bare = op.replace(/^\d+/, '');
  if (bare === '>&' || bare === '<&') return !/^(\d+-?|-)$/.test(target);
  return ['>', '>>', '>|', '&>', '&>>', '<>'].includes(bare);
}

function writes(cmd: SimpleCommand, base: string | null, env: HardEnv): HardDeny | null {
  const targets: string[] = [];
  cmd.redirects.forEach((r) => {
    if (!r.dynamic && isWriteOp(r.op, r.target)) targets.push(r.target);
  });
  if (cmd.name === 'tee')
    targets.push(
      ...operandsOf(cmd)
        .filter((o) => !o.dynamic)
        .map((o) => o.text),
    );
  if (cmd.name === 'dd')
    targets.push(...cmd.args.filter((a) => a.startsWith('of=')).map((a) => a.slice(3)));
  targets.push(...writeTargets(cmd));
  for (const t of targets) {
    if (base === null && !t.startsWith('/')) continue;
    const named = resolveArg(t, base ?? '/');
    const abs = isInside(named, '/dev') ? named : realish(named);
    const dir =
      isSystemWrite(abs, env.cwd === null ? null : realish(env.cwd)) ??
      isSystemWrite(named, env.cwd);
    if (dir)
      return {
        id: 'system-write',
        reason: `Refused: this writes to ${abs}, inside the system folder ${dir}. ${LIMIT}`,
      };
  }
  return null;
}

/** A shell function that runs itself in a pipe or in the background: `:(){ :|:& };:`. */
function forkBomb(line: ParsedLine): HardDeny | null {
  const fns = new Set(line.functions);
  if (line.commands.some((c) => fns.has(c.name) && (c.piped || c.background))) {
    return {
      id: 'fork-bomb',
      reason: `Refused: this is a fork bomb; it would start processes until the machine stops responding. ${LIMIT}`,
    };
  }
  return null;
}

/**
 * The first hard refusal for a parsed command line, or null. Relative paths are resolved against
 * the working folder, following `cd` between commands at the same level.
 */
export function hardDenyCommand(line: ParsedLine, env: HardEnv): HardDeny | null {
  const bomb = forkBomb(line);
  if (bomb) return bomb;
  // Inline code (`python3 -c 'os.kill(4242, 9)'`, `node -p 'process.kill(process.ppid)'`).
  for (const k of line.code.kills) {
    if (k === 'all') return { id: 'kill-all', reason: KILL_ALL };
    if (k === 'parent') return svcKill('a kill of its parent process in inline code');
    if (env.svcPids.includes(k)) return svcKill(`a kill of ${k} in inline code`);
  }
  for (const cmd of line.commands) {
    checkBudget();
    for (const base of cmd.cwds ?? [null]) {
      const found =
        disks(cmd) ??
        (cmd.name === 'rm' ? removal(cmd, base, env) : null) ??
        (['chmod', 'chown', 'chgrp'].includes(cmd.name)
          ? recursiveOwnership(cmd, base, env)
          : null) ??
        (cmd.name === 'find' ? findDelete(cmd, base, env) : null) ??
        (cmd.name === 'mv' ? moveHome(cmd, base, env) : null) ??
        writes(cmd, base, env) ??
        power(cmd) ??
        kills(cmd, env);
      if (found) return found;
    }
  }
  return null;
}
