import {
  platformInfo,
  platformNames,
  platformNameSchema,
  type PlatformName,
} from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import { redactConfigSecrets } from '../../shared/config/secrets.js';
import { startChild } from '../../shared/child.js';
import { log } from '../../shared/log.js';
import { resolvePaths } from '../../shared/paths.js';
import { loginEvent } from '../../shared/event-summaries.js';
import { ipcPublish } from '../../shared/ws-publish.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import { lastMessageAt, latestChat, pruneInbound } from '../../shared/store/channels.js';
import { openDb, type Db } from '../../shared/store/db.js';
import { PlatformError, type Adapter } from './adapter.js';
import { Conversations } from './conversations.js';
import { AdapterHost } from './host.js';
import { createAdapter, qrLogins } from './platforms.js';

/**
 * The channels worker: one adapter per enabled platform, each restarted on its own when it
 * fails. Inbound messages become turns through the supervisor; the turns' events come back as
 * `ws.publish` events of their sessions and stream to the chat.
 */
const paths = resolvePaths();
const endpoint = startChild('channels');
let config: Config | undefined;
let db: Db | undefined;
let conversations: Conversations | undefined;
const hosts = new Map<PlatformName, { host: AdapterHost; key: string }>();
const logins = qrLogins(
  paths,
  () => config,
  () => apply(),
  (state) => ipcPublish(endpoint)('channels', 'channels.login', loginEvent(state)),
);

const cfg = (): Config => {
  if (!config) throw new IpcCallError('unavailable', 'the channels worker has not started yet');
  return config;
};

function apply(): void {
  if (!config || !db || !conversations) return;
  const convo = conversations;
  for (const platform of platformNames) {
    const entry = config.channels[platform];
    const key = entry?.enabled
      ? JSON.stringify(entry) + (logins.get(platform)?.qr.generation() ?? '')
      : '';
    const had = hosts.get(platform);
    if (had && had.key === key) continue;
    if (had) {
      hosts.delete(platform);
      void had.host.stop();
      log.info(`${platform} adapter stopped`, {
        reason: key ? 'configuration changed' : 'disabled',
      });
    }
    if (!key) continue;
    const host = new AdapterHost(platform, {
      create: () => createAdapter(platform, cfg(), paths, logins),
      message: (adapter, m) => convo.onMessage(adapter, m),
      connected: (adapter) =>
        void convo
          .recover(adapter)
          .catch((err: Error) =>
            log.warn('could not pick up unanswered messages', { error: err.message }),
          ),
      changed: () => ipcPublish(endpoint)('channels', 'channels.status', host.status(null)),
    });
    hosts.set(platform, { host, key });
    host.start();
  }
}

endpoint.handle('child.start', ({ config: c }) => {
  config = c;
  redactConfigSecrets(c);
  db = openDb(paths.db);
  pruneInbound(db);
  const theDb = db;
  conversations = new Conversations({
    db: theDb,
    endpoint,
    config: cfg,
    uploadsDir: paths.uploadsDir,
    adapter: (p) => hosts.get(p)?.host.live(),
  });
  apply();
  return {};
});

endpoint.onEvent((event) => {
  if (event.type === 'config.changed') {
    config = event.payload.config;
    redactConfigSecrets(config);
    apply();
  } else if (event.type === 'ws.publish' && event.payload.topic.startsWith('session:')) {
    void conversations
      ?.onEvent(event.payload.topic, event.payload.type, event.payload.data)
      .catch((err: Error) => log.warn('a turn event was not handled', { error: err.message }));
  }
});

/** The running adapter of a platform, or the 409 the API answers when there is none. */
function running(platform: PlatformName): Adapter {
  const a = hosts.get(platform)?.host.live();
  if (a) return a;
  const st = hosts.get(platform)?.host.status(null);
  const why = st
    ? `it is ${st.state.replace('_', ' ')}${st.error ? `: ${st.error}` : ''}`
    : 'it is not enabled';
  throw new IpcCallError('conflict', `${platformInfo[platform].label} is not running (${why}).`);
}

async function deliver<T>(platform: PlatformName, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof PlatformError)
      throw new IpcCallError(
        'platform_error',
        `${platformInfo[platform].label} did not take the message: ${err.message}`,
      );
    throw err;
  }
}

endpoint.handle('channels.status', () => ({
  platforms: [...hosts.values()].map(({ host }) =>
    host.status(db ? lastMessageAt(db, host.platform) : null),
  ),
}));
endpoint.handle('channels.send', ({ platform, chat_id, text }) => {
  const a = running(platform);
  return deliver(platform, async () => ({ message_id: await a.sendText(chat_id, text) }));
});
endpoint.handle('channels.deliver', ({ platform, chat_id, text }) => {
  const p = platformNameSchema.safeParse(platform);
  if (!p.success)
    throw new IpcCallError(
      'not_found',
      `There is no channel platform "${platform}" (known: ${platformNames.join(', ')}).`,
    );
  const a = running(p.data);
  return deliver(p.data, async () => ({ message_id: await a.sendText(chat_id, text) }));
});
endpoint.handle('channels.send_file', ({ platform, chat_id, path, name }) => {
  const a = running(platform);
  return deliver(platform, async () => ({ message_id: await a.sendFile(chat_id, path, name) }));
});
endpoint.handle('channels.test', async ({ platform, chat_id }) => {
  const a = running(platform);
  const to =
    chat_id ??
    (db && conversations
      ? latestChat(db, platform, (u) => conversations!.allowed(platform, u))?.chat_id
      : undefined);
  if (!to)
    throw new IpcCallError(
      'invalid_request',
      `No allowed user has written to the ${platformInfo[platform].label} bot yet; send it a message first, or give a chat id.`,
    );
  const id = await deliver(platform, () =>
    a.sendText(to, 'Test message from svc: this chat is connected.', { plain: true }),
  );
  return { chat_id: to, message_id: id };
});
endpoint.handle('channels.paired', async ({ platform, chat_id, approved }) => {
  const a = hosts.get(platform)?.host.live();
  const text = approved
    ? 'You are approved: send your message again and the agent will answer.'
    : 'Your pairing request was declined.';
  await a
    ?.sendText(chat_id, text, { plain: true })
    .catch((err: Error) =>
      log.warn('could not tell the user about the pairing', { error: err.message }),
    );
  return {};
});
/** The QR login of a platform that logs in by one (the gateway only asks for those). */
function loginOf(platform: PlatformName) {
  const l = logins.get(platform);
  if (!l)
    throw new IpcCallError(
      'not_found',
      `${platformInfo[platform].label} does not log in by a QR code.`,
    );
  return l;
}
endpoint.handle('channels.login.start', ({ platform, force }) => loginOf(platform).start(force));
endpoint.handle('channels.login.get', ({ platform }) => loginOf(platform).state());
endpoint.handle('channels.login.cancel', ({ platform }) => loginOf(platform).cancel());

process.on('SIGTERM', () => {
  void Promise.all([...hosts.values()].map(({ host }) => host.stop())).finally(() =>
    process.exit(0),
  );
});
process.on('SIGINT', () => {});
