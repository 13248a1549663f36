import { isIP } from 'node:net';
import { blockedAddressReason } from '../tools/web/net-guard.js';

/**
 * Whether a host the browser would open is this machine or a private network: an address in a
 * blocked range, or a name that only resolves locally (localhost, *.local, *.internal, a single
 * label). A public name that resolves to a private address is not seen here (no DNS in a check).
 */
export function privateHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(h) !== 0) return blockedAddressReason(h) !== null;
  return (
    h === 'localhost' ||
    !h.includes('.') ||
    ['.localhost', '.local', '.internal', '.lan', '.home.arpa', '.intranet', '.corp'].some((s) =>
      h.endsWith(s),
    )
  );
}
