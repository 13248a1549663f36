import { lazyEntries } from './lazy.js';
import { z } from 'zod';

/** Delivery of a text to one chat of a configured platform (cron notify, scripts). */
export const channelsDeliverMakers = {
  'channels.deliver': () => ({
    payload: z.object({ platform: z.string(), chat_id: z.string(), text: z.string() }),
    result: z.object({ message_id: z.string().nullable() }),
  }),
} as const;
export const channelsDeliverDefs = lazyEntries(channelsDeliverMakers);
