import { isIP } from 'node:net';

/** Where a browser's DevTools endpoint is: given as a URL, or as a port on this machine. */
export interface CdpTarget {
  cdp_url?: string | undefined;
  port?: number | undefined;
}

/** The URL playwright's connectOverCDP is given, and the host:port it names (for messages). */
export interface CdpEndpoint {
  url: string;
  hostPort: string;
  loopback: boolean;
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h.startsWith('::ffff:127.');
}

/** The endpoint a target names, or null when it names none. */
export function cdpEndpoint(t: CdpTarget): CdpEndpoint | null {
  if (t.cdp_url !== undefined) {
    const u = new URL(t.cdp_url);
    const port = u.port || (u.protocol === 'https:' || u.protocol === 'wss:' ? '443' : '80');
    return {
      url: t.cdp_url,
      hostPort: `${u.hostname}:${port}`,
      loopback: isLoopbackHost(u.hostname),
    };
  }
  if (t.port !== undefined)
    return { url: `http://127.0.0.1:${t.port}`, hostPort: `127.0.0.1:${t.port}`, loopback: true };
  return null;
}

/** Why a remote endpoint is refused, in words with the fix. */
export function remoteRefusal(ep: CdpEndpoint): string {
  return `${ep.hostPort} is not on this machine; svc connects only to loopback browsers unless browser.allow_remote is true in config.yml (anyone who reaches a DevTools port controls that browser).`;
}
