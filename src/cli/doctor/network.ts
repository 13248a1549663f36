import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../shared/config/load.js';
import { isLoopbackBind, type ListenAddr, parseListenAddr } from '../../shared/net/addr.js';
import { checkKeyShape } from '../../supervisor/access-key.js';
import { assertPortFree } from '../../supervisor/port-check.js';
import { DEFAULT_ADDR } from '../../supervisor/settings.js';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** Where svc listens, whether clients there need the key, and whether that key is usable. */
export async function checkAddress(ctx: Context): Promise<Check[]> {
  const { paths, config, running } = ctx;
  const runningAddr = running ? z.object({ addr: z.string() }).safeParse(running) : undefined;
  let listen: ListenAddr;
  let text: string;
  try {
    text = runningAddr?.success
      ? runningAddr.data.addr
      : config instanceof ConfigError
        ? DEFAULT_ADDR
        : (config.addr ?? DEFAULT_ADDR);
    listen = parseListenAddr(text);
  } catch (err) {
    return [
      fail(
        'address',
        `${paths.config}: addr: ${(err as Error).message}`,
        'fix addr in config.yml, or pass --addr',
      ),
    ];
  }
  const checks: Check[] = [];
  const where = listen.host === '' ? `every interface, port ${listen.port}` : text;
  if (isLoopbackBind(listen))
    checks.push(
      ok(
        'address',
        `${running ? 'listens' : 'would listen'} on ${where}: only this machine can connect, and local clients need no key`,
      ),
    );
  else
    checks.push(
      warn(
        'address',
        `${running ? 'listens' : 'would listen'} on ${where}: other machines can connect; they need the access key, and plain HTTP can be read on the way`,
        'reach it through a VPN or TLS proxy; "svc key show" prints the sign-in address',
      ),
    );
  if (!running && listen.port !== 0) {
    const busy = await assertPortFree(listen).then(
      () => undefined,
      (err: Error) => err.message,
    );
    if (busy)
      checks.push(
        warn(
          'port',
          `${busy}; "svc serve" would not start there`,
          'stop that program, or give svc another --addr',
        ),
      );
  }
  checks.push(checkKey(ctx));
  return checks;
}

function checkKey(ctx: Context): Check {
  const { paths, config } = ctx;
  try {
    if (process.env.SVC_ACCESS_KEY) {
      checkKeyShape(process.env.SVC_ACCESS_KEY, 'SVC_ACCESS_KEY');
      return ok('key', 'the access key comes from SVC_ACCESS_KEY');
    }
    if (!(config instanceof ConfigError) && config.access_key !== undefined)
      return ok('key', 'the access key comes from access_key in config.yml');
    if (!existsSync(paths.accessKey))
      return ok('key', `no access key yet; "svc serve" generates one in ${paths.accessKey}`);
    checkKeyShape(readFileSync(paths.accessKey, 'utf8').trim(), paths.accessKey);
    return ok('key', `the access key is in ${paths.accessKey} ("svc key show" prints it)`);
  } catch (err) {
    return fail(
      'key',
      `${(err as Error).message}; svc serve will refuse to start`,
      `"svc key rotate" writes a new key file (or fix the value)`,
    );
  }
}
