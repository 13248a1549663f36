import type { Word } from './words.js';

/**
 * Commands that run another command: `sudo -u bob rm …` runs rm. For each we know which options
 * take a value, so the value is not mistaken for the command word (a flag wrongly thought to take
 * a value could hide the real command; one wrongly thought not to only over-reports).
 */
interface WrapperSpec {
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
  // Package runners: `npx tsc` runs tsc (from the project, or fetched first).
  npx: {
    short: 'p',
    long: ['--package', '--cache', '--userconfig'],
    scriptShort: 'c',
    scriptLong: ['--call'],
  },
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
