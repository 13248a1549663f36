import { z } from 'zod';

/**
 * `browser` in config.yml: which Chromium the agent drives over the Chrome DevTools Protocol.
 * `cdp_url` or `port` names one the user started with --remote-debugging-port; `launch: auto`
 * has svc start a headless Chromium of its own (profile under $SVC_HOME/browser/) and stop it
 * with svc. Only loopback endpoints unless `allow_remote`.
 */
export const browserConfigSchema = z
  .object({
    cdp_url: z
      .url({
        protocol: /^(https?|wss?)$/,
        error:
          'cdp_url must be an http://, https://, ws:// or wss:// address, e.g. "http://127.0.0.1:9222"',
      })
      .optional(),
    port: z.number().int().min(1).max(65535).optional(),
    launch: z.enum(['auto']).optional(),
    /** The browser binary for `launch: auto`; found on the machine when absent. */
    executable: z.string().min(1).max(4096).optional(),
    allow_remote: z.boolean().default(false),
  })
  .strict()
  .prefault({})
  .superRefine((b, ctx) => {
    const set = [
      b.cdp_url !== undefined && 'cdp_url',
      b.port !== undefined && 'port',
      b.launch !== undefined && 'launch',
    ].filter(Boolean);
    if (set.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `give one of cdp_url, port or launch, not ${set.join(' and ')}`,
      });
  });
export type BrowserConfig = z.infer<typeof browserConfigSchema>;

/** Whether a browser is configured at all (the browser worker is wanted). */
export function browserConfigured(b: BrowserConfig): boolean {
  return b.cdp_url !== undefined || b.port !== undefined || b.launch !== undefined;
}
