import { issueLine } from '../../../shared/errors.js';
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import {
  hostPattern,
  networkSchema,
  type NetworkSetting,
} from '../../../shared/sandbox/network.js';

/**
 * The `sandbox:` section of permissions.yml (the rest of the file is the permission engine's):
 *
 *   sandbox:
 *     network: off                  # for sessions that set none: on (default), off, or a host list
 *     hide: ["~/private", "$HOME/.kube"]   # unreadable inside, besides the built-in secret folders
 *     write: ["~/shared-builds"]    # writable inside, besides the working folder, temp and caches
 *     local_hosts: ["127.0.0.1:3000"]   # loopback/private/own addresses the proxy may reach
 *     sockets: ["/run/postgresql/.s.PGSQL.5432"]   # unix sockets outside that stay reachable
 *
 * Paths may start with ~, $HOME or $SVC_HOME and must be absolute after that.
 */

const pathList = z.array(z.string().min(1).max(4096)).max(100).default([]);
const localHost = hostPattern.refine(
  (h) => !h.startsWith('*.') && /:\d{1,5}$/.test(h),
  'name one host with its port (127.0.0.1:3000, localhost:5432, [::1]:8080)',
);
const section = z.strictObject({
  network: networkSchema.optional(),
  hide: pathList,
  write: pathList,
  local_hosts: z.array(localHost).max(100).default([]),
  sockets: pathList,
});
export type SandboxRules = {
  network: NetworkSetting | undefined;
  hide: string[];
  write: string[];
  localHosts: string[];
  sockets: string[];
};

const none: SandboxRules = {
  network: undefined,
  hide: [],
  write: [],
  localHosts: [],
  sockets: [],
};

export function expandPath(p: string, home: string, svcHome: string): string | undefined {
  let out = p;
  if (out === '~' || out.startsWith('~/')) out = join(home, out.slice(1));
  else if (out.startsWith('$HOME')) out = home + out.slice(5);
  else if (out.startsWith('$SVC_HOME')) out = svcHome + out.slice(9);
  return isAbsolute(out) ? resolve(out) : undefined;
}

/**
 * Reads the section; a broken one is reported and then nothing of it is used except that a hide
 * list cannot be dropped silently: the caller refuses to run commands with a `problem` standing.
 */
export function loadSandboxRules(
  file: string,
  home: string,
  svcHome: string,
): { rules: SandboxRules; problem?: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { rules: none };
    return { rules: none, problem: `${file}: cannot read: ${(err as Error).message}` };
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    return {
      rules: none,
      problem: `${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  const value =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw)
      ? (raw as Record<string, unknown>).sandbox
      : undefined;
  if (value === undefined || value === null) return { rules: none };
  const parsed = section.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    return {
      rules: none,
      problem: `${file}: ${issueLine({ ...first, path: ['sandbox', ...first.path] })}`,
    };
  }
  const expand = (list: string[], key: string): string[] | string => {
    const out: string[] = [];
    for (const p of list) {
      const abs = expandPath(p, home, svcHome);
      if (!abs)
        return `${file}: sandbox.${key}: "${p}" is not an absolute path (start it with /, ~ or $HOME)`;
      out.push(abs);
    }
    return out;
  };
  const hide = expand(parsed.data.hide, 'hide');
  if (typeof hide === 'string') return { rules: none, problem: hide };
  const write = expand(parsed.data.write, 'write');
  if (typeof write === 'string') return { rules: none, problem: write };
  const sockets = expand(parsed.data.sockets, 'sockets');
  if (typeof sockets === 'string') return { rules: none, problem: sockets };
  return {
    rules: {
      network: parsed.data.network,
      hide,
      write,
      localHosts: parsed.data.local_hosts,
      sockets,
    },
  };
}

/** Whether `host:port` is on the list: exact names, `*.suffix`, and an optional port on each entry. */
export function hostAllowed(list: readonly string[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  for (const entry of list) {
    const m = entry.startsWith('[')
      ? /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
      : /^([^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) continue;
    const name = m[1]!;
    if (m[2] !== undefined && Number(m[2]) !== port) continue;
    if (
      name.startsWith('*.') ? h.endsWith(name.slice(1)) && h.length > name.length - 1 : h === name
    )
      return true;
  }
  return false;
}
