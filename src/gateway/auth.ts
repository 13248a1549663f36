import * as crypto from 'node:crypto';
import { ApiError } from '../shared/errors.js';
import {
  hostOfHostHeader,
  isLocalHostName,
  isLocalOrigin,
  normalizeOrigin,
} from '../shared/net/origin.js';

/** Headers whose mere presence withdraws the loopback exemption; never parsed, never trusted. */
export const forwardingHeaders = [
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
  'forwarded',
  'via',
] as const;

export const KEY_COOKIE = 'svc_access_key';

/** What the decision needs to know about one request, all taken from the socket and the headers. */
export interface AuthInput {
  peerLoopback: boolean;
  path: string;
  headers: Record<string, string>;
  /** `?access_key=` value, honoured on `/ws` only. */
  queryKey: string | undefined;
  isPublic: boolean;
  /** GET when absent. A WebSocket upgrade (path /ws) and every other method can change things. */
  method?: string;
}

export type AuthDecision =
  | { ok: true; via: 'public' | 'key' | 'local'; local: boolean }
  | { ok: false; error: ApiError };

/** Compares keys in constant time: both sides are hashed first so their lengths never leak. */
export class KeyCheck {
  private readonly digest: Buffer;
  constructor(key: string) {
    this.digest = sha256(key);
  }
  matches(candidate: string): boolean {
    return crypto.timingSafeEqual(sha256(candidate), this.digest);
  }
}

/** crypto.hash (Node 20.12+) hashes in one call, without the Hash object createHash builds for every keyed request. */
const oneShotHash = typeof crypto.hash === 'function' ? crypto.hash : undefined;

function sha256(s: string): Buffer {
  return oneShotHash
    ? oneShotHash('sha256', s, 'buffer')
    : crypto.createHash('sha256').update(s, 'utf8').digest();
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      value = decodeURIComponent(value);
    } catch {
      // keep the raw value; it will simply not match
    }
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** Every key the request presents: headers and cookie, and `?access_key=` on /ws only. */
export function presentedKeys(input: Pick<AuthInput, 'headers' | 'path' | 'queryKey'>): string[] {
  const keys: string[] = [];
  const authz = input.headers['authorization'];
  const bearer = authz ? /^Bearer\s+(\S+)\s*$/i.exec(authz) : null;
  if (bearer?.[1]) keys.push(bearer[1]);
  const header = input.headers['x-access-key'];
  if (header) keys.push(header.trim());
  const cookie = parseCookies(input.headers['cookie']).get(KEY_COOKIE);
  if (cookie) keys.push(cookie);
  if (input.path === '/ws' && input.queryKey) keys.push(input.queryKey);
  return keys;
}

/** Loopback peer, a local Host, and no forwarding header: the only kind of request trusted without a key. */
export function isLocalRequest(input: Pick<AuthInput, 'peerLoopback' | 'headers'>): boolean {
  if (!input.peerLoopback) return false;
  if (forwardingHeaders.some((h) => input.headers[h] !== undefined)) return false;
  const host = input.headers['host'];
  return host !== undefined && isLocalHostName(hostOfHostHeader(host));
}

/**
 * An Origin, when present, must be the page's own, on the allowlist, or (for reads only) another
 * origin on this machine; `*` never counts. Another local origin (a dev server on another port, a
 * page the agent served) may read, which the browser's CORS rules keep from it anyway, but may not
 * change anything or open /ws: WebSockets and no-cors POSTs are outside CORS.
 */
export function originAllowed(
  origin: string | undefined,
  allowlist: ReadonlySet<string>,
  host?: string,
  changes = false,
): boolean {
  if (origin === undefined) return true;
  const normalized = normalizeOrigin(origin);
  if ((normalized !== '*' && allowlist.has(normalized)) || sameOrigin(normalized, host))
    return true;
  return !changes && isLocalOrigin(origin);
}

/** Whether a request can change something: anything but GET/HEAD, and every WebSocket. */
export function changesState(method: string | undefined, path: string): boolean {
  return path === '/ws' || (method !== undefined && method !== 'GET' && method !== 'HEAD');
}

/**
 * The Web UI's own requests: a page served from this server names it as its origin. That is no
 * cross-site request, and it grants nothing by itself: a page on a foreign name (DNS rebinding)
 * has a foreign Host too, so it still needs the key.
 */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  return origin === `http://${h}` || origin === `https://${h}`;
}

/** Allowed without looking at the socket; `local` is worked out only if something reads it. (A class: an object literal with a getter is slow to make on every request.) */
class Allowed {
  readonly ok = true as const;
  constructor(
    readonly via: 'public' | 'key',
    private readonly input: AuthInput,
  ) {}
  get local(): boolean {
    return isLocalRequest(this.input);
  }
}

/**
 * The decision (docs/security.md): a foreign Origin is refused; then a public route, a valid key,
 * or a local request is allowed; anything else needs the key.
 */
export function decide(
  input: AuthInput,
  key: KeyCheck,
  allowlist: ReadonlySet<string>,
): AuthDecision {
  const origin = input.headers['origin'];
  if (
    !originAllowed(origin, allowlist, input.headers['host'], changesState(input.method, input.path))
  ) {
    return {
      ok: false,
      error: new ApiError(
        'forbidden_origin',
        `Requests from the origin ${JSON.stringify(origin)} are not allowed; add it to "cors" in config.yml or pass --cors to allow it.`,
      ),
    };
  }
  // A public route or a valid key decides without the socket's address; `local` is then worked out
  // only if something reads it (the version route does; health, the hot path, does not).
  if (input.isPublic) return new Allowed('public', input);
  if (presentedKeys(input).some((k) => key.matches(k))) return new Allowed('key', input);
  if (isLocalRequest(input)) return { ok: true, via: 'local', local: true };
  return {
    ok: false,
    error: new ApiError(
      'unauthorized',
      'This request needs the access key: send "Authorization: Bearer <key>" or "X-Access-Key: <key>" (the key is printed by svc serve and stored in $SVC_HOME/access_key).',
      undefined,
      { 'WWW-Authenticate': 'Bearer realm="svc"' },
    ),
  };
}
