import { scrub } from '../../shared/log.js';

/** What of a failed server's stderr is kept and shown: its last lines, within a byte bound. */
export const TAIL_LINES = 40;
export const TAIL_BYTES = 4096;
/** Shorter env values (a port, "true") are too common in ordinary text to mask. */
const MIN_SECRET = 6;

/**
 * The tail of what a server wrote to stderr, for a person to see why it failed: the values of its
 * env (and every secret the log knows) masked first, so no cut below can leave part of one, then
 * the last TAIL_LINES lines within TAIL_BYTES. `cut`: the text lost its start (its first line is
 * partial and dropped). Null when nothing is left.
 */
export function stderrTail(raw: string, env: Record<string, string>, cut: boolean): string | null {
  let text = raw;
  if (cut) text = text.slice(text.indexOf('\n') + 1);
  const secrets = Object.values(env)
    .filter((v) => v.length >= MIN_SECRET)
    .sort((a, b) => b.length - a.length); // a longer value first, so one inside it cannot split it
  for (const s of secrets) text = text.split(s).join('[redacted]');
  text = scrub(text);
  const lines = text.split('\n').map((l) => l.trimEnd());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let kept = lines.slice(-TAIL_LINES);
  while (kept.length > 1 && Buffer.byteLength(kept.join('\n')) > TAIL_BYTES) kept = kept.slice(1);
  let out = kept.join('\n');
  if (Buffer.byteLength(out) > TAIL_BYTES) out = `…${out.slice(-Math.floor(TAIL_BYTES / 4))}`;
  return out.trim() === '' ? null : out;
}
