import type { Dispatcher } from 'undici';
import { version } from '../version.js';
import { writeChunks } from '../write-chunks.js';
import { importPackage } from '../import-package.js';

/*
 * The only HTTP svc's upgrade does: GETs over https:// alone (redirects included), through the
 * proxy variables (HTTPS_PROXY, NO_PROXY), each bounded in size and time. TLS is verified against
 * Node's CA store, which NODE_EXTRA_CA_CERTS extends (how a self-hosted mirror's CA is trusted).
 */

export class UpgradeError extends Error {}

const MAX_REDIRECTS = 5;
let agent: Dispatcher | undefined;
// undici loads on the first check, not with the supervisor: an idle svc never pays for it.
const undici = () => importPackage<typeof import('undici')>('undici');
const dispatcher = async (): Promise<Dispatcher> =>
  (agent ??= new (await undici()).EnvHttpProxyAgent({ connect: { timeout: 10_000 } }));

export function assertHttps(url: string, what: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UpgradeError(`${what} is not a URL: "${url}"`);
  }
  if (u.protocol !== 'https:')
    throw new UpgradeError(
      `${what} must be an https:// URL (the platform's TLS is what vouches for a release), not ${u.protocol}//${u.host}${u.pathname}`,
    );
  return u;
}

type Body = Dispatcher.ResponseData['body'];

async function open(
  url: string,
  what: string,
  timeoutMs: number,
  accept: string,
): Promise<{ body: Body; length: number | undefined; host: string }> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const u = assertHttps(current, what);
    let res: Dispatcher.ResponseData;
    try {
      res = await (await undici()).request(u, {
        method: 'GET',
        dispatcher: await dispatcher(),
        headers: { accept, 'user-agent': `svc/${version}` },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (err) {
      throw new UpgradeError(`${what}: ${u.host} could not be reached (${(err as Error).message})`);
    }
    if ([301, 302, 303, 307, 308].includes(res.statusCode)) {
      await res.body.dump();
      const location = res.headers.location;
      if (typeof location !== 'string')
        throw new UpgradeError(`${what}: ${u.host} redirected without a Location`);
      current = new URL(location, u).href;
      continue;
    }
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => undefined);
      throw new UpgradeError(
        `${what}: ${u.host} answered HTTP ${res.statusCode} for ${u.pathname}`,
      );
    }
    const raw = res.headers['content-length'];
    const length = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : undefined;
    return { body: res.body, length, host: u.host };
  }
  throw new UpgradeError(`${what}: more than ${MAX_REDIRECTS} redirects`);
}

/** A small text (the releases API, checksums.txt), read whole up to `cap` bytes. */
export async function fetchText(
  url: string,
  what: string,
  opts: { cap: number; timeoutMs: number; accept?: string },
): Promise<string> {
  const { body, length } = await open(url, what, opts.timeoutMs, opts.accept ?? '*/*');
  if (length !== undefined && length > opts.cap) {
    body.destroy();
    throw new UpgradeError(`${what} is ${length} bytes, over its ${opts.cap}-byte limit`);
  }
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > opts.cap) {
        body.destroy();
        throw new UpgradeError(`${what} is over its ${opts.cap}-byte limit`);
      }
      parts.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof UpgradeError) throw err;
    throw new UpgradeError(`${what} was cut short (${(err as Error).message})`);
  }
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Downloads to `file`, refusing more than `maxBytes` (announced or received) and anything shorter
 * than announced (a cut connection is a truncated archive, never a smaller one).
 */
export async function download(
  url: string,
  file: string,
  what: string,
  opts: {
    maxBytes: number;
    expected?: number;
    timeoutMs: number;
    onProgress?: (bytes: number, total: number | undefined) => void;
  },
): Promise<number> {
  const { body, length } = await open(url, what, opts.timeoutMs, 'application/octet-stream');
  const total = length ?? opts.expected;
  if (total !== undefined && total > opts.maxBytes) {
    body.destroy();
    throw new UpgradeError(`${what} is ${mib(total)}, over the ${mib(opts.maxBytes)} limit`);
  }
  let got = 0;
  let lastReport = 0;
  async function* counted() {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      got += buf.length;
      if (got > opts.maxBytes)
        throw new UpgradeError(`${what} is over the ${mib(opts.maxBytes)} limit`);
      yield buf;
      if (opts.onProgress && (got - lastReport >= 256 * 1024 || got === total)) {
        lastReport = got;
        opts.onProgress(got, total);
      }
    }
  }
  try {
    await writeChunks(file, counted(), { mode: 0o600, flags: 'w' });
  } catch (err) {
    body.destroy();
    if (err instanceof UpgradeError) throw err;
    throw new UpgradeError(
      `${what} was cut short after ${got} of ${total ?? '?'} bytes (${(err as Error).message})`,
    );
  }
  for (const want of [length, opts.expected]) {
    if (want !== undefined && got !== want)
      throw new UpgradeError(`${what} was cut short: ${got} of ${want} bytes arrived`);
  }
  opts.onProgress?.(got, total);
  return got;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
