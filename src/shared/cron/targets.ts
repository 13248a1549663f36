import { z } from 'zod';
import type { Config } from '../config/schema.js';

// config.yml's `channels` (a record by platform name, each with `enabled`) belongs to the
// channels feature; it is read here loosely so this keeps working whatever else it holds.
const channelsShape = z.record(z.string(), z.looseObject({ enabled: z.boolean().optional() }));

/** The platforms a notify target may name: configured under `channels` and not disabled. */
export function notifyPlatforms(config: Config): string[] {
  const parsed = channelsShape.safeParse((config as unknown as Record<string, unknown>).channels);
  if (!parsed.success) return [];
  return Object.entries(parsed.data)
    .filter(([, c]) => c.enabled !== false)
    .map(([name]) => name);
}
