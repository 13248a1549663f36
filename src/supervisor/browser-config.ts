import type { Config } from '../shared/config/schema.js';
import { ConfigError } from '../shared/config/load.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import { editConfig } from './config-writer.js';

interface Ctx {
  endpoint: Endpoint;
  file: string;
  changed: (c: Config) => void;
}

/** Saves a verified browser endpoint in config.yml: `cdp_url` or `port` replaces whichever was there (launch too). */
export function handleBrowserConfigEdits(ctx: Ctx): void {
  ctx.endpoint.handle('config.browser.set', ({ cdp_url, port }) => {
    try {
      ctx.changed(
        editConfig(ctx.file, (doc) => {
          for (const k of ['cdp_url', 'port', 'launch'])
            if (doc.hasIn(['browser', k])) doc.deleteIn(['browser', k]);
          if (cdp_url !== undefined) doc.setIn(['browser', 'cdp_url'], cdp_url);
          if (port !== undefined) doc.setIn(['browser', 'port'], port);
        }),
      );
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
    return {};
  });
}
