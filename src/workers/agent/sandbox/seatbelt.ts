import type { FsPlan } from './bwrap.js';

/**
 * macOS: the same plan as a `sandbox-exec` (Seatbelt) profile. Not exercised by the tests (they
 * run on Linux); it follows the profile language Apple's own tools and other agents use.
 */
export type SeatbeltNet = { mode: 'off' } | { mode: 'proxy'; ports: number[] };

const quote = (p: string): string => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

export function seatbeltProfile(fs: FsPlan, net: SeatbeltNet): string {
  const lines = ['(version 1)', '(allow default)', '(deny file-write*)'];
  const writable = [fs.cwd, fs.tmp, ...fs.write].map((p) => `(subpath ${quote(p)})`);
  lines.push(
    `(allow file-write* ${writable.join(' ')} (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))`,
  );
  if (fs.hide.length > 0) {
    const hidden = fs.hide.map((p) => `(subpath ${quote(p)})`).join(' ');
    lines.push(`(deny file-read* file-write* ${hidden})`);
  }
  // Only processes of this sandbox may be signalled: svc's own stay out of reach.
  lines.push('(deny signal)', '(allow signal (target same-sandbox))');
  if (net.mode === 'off') lines.push('(deny network*)', '(allow network* (local unix))');
  if (net.mode === 'proxy')
    lines.push(
      '(deny network*)',
      '(allow network* (local unix))',
      ...net.ports.map((p) => `(allow network-outbound (remote ip "localhost:${p}"))`),
    );
  return lines.join('\n');
}

export function seatbeltArgs(fs: FsPlan, net: SeatbeltNet): string[] {
  return ['-p', seatbeltProfile(fs, net)];
}
