import { isIP } from 'node:net';

/**
 * Which addresses web_fetch must never reach: this machine, the private networks around it, and
 * link-local (where cloud metadata services answer, 169.254.169.254). Checked on the resolved
 * addresses of every hop, IPv6 forms that embed an IPv4 address included.
 */
const V4_BLOCKS: ReadonlyArray<readonly [string, number, string]> = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const LOOPBACK = 'loopback';

function v4Int(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const V4_TABLE = V4_BLOCKS.map(([base, bits, why]) => ({
  net: v4Int(base) >>> (32 - bits),
  bits,
  why,
}));

function v4Reason(ip: string): string | null {
  const n = v4Int(ip);
  for (const b of V4_TABLE) if (n >>> (32 - b.bits) === b.net) return b.why;
  return null;
}

/** The eight 16-bit groups of an IPv6 address (zone and embedded IPv4 handled), or null. */
export function ipv6Groups(ip: string): number[] | null {
  let s = ip.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    if (isIP(dotted[1]!) !== 4) return null;
    const n = v4Int(dotted[1]!);
    s = `${s.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === '' ? [] : h.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (
    (halves.length === 1 && fill !== 0) ||
    fill < 0 ||
    [...head, ...tail].some((g) => Number.isNaN(g) || g < 0 || g > 0xffff)
  )
    return null;
  return [...head, ...new Array<number>(fill).fill(0), ...tail];
}

function v4FromGroups(hi: number, lo: number): string {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

function v6Reason(ip: string): string | null {
  const g = ipv6Groups(ip);
  if (!g) return 'not a valid IPv6 address';
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const embedded = (kind: string, hi: number, lo: number) => {
    const why = v4Reason(v4FromGroups(hi, lo));
    return why === null ? null : why === LOOPBACK ? LOOPBACK : `${kind} ${why}`;
  };
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return LOOPBACK;
  if (zeros(0, 5) && g[5] === 0xffff) return embedded('IPv4-mapped', g[6]!, g[7]!);
  if (zeros(0, 6)) return 'IPv4-compatible (deprecated)';
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded('NAT64', g[6]!, g[7]!);
  if (g[0] === 0x2002) return embedded('6to4', g[1]!, g[2]!);
  if (g[0] === 0x2001 && g[1] === 0) return 'Teredo tunnel';
  if (g[0] === 0x2001 && g[1] === 0xdb8) return 'documentation';
  if (g[0] === 0x100 && zeros(1, 4)) return 'discard-only';
  const top = g[0]!;
  if ((top & 0xfe00) === 0xfc00) return 'unique-local (private)';
  if ((top & 0xffc0) === 0xfe80) return 'link-local';
  if ((top & 0xffc0) === 0xfec0) return 'site-local (deprecated)';
  if ((top & 0xff00) === 0xff00) return 'multicast';
  return null;
}

/**
 * Why web_fetch must not connect to `ip`, or null when it may. `allowLoopback` (tests only, never
 * from the model) lets loopback through; nothing else is ever let through.
 */
export function blockedAddressReason(ip: string, allowLoopback = false): string | null {
  const family = isIP(ip.replace(/%.*$/, ''));
  const why = family === 4 ? v4Reason(ip) : family === 6 ? v6Reason(ip) : 'not an IP address';
  return why === LOOPBACK && allowLoopback ? null : why;
}
