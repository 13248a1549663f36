import { z } from 'zod';
import { versionInfoSchema } from '../version.js';

/** The answers of /api/version. zod and node-free. */

export const versionView = z.lazy(() =>
  versionInfoSchema
    .extend({
      /** The request came from this machine (the Web UI offers the upgrade button then). */
      local: z.boolean(),
    })
    .meta({ id: 'VersionInfo' }),
);

/** POST /api/version/upgrade: it began; progress is on /ws (topic server). */
export const upgradeStarted = z.lazy(() => z.object({ status: z.literal('upgrading') }));
