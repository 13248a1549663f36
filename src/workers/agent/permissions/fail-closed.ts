import { findActions } from './hard-deny.js';
import type { SimpleCommand } from './shell.js';

/**
 * Commands that destroy or signal something, whose targets must be known before they run without
 * a question: `rm -rf "$X"`, `find … | xargs rm`, `kill $(pgrep …)` and a relative path after a
 * `cd` we could not follow all ask.
 */
const DESTRUCTIVE = new Set([
  'rm',
  'rmdir',
  'unlink',
  'shred',
  'mv',
  'chmod',
  'chown',
  'chgrp',
  'truncate',
  'dd',
  'kill',
  'pkill',
  'killall',
  'srm',
  'wipe',
]);

function writeOp(op: string, target: string): boolean {
  const bare = op.replace(/^\d+/, '');
  if (bare === '>&' || bare === '<&') return !/^(\d+-?|-)$/.test(target);
  return ['>', '>>', '>|', '&>', '&>>', '<>'].includes(bare);
}

/** Why this command's targets cannot be known before it runs, or null. */
export function unknownTarget(cmd: SimpleCommand): string | null {
  for (const r of cmd.redirects) {
    if (writeOp(r.op, r.target) && r.dynamic)
      return `a redirection to a file named only when it runs (${r.target})`;
    if (writeOp(r.op, r.target) && cmd.cwds === null && !r.target.startsWith('/'))
      return 'a redirection to a relative path after a `cd` that could not be followed';
  }
  if (cmd.start < 0) return null;
  const name = cmd.name;
  const find = name === 'find' ? findActions(cmd) : null;
  if (!DESTRUCTIVE.has(name) && !(find && find.acts)) return null;
  if (cmd.fed) return `\`${name}\` whose targets come from its input (xargs or find) when it runs`;
  const args = cmd.args.map((text, k) => ({
    text,
    dynamic: cmd.dynamic[cmd.start + 1 + k] ?? false,
  }));
  if (name === 'kill') {
    const dyn = args.find((a) => a.dynamic);
    return dyn ? `kill of processes only known when it runs (${dyn.text})` : null;
  }
  if (name === 'pkill' || name === 'killall')
    return args.some((a) => a.dynamic) ? `${name} with a pattern only known when it runs` : null;
  const targets = find ? find.roots : args.filter((a) => a.dynamic || !a.text.startsWith('-'));
  const dyn = targets.find((a) => a.dynamic);
  if (dyn) return `\`${name}\` of a path only known when it runs (${dyn.text})`;
  if (cmd.cwds === null && targets.some((a) => !a.text.startsWith('/') && !a.text.startsWith('~')))
    return `\`${name}\` of a relative path after a \`cd\` that could not be followed`;
  if (find?.complex && find.acts)
    return 'a find expression with -o, ! or parentheses around -delete or -exec rm';
  return null;
}
