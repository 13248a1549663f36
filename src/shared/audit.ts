import {
  closeSync,
  existsSync,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { scrub } from './log.js';

/**
 * The audit log ($SVC_HOME/logs/audit.log): one JSON line per permission event (a rule's deny, an
 * ask, the user's answer, a withdrawn or strict-mode refusal). Private (0600 in a 0700 folder),
 * secrets scrubbed, long inputs cut, rotated by size. Writing it never throws: a full disk must
 * not stop a tool call.
 */

export type AuditDecision =
  | 'allow'
  | 'deny'
  | 'ask'
  | 'allow_once'
  | 'allow_session'
  | 'denied_by_user'
  | 'withdrawn'
  | 'strict_denied'
  | 'denied_by_timeout';

export interface AuditEntry {
  session_id: string;
  turn_id?: string;
  tool: string;
  input: Record<string, unknown>;
  decision: AuditDecision;
  reason?: string;
}

export interface AuditOptions {
  /** Rotate once the file would grow past this many bytes (default 10 MiB). */
  maxBytes?: number;
  /** How many rotated files to keep: audit.log.1 … .N (default 3). */
  keep?: number;
  /** Cut strings longer than this many characters (default 1024). */
  maxString?: number;
}

const MAX_BYTES = 10 * 1024 * 1024;
const KEEP = 3;
const MAX_STRING = 1024;
const MAX_DEPTH = 6;

/** Common credential shapes, for secrets nobody registered with `redact()`. */
const PATTERNS: [RegExp, string][] = [
  [
    /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
    '[redacted private key]',
  ],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, '[redacted]'],
  [/\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, '[redacted]'],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, '[redacted]'],
  [/\bglpat-[A-Za-z0-9_-]{20,}/g, '[redacted]'],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, '[redacted]'],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, '[redacted]'],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, '[redacted]'],
  [/\bnpm_[A-Za-z0-9]{36}\b/g, '[redacted]'],
];

/** Removes registered secrets (see log.ts) and anything shaped like a common key or token. */
export function scrubSecrets(text: string): string {
  let out = scrub(text);
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}

/** Scrubs first (a cut must not leave half a key behind), then cuts with a marker. */
function clean(value: unknown, maxString: number, depth: number): unknown {
  if (typeof value === 'string') {
    const s = scrubSecrets(value);
    return s.length > maxString
      ? `${s.slice(0, maxString)}…[truncated, ${s.length} chars in all]`
      : s;
  }
  if (value === null || typeof value !== 'object')
    return typeof value === 'bigint' ? value.toString() : value;
  if (depth >= MAX_DEPTH) return '[nested too deeply]';
  if (Array.isArray(value)) return value.map((v) => clean(v, maxString, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = clean(v, maxString, depth + 1);
  return out;
}

/** audit.log → .1 → .2 … ; the oldest beyond `keep` is removed. */
function rotate(file: string, keep: number): void {
  rmSync(`${file}.${keep}`, { force: true });
  for (let k = keep - 1; k >= 1; k--)
    if (existsSync(`${file}.${k}`)) renameSync(`${file}.${k}`, `${file}.${k + 1}`);
  renameSync(file, `${file}.1`);
}

/** Opens for appending (0600), making the private folder first if it is missing. */
function openAppend(file: string): number {
  try {
    return openSync(file, 'a', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    return openSync(file, 'a', 0o600);
  }
}

/** Appends one entry; returns false (and writes nothing) if anything went wrong. */
export function appendAudit(file: string, entry: AuditEntry, opts: AuditOptions = {}): boolean {
  try {
    const maxString = opts.maxString ?? MAX_STRING;
    const record: Record<string, unknown> = {
      ts: new Date().toISOString(),
      session_id: entry.session_id,
    };
    if (entry.turn_id !== undefined) record.turn_id = entry.turn_id;
    record.tool = entry.tool;
    record.decision = entry.decision;
    if (entry.reason !== undefined) record.reason = clean(entry.reason, maxString, 0);
    record.input = clean(entry.input, maxString, 0);
    const line = JSON.stringify(record) + '\n';

    // Four system calls in the common case (open, fstat, write, close): every MCP call writes a line.
    let fd = openAppend(file);
    try {
      const st = fstatSync(fd);
      if (st.size > 0 && st.size + Buffer.byteLength(line) > (opts.maxBytes ?? MAX_BYTES)) {
        closeSync(fd);
        fd = -1;
        rotate(file, Math.max(1, opts.keep ?? KEEP));
        fd = openAppend(file);
      } else if ((st.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
      writeSync(fd, line);
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}
