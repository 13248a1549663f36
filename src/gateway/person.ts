import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { ApiError } from '../shared/errors.js';
import type { NetworkSetting } from '../shared/sandbox/network.js';
import type { PermissionMode } from '../shared/store/sessions.js';

/*
 * What only the person may do: answer an approval, or widen what a session's agent may do.
 * Loopback trust (docs/security.md#who-needs-the-key) is not enough for these: any program on this
 * machine reaches loopback, the ones the agent started among them. The access key, presented by the client (header, cookie, or
 * `?access_key=` on /ws), is the proof that a person's client sends the request.
 */

export function keyRequired(what: string): ApiError {
  return new ApiError(
    'key_required',
    `${what} needs the access key, even from this machine: any program running here (one the agent started, say) reaches svc without it, and must not answer or widen for you. Send it as "Authorization: Bearer <key>" or "X-Access-Key: <key>", or open the Web UI once through the address "svc key show" prints (it keeps the key as a cookie).`,
  );
}

/** Throws key_required unless the request carried the key. */
export function requireKey(keyed: boolean, what: string): void {
  if (!keyed) throw keyRequired(what);
}

const MODE_RANK: Record<PermissionMode, number> = { strict: 0, interactive: 1, auto: 2 };

/** Null follows permissions.yml, which the gateway does not read: from null, anything but off may be wider. */
function networkWidens(before: NetworkSetting | null, after: NetworkSetting | null): boolean {
  if (after === 'off' || before === 'on') return false;
  if (before === null) return after !== null;
  if (before === 'off') return true;
  if (after === null || after === 'on') return true;
  return after.some((h) => !before.includes(h));
}

/** Where a folder really is (a symlink inside the current folder may point anywhere). */
function real(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** A null folder is the home folder (the agent's default). */
function folderWidens(before: string | null, after: string | null): boolean {
  const from = real(before ?? homedir());
  const to = real(after ?? homedir());
  const rel = relative(from, to);
  return rel.startsWith('..') || isAbsolute(rel);
}

export interface RightsBefore {
  permission_mode: PermissionMode;
  network: NetworkSetting | null;
  working_dir: string | null;
}

/**
 * The settings of a change that would let the agent do more than before: a more permissive mode,
 * a wider sandbox network, a working folder (the sandbox's writable root) outside the current one.
 */
export function wideningFields(
  before: RightsBefore,
  change: Partial<RightsBefore>,
): Array<keyof RightsBefore> {
  const out: Array<keyof RightsBefore> = [];
  if (
    change.permission_mode !== undefined &&
    MODE_RANK[change.permission_mode] > MODE_RANK[before.permission_mode]
  )
    out.push('permission_mode');
  if (change.network !== undefined && networkWidens(before.network, change.network))
    out.push('network');
  if (change.working_dir !== undefined && folderWidens(before.working_dir, change.working_dir))
    out.push('working_dir');
  return out;
}
