/**
 * The Go-style single-dash long flags (`-addr :8088`, as in the help) read as `--addr`; mri would
 * otherwise split them into single letters.
 */
const longFlags = [
  'addr',
  'access-key',
  'cors',
  'daemon',
  'stop',
  'json',
  'help',
  'version',
  'fix',
  'since',
  'process',
  'follow',
  'lines',
  'print',
  'manager',
  'timeout',
  'check',
  'yes',
  'rollback',
];

export function normalizeArgv(argv: string[]): string[] {
  return argv.map((arg) => {
    const m = /^-([a-z][a-z-]+)(=.*)?$/.exec(arg);
    return m?.[1] && longFlags.includes(m[1]) ? `-${arg}` : arg;
  });
}

export class UsageError extends Error {}

/** Flags given more than once arrive as arrays; a value flag given without a value arrives as `true`. */
export function stringFlag(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw new UsageError(`--${name} was given more than once`);
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
  return value;
}

export function listFlag(value: unknown, name: string): string[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => {
    if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} needs a value`);
    return v;
  });
}
