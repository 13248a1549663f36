import { isLoopbackText } from './addr.js';

/** Origins compare as the browser sends them: lower-case, no trailing slash. */
export function normalizeOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, '').toLowerCase();
}

/** A host name that means this machine: `localhost` or a loopback literal, any port. */
export function isLocalHostName(hostname: string): boolean {
  let h = hostname.trim().toLowerCase();
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h === 'localhost' || isLoopbackText(h);
}

/** The host part of a `Host` header value (`name:port`, `[v6]:port`, or bare). */
export function hostOfHostHeader(value: string): string {
  const v = value.trim();
  if (v.startsWith('[')) {
    const end = v.indexOf(']');
    return end < 0 ? v : v.slice(0, end + 1);
  }
  const colon = v.lastIndexOf(':');
  return colon >= 0 && v.indexOf(':') === colon ? v.slice(0, colon) : v;
}

/** True when an Origin header names this machine over http(s). `null` and opaque origins are not local. */
export function isLocalOrigin(origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return isLocalHostName(url.hostname);
}
