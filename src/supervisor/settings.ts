import { loadConfig } from '../shared/config/load.js';
import type { Config } from '../shared/config/schema.js';
import { log } from '../shared/log.js';
import { parseListenAddr, type ListenAddr } from '../shared/net/addr.js';
import { normalizeOrigin } from '../shared/net/origin.js';
import type { Paths } from '../shared/paths.js';
import { resolveAccessKey, type KeySource } from './access-key.js';

/** Everything the supervisor reads at start and again on each restart. */
export interface Settings {
  config: Config;
  listen: ListenAddr;
  key: string;
  keySource: KeySource;
}

export const DEFAULT_ADDR = '127.0.0.1:8088';

/** Reads config.yml and the key; throws a one-line (or one-line-per-problem) reason. */
export function readSettings(
  paths: Paths,
  flags: { addr?: string; accessKey?: string; cors: string[] },
  keepListen?: ListenAddr,
): Settings {
  const config = loadConfig(paths.config);
  config.cors = effectiveCors(config.cors, flags.cors);
  const addrText = flags.addr ?? config.addr ?? DEFAULT_ADDR;
  let listen: ListenAddr;
  try {
    listen = keepListen ?? parseListenAddr(addrText);
  } catch (err) {
    throw new Error(
      `${flags.addr !== undefined ? '--addr' : `${paths.config}: addr`}: ${(err as Error).message}`,
    );
  }
  const { key, source } = resolveAccessKey({
    flag: flags.accessKey,
    env: process.env.SVC_ACCESS_KEY,
    config: config.access_key,
    file: paths.accessKey,
  });
  return { config, listen, key, keySource: source };
}

/** config.yml's origins and the --cors flags together, normalized; `*` is dropped with a warning. */
export function effectiveCors(fromConfig: string[], fromFlags: string[]): string[] {
  const cors = [...new Set([...fromConfig, ...fromFlags].map(normalizeOrigin))];
  if (cors.includes('*')) log.warn('a CORS origin of "*" is ignored: list each allowed origin');
  return cors.filter((o) => o !== '*');
}
