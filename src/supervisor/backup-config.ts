import type { Config } from '../shared/config/schema.js';
import { ConfigError } from '../shared/config/load.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import { editConfig } from './config-writer.js';

interface Ctx {
  endpoint: Endpoint;
  file: string;
  changed: (c: Config) => void;
}

/** Replaces `backup:` in config.yml with what the client sent (null or absent fields are left out). */
export function handleBackupConfigEdits(ctx: Ctx): void {
  ctx.endpoint.handle('config.backup.set', (settings) => {
    try {
      ctx.changed(
        editConfig(ctx.file, (doc) => {
          if (doc.hasIn(['backup'])) doc.deleteIn(['backup']);
          for (const [k, v] of Object.entries(settings))
            if (v !== null && v !== undefined) doc.setIn(['backup', k], v);
        }),
      );
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
    return {};
  });
}
