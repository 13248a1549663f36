import { z } from 'zod';
import { defineTool } from '../registry.js';

/** The current date and time: harmless, and enough to prove the tool loop end to end. */
export const clockTool = defineTool({
  name: 'current_time',
  purpose: "Tells the agent today's date and the time.",
  description:
    "Returns the current date and time, in UTC and in the given IANA time zone (default: the server's).",
  args: z
    .object({
      time_zone: z.string().max(64).optional().describe('An IANA time zone such as Europe/Paris'),
    })
    .strict(),
  run: ({ time_zone }) => {
    const now = new Date();
    const zone = time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    let local: string;
    try {
      local = now.toLocaleString('en-GB', { timeZone: zone, dateStyle: 'full', timeStyle: 'long' });
    } catch {
      return { output: `Unknown time zone "${zone}".`, isError: true };
    }
    return { output: JSON.stringify({ utc: now.toISOString(), time_zone: zone, local }) };
  },
});
