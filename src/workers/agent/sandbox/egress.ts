import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { blockedAddressReason } from '../tools/web/net-guard.js';
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

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) as the IPv4 address it is, for comparing. */
function unmap(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1]! : ip;
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
  const plain = ip.toLowerCase().replace(/^\[|\]$/g, '');
  // web_fetch's table: this machine, private networks, link-local, IPv6 forms embedding them.
  const why = blockedAddressReason(plain);
  // Documentation and benchmarking ranges hold nothing of this machine or its LAN (fake-IP DNS
  // of proxy tools and some sandboxes' registries answer there): not local, so let through.
  if (why !== null && !/(^| )(documentation|benchmarking)$/.test(why)) return why;
  if (own.has(unmap(plain.replace(/%.*$/, '')))) return "this machine's own";
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
