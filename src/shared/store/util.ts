import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

// Store modules run read-then-write transactions with `.immediate()`: several processes write
// svc.db, and in WAL a deferred transaction that read first fails at once (SQLITE_BUSY_SNAPSHOT)
// when another process committed meanwhile, where an immediate one waits out busy_timeout.

const cache = new WeakMap<Db, Map<string, Statement>>();

/** A prepared statement, compiled once per connection (preparing costs more than most of our queries). */
export function stmt<P extends unknown[] = unknown[], R = unknown>(
  db: Db,
  sql: string,
): Statement<P, R> {
  let m = cache.get(db);
  if (!m) cache.set(db, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = db.prepare(sql)));
  return s as unknown as Statement<P, R>;
}

let lastMs = 0;
let lastRand = 0n;
const RAND_LEN = 12;
const RAND_MAX = 36n ** BigInt(RAND_LEN);

/**
 * `<prefix>_` + milliseconds (base36, fixed width) + 12 random base36 digits: unique across
 * processes, and sorted by creation time. Within one millisecond a process counts up from its
 * last random part, so ids it makes stay in creation order.
 */
export function newId(prefix: string, ms = Date.now()): string {
  let rand: bigint;
  if (ms === lastMs && lastRand + 1n < RAND_MAX) rand = lastRand + 1n;
  else rand = BigInt(`0x${randomBytes(8).toString('hex')}`) % (RAND_MAX / 2n); // leave room to count up
  lastMs = ms;
  lastRand = rand;
  return `${prefix}_${ms.toString(36).padStart(9, '0')}${rand.toString(36).padStart(RAND_LEN, '0')}`;
}

/** Timestamps are ISO-8601 UTC with milliseconds, so text order is time order. */
export const isoNow = (): string => new Date().toISOString();

/** An opaque pagination cursor: base64url of JSON. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The JSON inside a cursor, or undefined when it is not one of ours. */
export function decodeCursor(cursor: string): unknown {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return undefined;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
