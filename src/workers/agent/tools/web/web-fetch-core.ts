import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, request } from 'undici';
import { htmlToText } from './html-text.js';
import { blockedAddressReason } from './net-guard.js';
import { formatBytes } from '../files/text-file.js';

export type Resolver = (host: string) => Promise<LookupAddress[]>;

export interface FetchOptions {
  /** Most characters of text returned. */
  maxChars: number;
  signal: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Tests only (a local server is loopback); never settable by the model. */
  allowLoopback?: boolean;
  /** Tests only: a resolver standing in for DNS. */
  resolve?: Resolver;
}

export interface FetchOutcome {
  output: string;
  isError: boolean;
  status?: number;
  finalUrl?: string;
}

export const FETCH_DEFAULTS = { timeoutMs: 20_000, maxBytes: 5 * 1024 * 1024, maxRedirects: 5 };

/** A refusal or failure with a message for the model. */
class FetchRefused extends Error {}

const systemResolve: Resolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addrs) =>
      err ? reject(err) : resolve(addrs),
    ),
  );

/**
 * Fetches a URL for the model, safely: http(s) only; the host is resolved once per hop, every
 * address checked (no loopback, private, link-local or metadata targets), and the connection
 * made to exactly the checked address (a pinned lookup), so DNS rebinding cannot swap it;
 * redirects are followed by hand and checked the same way; time and size are bounded.
 */
export async function fetchUrl(rawUrl: string, opts: FetchOptions): Promise<FetchOutcome> {
  const timeoutMs = opts.timeoutMs ?? FETCH_DEFAULTS.timeoutMs;
  const maxBytes = opts.maxBytes ?? FETCH_DEFAULTS.maxBytes;
  const maxRedirects = opts.maxRedirects ?? FETCH_DEFAULTS.maxRedirects;
  const timer = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([opts.signal, timer]);
  const pinned = new Map<string, LookupAddress>();
  const agent = new Agent({
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: {
      timeout: timeoutMs,
      // The socket's own lookup: answers only with the address already vetted for this host.
      lookup: (hostname, options, callback) => {
        const a = pinned.get(hostname.toLowerCase());
        if (!a) return callback(new Error(`no vetted address for ${hostname}`), '', 0);
        if (options.all) callback(null, [a]);
        else callback(null, a.address, a.family);
      },
    },
  });
  try {
    let url = parseUrl(rawUrl);
    for (let hop = 0; ; hop++) {
      const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
      try {
        pinned.set(host, await vet(host, opts, signal));
      } catch (err) {
        throw hop > 0 && err instanceof FetchRefused
          ? new FetchRefused(`Redirected to ${url.href}: ${err.message}`)
          : err;
      }
      const res = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal,
        headers: REQUEST_HEADERS,
      });
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
        await res.body.dump();
        if (hop >= maxRedirects)
          throw new FetchRefused(
            `Too many redirects (more than ${maxRedirects}); the last one pointed to ${location}.`,
          );
        try {
          url = parseUrl(location, url);
        } catch (err) {
          throw err instanceof FetchRefused
            ? new FetchRefused(`Redirected to ${location}: ${err.message}`)
            : err;
        }
        continue;
      }
      const body = await readCapped(
        res.body,
        header(res.headers['content-encoding']),
        maxBytes,
        signal,
      );
      return render(
        url,
        res.statusCode,
        header(res.headers['content-type']),
        body,
        rawUrl,
        opts.maxChars,
        maxBytes,
      );
    }
  } catch (err) {
    if (opts.signal.aborted) throw err;
    if (timer.aborted)
      return { output: `Fetching ${rawUrl} timed out after ${timeoutMs / 1000} s.`, isError: true };
    if (err instanceof FetchRefused) return { output: err.message, isError: true };
    return { output: `Fetching ${rawUrl} failed: ${(err as Error).message}`, isError: true };
  } finally {
    agent.destroy().catch(() => undefined);
  }
}

const REQUEST_HEADERS = {
  'user-agent': 'Mozilla/5.0 (compatible; svc-web-fetch/1.0)',
  accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5',
  'accept-encoding': 'gzip, deflate, br',
};

function header(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

function parseUrl(raw: string, base?: URL): URL {
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch {
    throw new FetchRefused(`${raw} is not a valid URL.`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new FetchRefused(`Only http and https URLs can be fetched, not ${u.protocol}`);
  return u;
}

/** The address to connect to for `host`, after checking every address it resolves to. */
async function vet(host: string, opts: FetchOptions, signal: AbortSignal): Promise<LookupAddress> {
  const family = isIP(host);
  const addrs: LookupAddress[] =
    family !== 0
      ? [{ address: host, family }]
      : await abortable((opts.resolve ?? systemResolve)(host), signal);
  if (addrs.length === 0) throw new FetchRefused(`${host} did not resolve to any address.`);
  for (const a of addrs) {
    const why = blockedAddressReason(a.address, opts.allowLoopback === true);
    if (why)
      throw new FetchRefused(
        `Refused: ${host}${family ? '' : ` resolves to ${a.address}, which`} is ${/^[aeiou]/i.test(why) ? 'an' : 'a'} ${why} address; web_fetch only reaches public internet addresses.`,
      );
  }
  return addrs[0]!;
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

interface Body {
  bytes: Buffer;
  /** More than maxBytes came (or would have). */
  cut: boolean;
}

/** Reads (and decompresses) at most maxBytes, then stops the transfer. */
async function readCapped(
  body: Readable,
  encoding: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Body> {
  const enc = encoding.trim().toLowerCase();
  const decoder =
    enc === 'gzip' || enc === 'x-gzip'
      ? createGunzip()
      : enc === 'deflate'
        ? createInflate()
        : enc === 'br'
          ? createBrotliDecompress()
          : null;
  const stream: Readable = decoder ? pipeline(body, decoder, () => undefined) : body;
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  try {
    for await (const chunk of stream) {
      signal.throwIfAborted();
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      if (size + b.length > maxBytes) {
        chunks.push(b.subarray(0, maxBytes - size));
        size = maxBytes;
        cut = true;
        break;
      }
      chunks.push(b);
      size += b.length;
    }
  } finally {
    if (cut) {
      stream.destroy();
      body.destroy();
    }
  }
  return { bytes: Buffer.concat(chunks, size), cut };
}

type Kind = 'html' | 'text' | 'other';

function kindOf(mime: string, bytes: Buffer): Kind {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (
    mime.startsWith('text/') ||
    /^application\/(json|xml|javascript|ecmascript|x-javascript|x-ndjson|ld\+json|yaml|x-yaml|toml)$/.test(
      mime,
    ) ||
    /\+(json|xml)$/.test(mime)
  )
    return 'text';
  if (mime !== '' && mime !== 'application/octet-stream') return 'other';
  // No useful type: sniff.
  const head = bytes.subarray(0, 1024);
  if (head.includes(0)) return 'other';
  return /^\s*(<!doctype html|<html)/i.test(head.toString('latin1')) ? 'html' : 'text';
}

function decode(bytes: Buffer, contentType: string, kind: Kind): string {
  let charset = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!charset && kind === 'html')
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(
      bytes.subarray(0, 2048).toString('latin1'),
    )?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // an unknown charset label
  }
}

function render(
  url: URL,
  status: number,
  contentType: string,
  body: Body,
  requested: string,
  maxChars: number,
  maxBytes: number,
): FetchOutcome {
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  const kind = kindOf(mime, body.bytes);
  const head = [
    `URL: ${url.href}${url.href !== requested ? ` (requested ${requested})` : ''}`,
    `Status: ${status}`,
    `Content-Type: ${contentType || '(none)'}`,
  ];
  const notes: string[] = [];
  let text: string;
  if (kind === 'other') {
    text = `[${mime || 'binary'} content, ${formatBytes(body.bytes.length)}${body.cut ? ' or more' : ''}: not text, so it is not shown]`;
  } else {
    const decoded = decode(body.bytes, contentType, kind);
    text = kind === 'html' ? htmlToText(decoded, url.href) : decoded;
    if (body.cut)
      notes.push(
        `[the response was over ${formatBytes(maxBytes)}; only the first ${formatBytes(maxBytes)} were read]`,
      );
    if (text.length > maxChars) {
      notes.push(
        `[cut at ${maxChars} of ${text.length} characters; fetch again with a larger max_chars to see more]`,
      );
      text = text.slice(0, maxChars);
    }
  }
  return {
    output: [...head, '', text, ...notes].join('\n'),
    isError: status >= 400,
    status,
    finalUrl: url.href,
  };
}
