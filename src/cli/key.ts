import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../shared/atomic-write.js';
import { loadConfig } from '../shared/config/load.js';
import { loadServeEnv } from '../shared/config/serve-env.js';
import { parseListenAddr } from '../shared/net/addr.js';
import type { Paths } from '../shared/paths.js';
import { statusSchema } from '../shared/protocol/ipc.js';
import { resolveAccessKey, type KeySource } from '../supervisor/access-key.js';
import { askControl } from '../supervisor/control-socket.js';
import { DEFAULT_ADDR } from '../supervisor/settings.js';
import { openUrl } from './serve.js';

/** `svc key show | rotate`: the access key, read by the local user from the files (or the running supervisor). */

export interface KeyView {
  key: string;
  source: KeySource;
  /** Opens the Web UI signed in. */
  url: string;
  running: boolean;
}

const openUrlReply = z.object({
  url: z.string().nullable(),
  key: z.string(),
  key_source: z.enum(['flag', 'env', 'config', 'file', 'generated']),
});

const where: Record<KeySource, string> = {
  flag: 'the --access-key flag of the running svc',
  env: 'the SVC_ACCESS_KEY environment variable',
  config: 'access_key in config.yml',
  file: 'the key file',
  generated: 'the key file',
};

export function describeSource(source: KeySource, paths: Paths): string {
  return source === 'file' || source === 'generated' ? paths.accessKey : where[source];
}

/** The key the running server uses, else the one `svc serve` would use (generated now if none exists yet). */
export async function readKey(paths: Paths): Promise<KeyView> {
  const raw = await askControl(paths.controlSocket, { cmd: 'open_url' }, 3000).catch(
    () => undefined,
  );
  const status =
    raw === undefined
      ? undefined
      : await askControl(paths.controlSocket, { cmd: 'status' }, 3000).then((s) =>
          statusSchema.parse(s),
        );
  if (raw !== undefined && status?.addr) {
    const open = openUrlReply.parse(raw);
    const listen = parseListenAddr(status.addr);
    return {
      key: open.key,
      source: fileOr(open.key_source),
      url: openUrl(listen, listen.port, open.key),
      running: true,
    };
  }
  loadServeEnv(paths.serveEnv);
  const config = loadConfig(paths.config);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  const { key, source } = resolveAccessKey({
    env: process.env.SVC_ACCESS_KEY,
    config: config.access_key,
    file: paths.accessKey,
  });
  const listen = parseListenAddr(config.addr ?? DEFAULT_ADDR);
  return { key, source: fileOr(source), url: openUrl(listen, listen.port, key), running: false };
}

/** A key generated at some start lives in the file like any other. */
const fileOr = (source: KeySource): KeySource => (source === 'generated' ? 'file' : source);

/**
 * Writes a new key file and, when svc runs, restarts it through the drain: the new gateway
 * knows only the new key, so every client holding the old one is refused from then on.
 */
export async function rotateKey(paths: Paths, waitMs: number): Promise<KeyView> {
  const before = await readKey(paths);
  if (before.source !== 'file' && before.source !== 'generated') {
    throw new Error(
      `the key comes from ${where[before.source]}, so a new key file would change nothing; set a new key there and restart svc`,
    );
  }
  writeFileAtomic(paths.accessKey, randomBytes(32).toString('hex') + '\n', 0o600);
  if (!before.running) return readKey(paths);
  const status = statusSchema.parse(await askControl(paths.controlSocket, { cmd: 'status' }));
  const reply = z
    .object({ accepted: z.boolean() })
    .parse(await askControl(paths.controlSocket, { cmd: 'restart' }));
  if (!reply.accepted)
    throw new Error('svc is stopping; the new key takes effect when it starts again');
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    const now = await askControl(paths.controlSocket, { cmd: 'status' }, 3000).then(
      (s) => statusSchema.parse(s),
      () => undefined,
    );
    if (now && now.restarts > status.restarts && now.state === 'running') return readKey(paths);
    if (now?.last_restart_error && now.last_restart_error !== status.last_restart_error)
      throw new Error(`the new key was written but the restart failed: ${now.last_restart_error}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `the new key was written but svc did not finish restarting within ${Math.round(waitMs / 1000)} s; "svc status" shows where it is`,
  );
}
