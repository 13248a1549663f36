import { z } from 'zod';

/**
 * A session's network inside the sandbox: `on`, `off`, or the hosts a local proxy lets through
 * (`example.com`, `*.example.com`, `host:port`, `[::1]:8080`). Null on a session follows the
 * `sandbox.network` of permissions.yml, else `on`.
 */
export const hostPattern = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(\*\.)?[a-z0-9_.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/,
    'a host is a name or address, optionally *.-prefixed and with :port (example.com, *.example.com, 127.0.0.1:8080)',
  );
export const networkSchema = z.union([
  z.enum(['on', 'off']),
  z.array(hostPattern).min(1, 'a host list needs at least one host; use "off" for none').max(100),
]);
export type NetworkSetting = z.infer<typeof networkSchema>;

/** The stored text: `on`, `off`, or a JSON list of hosts. */
export function encodeNetwork(n: NetworkSetting | null): string | null {
  return n === null ? null : typeof n === 'string' ? n : JSON.stringify(n);
}

export function decodeNetwork(text: string | null): NetworkSetting | null {
  if (text === null) return null;
  if (text === 'on' || text === 'off') return text;
  try {
    const parsed = networkSchema.safeParse(JSON.parse(text));
    // A stored value that no longer parses must not open the network: fall back to off.
    return parsed.success ? parsed.data : 'off';
  } catch {
    return 'off';
  }
}
