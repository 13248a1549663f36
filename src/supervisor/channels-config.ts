import { isMap, type Document } from 'yaml';
import { z } from 'zod';
import { platformInfo, platformNameSchema, platformSchemas } from '../shared/config/channels.js';
import { ConfigError } from '../shared/config/load.js';
import type { Config } from '../shared/config/schema.js';
import type { Paths } from '../shared/paths.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import type { Db } from '../shared/store/db.js';
import { putInTrash, trashConflict, type TrashKinds } from '../shared/store/trash.js';
import { editConfig } from './config-writer.js';

/** The trash kind of a platform's configuration; its place is config.yml. */
export const CHANNEL_TRASH_KIND = 'channel_config';

const trashPayload = z.object({
  platform: platformNameSchema,
  entry: z.record(z.string(), z.unknown()),
});

interface Ctx {
  endpoint: Endpoint;
  file: string;
  db: Db;
  paths: Paths;
  current: () => Config;
  changed: (c: Config) => void;
}

/**
 * The config.yml edits of `channels.<platform>`, like MCP servers: the YAML document is edited,
 * the whole result validated, written atomically, every child told, then the request answered.
 * A delete puts the entry in the trash in the same transaction.
 */
export function handleChannelConfigEdits(ctx: Ctx): TrashKinds {
  const write = (edit: (doc: Document) => void): Config => {
    try {
      return editConfig(ctx.file, edit);
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
  };
  const setEntry = (doc: Document, platform: string, entry: Record<string, unknown>) => {
    const channels = doc.getIn(['channels'], true);
    if (isMap(channels)) channels.flow = false;
    doc.setIn(['channels', platform], doc.createNode(entry));
  };

  ctx.endpoint.handle('config.channels.save', ({ platform, entry }) => {
    platformSchemas[platform].parse(entry); // the gateway checked it; a bad one never reaches the file
    ctx.changed(write((doc) => setEntry(doc, platform, entry)));
    return {};
  });

  ctx.endpoint.handle('config.channels.delete', ({ platform }) => {
    const entry = ctx.current().channels[platform];
    if (!entry)
      throw new IpcCallError('not_found', `${platformInfo[platform].label} is not configured.`);
    let config: Config | undefined;
    const item = ctx.db
      .transaction(() => {
        const it = putInTrash(ctx.db, ctx.paths, {
          kind: CHANNEL_TRASH_KIND,
          name: platform,
          original: `channels.${platform}`,
          payload: { platform, entry },
        });
        config = write((doc) => doc.deleteIn(['channels', platform]));
        return it;
      })
      .immediate();
    if (config) ctx.changed(config);
    return { trash_id: item.id };
  });

  return {
    [CHANNEL_TRASH_KIND]: {
      restore({ payload }) {
        const p = trashPayload.parse(payload);
        if (ctx.current().channels[p.platform]) {
          throw trashConflict(
            `${platformInfo[p.platform].label} is configured again; delete that configuration first to restore this one.`,
            { platform: p.platform },
          );
        }
        platformSchemas[p.platform].parse(p.entry);
        ctx.changed(write((doc) => setEntry(doc, p.platform, p.entry)));
        return { restored_to: p.platform };
      },
    },
  };
}
