import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { packageRoot } from '../shared/version.js';
import { KEY_COOKIE, type KeyCheck } from './auth.js';
import type { Reply, RequestInfo } from './http.js';

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

const pageHeaders = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** A year, the longest cache browsers keep; the cookie is re-set on every key exchange. */
const COOKIE_MAX_AGE = 400 * 24 * 3600;

/**
 * The Web UI: files from `web/dist` (the build) or `web/public`, held in memory. Unknown paths
 * get index.html so the app's own routes work on reload. `/?access_key=` trades the key for a
 * cookie and sends the browser back to a clean address.
 */
export class StaticFiles {
  private readonly files = new Map<string, { body: Buffer; type: string }>();

  constructor(root = pickRoot()) {
    if (root) for (const file of walk(root)) {
      const rel = '/' + relative(root, file).split('\\').join('/');
      this.files.set(rel, { body: readFileSync(file), type: types[extname(file)] ?? 'application/octet-stream' });
    }
  }

  serve(req: RequestInfo, key: KeyCheck): Reply {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return { status: 405, headers: { Allow: 'GET' }, body: { error: { code: 'method_not_allowed', message: 'The Web UI pages only take GET.' } } };
    }
    const offered = req.query.get('access_key');
    if (offered !== null) return exchangeKey(req, offered, key);
    const file = this.files.get(req.path) ?? (extname(req.path) === '' ? this.files.get('/index.html') : undefined);
    if (!file) return { status: 404, body: { error: { code: 'not_found', message: `No file ${req.path}.` } } };
    const immutable = req.path.startsWith('/assets/');
    return {
      status: 200,
      body: file.body,
      headers: {
        'Content-Type': file.type,
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        ...(file.type.startsWith('text/html') ? pageHeaders : {}),
      },
    };
  }
}

/** The key leaves the address bar either way: a valid one becomes an HttpOnly cookie. */
function exchangeKey(req: RequestInfo, offered: string, key: KeyCheck): Reply {
  const rest = new URLSearchParams(req.query);
  rest.delete('access_key');
  const query = rest.toString();
  // A Location starting with "//" or "/\" names another host (an open redirect): go to the root instead.
  const path = /^\/[/\\]/.test(req.path) ? '/' : req.path;
  const target = `${path}${query ? `?${query}` : ''}`;
  const headers: Record<string, string> = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' };
  if (!key.matches(offered)) return { status: 302, headers: { ...headers, Location: `${target}#access-key-rejected` } };
  headers['Location'] = target;
  headers['Set-Cookie'] = `${KEY_COOKIE}=${encodeURIComponent(offered)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${COOKIE_MAX_AGE}`;
  return { status: 302, headers };
}

function pickRoot(): string | undefined {
  for (const dir of [join(packageRoot, 'web', 'dist'), join(packageRoot, 'web', 'public')]) if (existsSync(join(dir, 'index.html'))) return dir;
  return undefined;
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else yield full;
  }
}
