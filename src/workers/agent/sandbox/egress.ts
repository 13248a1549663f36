import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { hostAllowed } from './policy.js';

/**
 * What the egress proxy lets a sandboxed command reach. The decision is made on the address the
 * name resolves to, and the proxy then connects to that address (never to the name again), so a
 * public-looking name that resolves to 127.0.0.1 (DNS rebinding) is refused like 127.0.0.1.
 */
export interface EgressPolicy {
  /** `any`: every host (network `on`); else only these (a session's host list). */
  hosts: 'any' | readonly string[];
  /**
   * Entries that open a non-public address (loopback, private, this machine's own): each names
   * a host and a port, e.g. "127.0.0.1:3000", "localhost:5432", "db.lan:5432".
   */
  local: readonly string[];
}

export type Verdict =
  | { ok: true; address: string }
  | { ok: false; message: string; reason: 'not_listed' | 'local' | 'unresolved' };

const ranges: Array<[string, string, number, 'ipv4' | 'ipv6']> = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['shared (CGNAT)', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  // IPv4-compatible, NAT64, Teredo and 6to4 carry an IPv4 address inside: refused whole.
  ['reserved', '::', 96, 'ipv6'],
  ['reserved', '64:ff9b::', 96, 'ipv6'],
  ['reserved', '64:ff9b:1::', 48, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001::', 32, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '2002::', 16, 'ipv6'],
  ['unique-local', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['site-local', 'fec0::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6'],
];
const lists = ranges.map(([label, net, bits, family]) => {
  const list = new BlockList();
  list.addSubnet(net, bits, family);
  return { label, list, family };
});

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1, ::ffff:7f00:1) as the IPv4 address it is. */
function unmap(ip: string): string {
  const m = /^::ffff:(?:0:)?(.+)$/i.exec(ip);
  if (!m) return ip;
  const rest = m[1]!;
  if (isIP(rest) === 4) return rest;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest);
  if (!hex) return ip;
  const hi = Number.parseInt(hex[1]!, 16);
  const lo = Number.parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** This machine's own addresses (any interface): a service bound to 0.0.0.0 answers on each. */
function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) out.add(unmap(a.address.toLowerCase().replace(/%.*$/, '')));
  return out;
}

/** Why an address is not public (`loopback`, `private`, …), or undefined for a public one. */
export function addressClass(
  ip: string,
  own: ReadonlySet<string> = ownAddresses(),
): string | undefined {
  const plain = unmap(
    ip
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/%.*$/, ''),
  );
  const family = isIP(plain);
  if (family === 0) return 'not an address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const r of lists) if (r.family === type && r.list.check(plain, type)) return r.label;
  if (own.has(plain)) return "this machine's own";
  return undefined;
}

export type Lookup = (host: string) => Promise<string[]>;

const systemLookup: Lookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The entries that name a port: only those open a non-public address. */
const withPort = (list: readonly string[]) =>
  list.filter((e) => !e.startsWith('*.') && /:\d{1,5}$/.test(e));

function listed(host: string, port: number): string {
  return `svc sandbox: ${host}:${port} is not on this session's network list; ask the user to add it (session settings, network).`;
}

/**
 * Whether a command may reach `host:port`, and at which address. `host` is a name or an address
 * literal (IPv6 with or without brackets).
 */
export async function decide(
  policy: EgressPolicy,
  rawHost: string,
  port: number,
  lookup: Lookup = systemLookup,
  own?: ReadonlySet<string>,
): Promise<Verdict> {
  const host = rawHost.toLowerCase().replace(/^\[|\]$/g, '');
  if (policy.hosts !== 'any' && !hostAllowed(policy.hosts, host, port))
    return { ok: false, reason: 'not_listed', message: listed(host, port) };
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await lookup(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return {
      ok: false,
      reason: 'unresolved',
      message: `svc sandbox: cannot resolve ${host} (${code})`,
    };
  }
  if (addresses.length === 0)
    return { ok: false, reason: 'unresolved', message: `svc sandbox: cannot resolve ${host}` };
  const named = withPort([...policy.local, ...(policy.hosts === 'any' ? [] : policy.hosts)]);
  const mine = own ?? ownAddresses();
  let refused: { address: string; label: string } | undefined;
  for (const address of addresses) {
    const label = addressClass(address, mine);
    if (label === undefined || hostAllowed(named, host, port) || hostAllowed(named, address, port))
      return { ok: true, address };
    refused ??= { address, label };
  }
  const r = refused!;
  const shown = r.address === host ? `${host}:${port}` : `${host}:${port} (${r.address})`;
  return {
    ok: false,
    reason: 'local',
    message: `svc sandbox: ${shown} is not a public address (${r.label}); the sandbox reaches this machine and private networks only where permissions.yml names them with a port (sandbox: { local_hosts: ["${host}:${port}"] }), which only the user can add.`,
  };
}
