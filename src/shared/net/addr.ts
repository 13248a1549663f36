import { isIP } from 'node:net';

/** A listen address: `host` is '' for every interface. */
export interface ListenAddr {
  host: string;
  port: number;
}

/**
 * Parses `-addr` values: `127.0.0.1:8088`, `:8088` (all interfaces), `[::1]:8088`, `localhost:0`,
 * or a bare port. Throws a sentence naming what is wrong.
 */
export function parseListenAddr(text: string): ListenAddr {
  const value = text.trim();
  let host: string;
  let portText: string;
  if (/^\d+$/.test(value)) {
    host = '127.0.0.1';
    portText = value;
  } else if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0 || value[end + 1] !== ':') throw new Error(`address "${text}" is not [ipv6]:port`);
    host = value.slice(1, end);
    portText = value.slice(end + 2);
    if (isIP(host) !== 6) throw new Error(`address "${text}" has an invalid IPv6 host`);
  } else {
    const colon = value.lastIndexOf(':');
    if (colon < 0) throw new Error(`address "${text}" needs a port, as in 127.0.0.1:8088 or :8088`);
    host = value.slice(0, colon);
    portText = value.slice(colon + 1);
    if (host.includes(':'))
      throw new Error(`address "${text}": write an IPv6 host in brackets, as in [::1]:8088`);
    if (host !== '' && host !== 'localhost' && isIP(host) !== 4) {
      throw new Error(
        `address "${text}": the host must be an IP address, "localhost", or empty for every interface`,
      );
    }
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new Error(`address "${text}" has an invalid port "${portText}" (0-65535)`);
  }
  if (host === 'localhost') host = '127.0.0.1';
  if (host === '0.0.0.0' || host === '::') host = '';
  return { host, port: Number(portText) };
}

/** True when a listen host only accepts connections from this machine. */
export function isLoopbackBind(addr: ListenAddr): boolean {
  return addr.host !== '' && isLoopbackText(addr.host);
}

export function formatHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Loopback by text: 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 (any spelling node accepts). */
export function isLoopbackText(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) return ip.split('.')[0] === '127';
  if (v !== 6) return false;
  const bytes = ipv6Bytes(ip);
  return bytes !== undefined && isLoopbackBytes(bytes);
}

/** Loopback by the socket's raw address: 4 bytes (IPv4) or 16 bytes (IPv6). */
export function isLoopbackBytes(bytes: Uint8Array): boolean {
  if (bytes.length === 4) return bytes[0] === 127;
  if (bytes.length !== 16) return false;
  const first10Zero = bytes.subarray(0, 10).every((b) => b === 0);
  if (first10Zero && bytes[10] === 0xff && bytes[11] === 0xff) return bytes[12] === 127;
  return bytes.subarray(0, 15).every((b) => b === 0) && bytes[15] === 1;
}

/** Expands an IPv6 literal (with optional embedded IPv4) into 16 bytes. */
export function ipv6Bytes(ip: string): Uint8Array | undefined {
  if (isIP(ip) !== 6) return undefined;
  let text = ip.split('%')[0] ?? '';
  const out = new Uint8Array(16);
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tailV4: number[] = [];
  if (v4?.[1]) {
    tailV4 = v4[1].split('.').map(Number);
    text = text.slice(0, -v4[1].length) + '0:0';
  }
  const [headText, tailText] = text.includes('::') ? text.split('::') : [text, undefined];
  const head = headText ? headText.split(':').filter((p) => p !== '') : [];
  const tail = tailText ? tailText.split(':').filter((p) => p !== '') : [];
  const groups = [...head, ...new Array(8 - head.length - tail.length).fill('0'), ...tail];
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  if (tailV4.length === 4) out.set(tailV4, 12);
  return out;
}

/** Formats raw socket bytes as an address for logs. */
export function formatAddressBytes(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2)
    groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}
