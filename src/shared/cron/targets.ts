import { platformNames, type PlatformName } from '../config/channels.js';
import type { Config } from '../config/schema.js';

/** The platforms a notify target may name: configured under `channels` and enabled. */
export function notifyPlatforms(config: Config): PlatformName[] {
  return platformNames.filter((p) => config.channels[p]?.enabled === true);
}
