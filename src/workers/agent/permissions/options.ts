/**
 * Command-line options read as GNU getopt_long reads them: short options cluster (`-rfv`), a
 * short option's value may be glued on (`-n5`), a long option may be any unambiguous prefix
 * (`--rec` is `--recursive`), `--opt=value` or `--opt value`, options and operands may mix, and
 * `--` ends the options.
 */

export interface OptSpec {
  /** Short letters that take no value. Letters not listed (and not in shortValue) are kept as flags too. */
  short?: string;
  /** Short letters that take a value. */
  shortValue?: string;
  /** Long option names (without `--`) that take no value (or an optional `=value`). */
  long?: readonly string[];
  /** Long option names that take a value. */
  longValue?: readonly string[];
}

export interface Operand {
  text: string;
  dynamic: boolean;
}

export interface ReadOptions {
  /** Short letters and full long names seen (`r`, `recursive`). */
  flags: Set<string>;
  values: Map<string, string>;
  operands: Operand[];
  /** A long option that matched no name or several (GNU would refuse it). */
  unclear: string[];
  /** An option word only known at run time. */
  dynamicOption: boolean;
}

/** The long option a (possibly abbreviated) name means, or null when none or several do. */
export function longName(given: string, names: readonly string[]): string | null {
  if (names.includes(given)) return given;
  const hits = names.filter((n) => n.startsWith(given));
  return hits.length === 1 ? hits[0]! : null;
}

export function readOptions(
  args: readonly string[],
  dynamic: readonly boolean[],
  spec: OptSpec,
): ReadOptions {
  const out: ReadOptions = {
    flags: new Set(),
    values: new Map(),
    operands: [],
    unclear: [],
    dynamicOption: false,
  };
  const longs = [...(spec.long ?? []), ...(spec.longValue ?? [])];
  let done = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const dyn = dynamic[i] ?? false;
    if (done || a === '-' || !a.startsWith('-') || dyn) {
      // A dynamic word may expand to an option; callers treat it as an unknown operand.
      if (dyn && !done && a.startsWith('-')) out.dynamicOption = true;
      out.operands.push({ text: a, dynamic: dyn });
      continue;
    }
    if (a === '--') {
      done = true;
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const given = a.slice(2, eq < 0 ? undefined : eq);
      const name = longName(given, longs);
      if (name === null) {
        out.unclear.push(a);
        continue;
      }
      out.flags.add(name);
      if (spec.longValue?.includes(name))
        out.values.set(name, eq < 0 ? (args[++i] ?? '') : a.slice(eq + 1));
      else if (eq >= 0) out.values.set(name, a.slice(eq + 1));
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const ch = a[k]!;
      out.flags.add(ch);
      if (spec.shortValue?.includes(ch)) {
        out.values.set(ch, k + 1 < a.length ? a.slice(k + 1) : (args[++i] ?? ''));
        break;
      }
    }
  }
  return out;
}

export const RM: OptSpec = {
  short: 'fiIrRdv',
  long: [
    'force',
    'interactive',
    'one-file-system',
    'no-preserve-root',
    'preserve-root',
    'recursive',
    'dir',
    'verbose',
    'help',
    'version',
  ],
};
export const CHMOD: OptSpec = {
  short: 'cfvR',
  long: [
    'changes',
    'silent',
    'quiet',
    'verbose',
    'no-preserve-root',
    'preserve-root',
    'recursive',
    'help',
    'version',
  ],
  longValue: ['reference'],
};
export const CHOWN: OptSpec = {
  short: 'cfvhHLPR',
  long: [
    'changes',
    'dereference',
    'no-dereference',
    'silent',
    'quiet',
    'verbose',
    'no-preserve-root',
    'preserve-root',
    'recursive',
    'help',
    'version',
  ],
  longValue: ['from', 'reference'],
};
