import type { Word } from './words.js';

/**
 * Commands that run another command: `sudo -u bob rm …` runs rm. For each we know which options
 * take a value, so the value is not mistaken for the command word (a flag wrongly thought to take
 * a value could hide the real command; one wrongly thought not to only over-reports).
 */
export interface WrapperSpec {
  /** Short option letters that take a value (`-u bob` or `-ubob`). */
  short?: string;
  /** Long options that take a value as the next word when not written `--opt=value`. */
  long?: string[];
  /** Plain arguments before the command (timeout's duration, chroot's folder). */
  positionals?: number;
  /** Leading VAR=value words are settings, not the command (env, sudo). */
  assigns?: boolean;
  /** Options whose value is itself a command line (env -S, flock -c). */
  scriptShort?: string;
  scriptLong?: string[];
}

export const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: {
    short: 'ugpCrtUDRT',
    long: [
      '--user',
      '--group',
      '--prompt',
      '--close-from',
      '--role',
      '--type',
      '--other-user',
      '--chdir',
      '--chroot',
      '--command-timeout',
      '--host',
    ],
    assigns: true,
  },
  doas: { short: 'uC' },
  pkexec: { long: ['--user'] },
  env: {
    short: 'uCP',
    long: ['--unset', '--chdir'],
    assigns: true,
    scriptShort: 'S',
    scriptLong: ['--split-string'],
  },
  nice: { short: 'n', long: ['--adjustment'] },
  nohup: {},
  time: { short: 'fo', long: ['--format', '--output'] },
  command: {},
  builtin: {},
  exec: { short: 'a' },
  xargs: {
    short: 'adEILnPs',
    long: [
      '--arg-file',
      '--delimiter',
      '--eof',
      '--replace',
      '--max-lines',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
    ],
  },
  timeout: { short: 'sk', long: ['--signal', '--kill-after'], positionals: 1 },
  gtimeout: { short: 'sk', long: ['--signal', '--kill-after'], positionals: 1 },
  stdbuf: { short: 'ioe', long: ['--input', '--output', '--error'] },
  ionice: { short: 'cnp', long: ['--class', '--classdata', '--pid'] },
  taskset: { positionals: 1 },
  chroot: { long: ['--userspec', '--groups'], positionals: 1 },
  flock: {
    short: 'wE',
    long: ['--timeout', '--conflict-exit-code'],
    positionals: 1,
    scriptShort: 'c',
    scriptLong: ['--command'],
  },
  setsid: {},
  unbuffer: {},
  caffeinate: { short: 'tw' },
  busybox: {},
  // Tracers, namespaces and other runners in front of a command.
  strace: {
    short: 'eopsuEabISPXO',
    long: ['--output', '--signal', '--trace', '--attach', '--user', '--env', '--string-limit'],
  },
  ltrace: { short: 'eopsuaADFlnwx', long: ['--output', '--library'] },
  unshare: {
    short: 'SGRwl',
    long: ['--setuid', '--setgid', '--root', '--wd', '--map-user', '--map-group', '--propagation'],
  },
  nsenter: { short: 'tSGe', long: ['--target', '--setuid', '--setgid'] },
  fakeroot: { short: 'lsib', long: ['--lib', '--faked', '--fd-base'] },
  setarch: { positionals: 1 },
  linux32: {},
  linux64: {},
  chrt: { positionals: 1 },
  prlimit: { short: 'p', long: ['--pid', '--output'] },
  numactl: {
    short: 'iNmCpP',
    long: ['--interleave', '--cpunodebind', '--membind', '--physcpubind', '--preferred'],
  },
  'systemd-run': {
    short: 'upEMH',
    long: [
      '--unit',
      '--property',
      '--setenv',
      '--uid',
      '--gid',
      '--nice',
      '--working-directory',
      '--description',
      '--slice',
      '--machine',
      '--host',
      '--service-type',
      '--on-active',
      '--on-boot',
      '--on-startup',
      '--on-unit-active',
      '--on-unit-inactive',
      '--on-calendar',
      '--timer-property',
      '--path-property',
      '--socket-property',
    ],
  },
  toybox: {},
  bunx: { short: 'p', long: ['--package'] },
  uvx: { long: ['--from', '--with', '--python', '--index', '--index-url'] },
  // Package runners: `npx tsc` runs tsc (from the project, or fetched first).
  npx: {
    short: 'p',
    long: ['--package', '--cache', '--userconfig'],
    scriptShort: 'c',
    scriptLong: ['--call'],
  },
};

/**
 * Package and environment managers whose subcommand runs a command: `npm exec -- x`, `uv run x`,
 * `bundle exec x`. The manager and its subcommand are wrappers in front of the command.
 */
export const SUB_RUNNERS: Record<string, { subs: string[]; spec: WrapperSpec }> = {
  npm: {
    subs: ['exec', 'x'],
    spec: {
      short: 'pw',
      long: ['--package', '--workspace'],
      scriptShort: 'c',
      scriptLong: ['--call'],
    },
  },
  pnpm: { subs: ['exec', 'dlx'], spec: { short: 'Cc', long: ['--package', '--filter'] } },
  yarn: { subs: ['exec', 'dlx'], spec: { short: 'p', long: ['--package'] } },
  bun: { subs: ['x'], spec: { short: 'p', long: ['--package'] } },
  uv: {
    subs: ['run'],
    spec: {
      short: 'p',
      long: [
        '--with',
        '--python',
        '--package',
        '--extra',
        '--group',
        '--env-file',
        '--directory',
        '--project',
        '--index',
        '--index-url',
        '--from',
        '--with-requirements',
      ],
    },
  },
  poetry: { subs: ['run'], spec: { short: 'PC', long: ['--directory', '--project'] } },
  pipenv: { subs: ['run'], spec: {} },
  pdm: { subs: ['run'], spec: { short: 'p', long: ['--project'] } },
  hatch: { subs: ['run'], spec: { short: 'e', long: ['--env'] } },
  conda: { subs: ['run'], spec: { short: 'np', long: ['--name', '--prefix', '--cwd'] } },
  mamba: { subs: ['run'], spec: { short: 'np', long: ['--name', '--prefix', '--cwd'] } },
  bundle: { subs: ['exec'], spec: { long: ['--gemfile'] } },
  mise: { subs: ['exec', 'x'], spec: { short: 'C', long: ['--cd'] } },
  asdf: { subs: ['exec'], spec: {} },
  direnv: { subs: ['exec'], spec: { positionals: 1 } },
  pipx: { subs: ['run'], spec: { long: ['--spec', '--python', '--index-url'] } },
  dotnet: { subs: ['exec'], spec: {} },
};

/** Skips a wrapper's options; returns where its command word is and any command-line values. */
export function skipWrapperOptions(
  words: Word[],
  from: number,
  spec: WrapperSpec,
): { next: number; scripts: string[]; dynamicScript: boolean } {
  const scripts: string[] = [];
  let dynamicScript = false;
  let positionals = spec.positionals ?? 0;
  let i = from;
  while (i < words.length) {
    const w = words[i]!;
    const a = w.text;
    if (spec.assigns && w.assign) {
      i++;
    } else if (a === '--') {
      i++;
      while (positionals > 0 && i < words.length) {
        positionals--;
        i++;
      }
      break;
    } else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a : a.slice(0, eq);
      const takesValue = spec.long?.includes(name) || spec.scriptLong?.includes(name);
      let value = eq < 0 ? undefined : a.slice(eq + 1);
      let valueWord: Word | undefined = w;
      if (takesValue && value === undefined) {
        valueWord = words[++i];
        value = valueWord?.text;
      }
      if (spec.scriptLong?.includes(name) && value !== undefined) {
        if (valueWord?.dynamic) dynamicScript = true;
        else scripts.push(value);
      }
      i++;
    } else if (a.startsWith('-') && a.length > 1) {
      for (let k = 1; k < a.length; k++) {
        const ch = a[k]!;
        const script = spec.scriptShort?.includes(ch) ?? false;
        if (script || spec.short?.includes(ch)) {
          const valueWord = k + 1 < a.length ? w : words[++i];
          const value = k + 1 < a.length ? a.slice(k + 1) : valueWord?.text;
          if (script && value !== undefined) {
            if (valueWord?.dynamic) dynamicScript = true;
            else scripts.push(value);
          }
          break;
        }
      }
      i++;
    } else if (a === '-') {
      i++;
    } else if (positionals > 0) {
      positionals--;
      i++;
    } else {
      break;
    }
  }
  return { next: i, scripts, dynamicScript };
}
