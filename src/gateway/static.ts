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

interface StaticFile {
  body: Buffer;
  type: string;
  /** The build's precompressed copies (`file.br`, `file.gz`), when it made them. */
  br?: Buffer;
  gz?: Buffer;
}

/** brotli or gzip when the client takes it (q=0 refuses), else none. */
export function pickEncoding(
  accept: string | undefined,
  file: StaticFile,
): 'br' | 'gzip' | undefined {
  if (!accept || (!file.br && !file.gz)) return undefined;
  const takes = (name: string) =>
    accept.split(',').some((part) => {
      const [token, ...params] = part.trim().toLowerCase().split(';');
      if (token !== name) return false;
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
      return q === undefined || Number(q) > 0;
    });
  if (file.br && takes('br')) return 'br';
  if (file.gz && takes('gzip')) return 'gzip';
  return undefined;
}

/**
 * The Web UI: files from `web/dist` (the build) or `web/public`, held in memory, with the build's
 * brotli and gzip copies sent to clients that take them. Unknown paths get index.html so the app's
 * own routes work on reload. `/?access_key=` trades the key for a cookie and sends the browser
 * back to a clean address.
 */
export class StaticFiles {
  private readonly files = new Map<string, StaticFile>();

  constructor(root = pickRoot()) {
    if (!root) return;
    const all = new Set([...walk(root)]);
    for (const file of all) {
      if (/\.(br|gz)$/.test(file) && all.has(file.slice(0, -3))) continue;
      const rel = '/' + relative(root, file).split('\\').join('/');
      const br = all.has(`${file}.br`) ? readFileSync(`${file}.br`) : undefined;
      const gz = all.has(`${file}.gz`) ? readFileSync(`${file}.gz`) : undefined;
      this.files.set(rel, {
        body: readFileSync(file),
        type: types[extname(file)] ?? 'application/octet-stream',
        ...(br ? { br } : {}),
        ...(gz ? { gz } : {}),
      });
    }
  }

  serve(req: RequestInfo, key: KeyCheck): Reply {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return {
        status: 405,
        headers: { Allow: 'GET' },
        body: { error: { code: 'method_not_allowed', message: 'The Web UI pages only take GET.' } },
      };
    }
    const offered = req.query.get('access_key');
    if (offered !== null) return exchangeKey(req, offered, key);
    const file =
      this.files.get(req.path) ??
      (extname(req.path) === '' ? this.files.get('/index.html') : undefined);
    if (!file)
      return {
        status: 404,
        body: { error: { code: 'not_found', message: `No file ${req.path}.` } },
      };
    const immutable = req.path.startsWith('/assets/');
    const encoding = pickEncoding(req.headers['accept-encoding'], file);
    return {
      status: 200,
      body: encoding === 'br' ? file.br : encoding === 'gzip' ? file.gz : file.body,
      headers: {
        'Content-Type': file.type,
        'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        ...(file.br || file.gz ? { Vary: 'Accept-Encoding' } : {}),
        ...(encoding ? { 'Content-Encoding': encoding } : {}),
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
  const headers: Record<string, string> = {
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  };
  if (!key.matches(offered))
    return { status: 302, headers: { ...headers, Location: `${target}#access-key-rejected` } };
  headers['Location'] = target;
  headers['Set-Cookie'] =
    `${KEY_COOKIE}=${encodeURIComponent(offered)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${COOKIE_MAX_AGE}`;
  return { status: 302, headers };
}

function pickRoot(): string | undefined {
  for (const dir of [join(packageRoot, 'web', 'dist'), join(packageRoot, 'web', 'public')])
    if (existsSync(join(dir, 'index.html'))) return dir;
  return undefined;
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else yield full;
  }
}
