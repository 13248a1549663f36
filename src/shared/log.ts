/**
 * One small logger for every process. Lines go to stderr as `time level role: message k=v` (the
 * supervisor also writes them, and every child's stderr, to rotated files under logs/).
 * Secrets registered with `redact()` are replaced wherever they appear, so a key that slips into
 * an error message still never reaches a log.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const secrets = new Set<string>();
const sinks: ((line: string) => void)[] = [];
let toConsole = true;
let role = 'svc';
let threshold: Level = (process.env.SVC_LOG_LEVEL as Level | undefined) ?? 'info';
if (!Object.hasOwn(order, threshold)) threshold = 'info';
// A console that went away (`svc serve | head`, a closed terminal, a dead parent) fails each write
// with EPIPE as an 'error' event; unhandled, it is an uncaught exception whose log line is written
// to the same console, round and round at full CPU. The files under logs/ keep every line.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', () => {
    toConsole = false;
  });

export function setLogRole(name: string): void {
  role = name;
}

export function setLogLevel(level: Level): void {
  threshold = level;
}

/** Registers a secret; every later log line has it replaced. Short strings are ignored. */
export function redact(secret: string | undefined): void {
  if (secret && secret.length >= 8) secrets.add(secret);
}

export function scrub(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out;
}

function format(value: unknown): string {
  if (typeof value === 'string') return /\s/.test(value) ? JSON.stringify(value) : value;
  if (value instanceof Error) return JSON.stringify(value.message);
  return JSON.stringify(value);
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  if (order[level] < order[threshold]) return;
  let line = `${new Date().toISOString()} ${level.padEnd(5)} ${role}: ${message}`;
  if (fields)
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${format(v)}`;
  const text = scrub(line);
  if (toConsole) process.stderr.write(text + '\n');
  for (const sink of sinks) sink(text);
}

/** Every later line also goes to `sink` (the supervisor's log files), already scrubbed. */
export function addLogSink(sink: (line: string) => void): void {
  sinks.push(sink);
}

/** A daemon's stderr is a file of its own; its lines then go to the sinks alone. */
export function setLogConsole(on: boolean): void {
  toConsole = on;
}

/** Whether lines still go to the console (off for a daemon, and once the console went away). */
export function logConsoleOn(): boolean {
  return toConsole;
}

export const log = {
  debug: (m: string, f?: Record<string, unknown>) => write('debug', m, f),
  info: (m: string, f?: Record<string, unknown>) => write('info', m, f),
  warn: (m: string, f?: Record<string, unknown>) => write('warn', m, f),
  error: (m: string, f?: Record<string, unknown>) => write('error', m, f),
};
