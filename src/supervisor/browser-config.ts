import type { Config } from '../shared/config/schema.js';
import { ConfigError } from '../shared/config/load.js';
import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import { editConfig } from './config-writer.js';

interface Ctx {
  endpoint: Endpoint;
  file: string;
  changed: (c: Config) => void;
}

/** Saves the browser in config.yml: a verified `cdp_url` or `port`, or `launch: auto`, replaces whichever was there. */
export function handleBrowserConfigEdits(ctx: Ctx): void {
  ctx.endpoint.handle('config.browser.set', ({ cdp_url, port, launch }) => {
    try {
      ctx.changed(
        editConfig(ctx.file, (doc) => {
          for (const k of ['cdp_url', 'port', 'launch'])
            if (doc.hasIn(['browser', k])) doc.deleteIn(['browser', k]);
          if (cdp_url !== undefined) doc.setIn(['browser', 'cdp_url'], cdp_url);
          if (port !== undefined) doc.setIn(['browser', 'port'], port);
          if (launch !== undefined) doc.setIn(['browser', 'launch'], launch);
        }),
      );
    } catch (err) {
      if (err instanceof ConfigError) throw new IpcCallError('invalid_request', err.message);
      throw err;
    }
    return {};
  });
}
