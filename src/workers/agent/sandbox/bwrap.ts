import { existsSync, lstatSync, mkdirSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';

/**
 * What a sandboxed command may see and touch, turned into bubblewrap's arguments. Order matters
 * to bwrap (a later mount covers an earlier one): the read-only root first, then the writable
 * places, then the hidden ones, so a writable folder (say the home folder as working folder) can
 * never uncover a hidden one inside it.
 */
export interface FsPlan {
  /** The working folder: writable, and where the command starts. */
  cwd: string;
  /** A private folder mounted as /tmp. */
  tmp: string;
  /** Writable besides cwd and tmp: package caches, roots the rules grant. */
  write: string[];
  /** Unreadable: svc's home, key folders, what the rules name. */
  hide: string[];
  /** Git folders bound onto themselves, and hooks and config read-only over themselves (git-guard.ts). */
  git?: { pin: string[]; readOnly: string[] };
  /** Shown read-only at `dest` (under /tmp) whatever hides `src`: the enabled skills (skills-mount.ts). */
  reveal?: Array<{ src: string; dest: string }>;
}

/** What every Linux sandbox gets besides its files: its own network, a seccomp program. */
export interface Walls {
  /** The descriptor bubblewrap reads the seccomp program from. */
  seccompFd: number;
  /** Unix sockets outside that stay reachable (permissions.yml sandbox.sockets). */
  sockets: string[];
}

/** Secret folders hidden in every sandbox (svc's own home is added by the caller). */
export const SECRET_DIRS = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.config/gh',
  '.netrc',
  '.git-credentials',
  '.docker',
  '.kube',
  '.azure',
  '.config/gcloud',
];
/** Sockets that hand out more than any sandbox should have. */
export const HOST_SOCKETS = [
  '/var/run/docker.sock',
  '/run/docker.sock',
  '/run/containerd/containerd.sock',
];
/** Package-manager caches: writable, so installs and builds work. The first two are created if missing. */
export const CACHE_DIRS = [
  '.npm',
  '.cache',
  '.cargo/registry',
  '.cargo/git',
  'go/pkg/mod',
  '.m2/repository',
  '.gradle/caches',
  '.yarn',
  '.local/share/pnpm',
  '.bun/install/cache',
  '.deno',
];
const CREATE_CACHES = new Set(['.npm', '.cache']);

export function cacheDirs(home: string): string[] {
  const out: string[] = [];
  for (const rel of CACHE_DIRS) {
    const p = join(home, rel);
    if (CREATE_CACHES.has(rel) && !existsSync(p)) {
      try {
        mkdirSync(p, { recursive: true, mode: 0o700 });
      } catch {
        continue;
      }
    }
    out.push(p);
  }
  return out;
}

/** The path with symbolic links resolved, or undefined when it does not exist. */
function real(p: string): string | undefined {
  try {
    lstatSync(p);
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

export const inside = (p: string, dir: string): boolean =>
  p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** The hidden folder that holds `p` (so the command could not even start there), if any. */
export function hiddenHolder(p: string, hide: readonly string[]): string | undefined {
  const rp = real(p) ?? p;
  for (const h of hide) {
    const rh = real(h);
    if (rh !== undefined && inside(rp, rh)) return h;
  }
  return undefined;
}

export function bwrapArgs(fs: FsPlan, walls: Walls, isRoot: boolean): string[] {
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--unshare-pid',
    '--unshare-ipc',
    // Always its own network namespace: loopback inside is the sandbox's own, so neither svc's
    // API nor any local service is reachable except through the egress proxy.
    '--unshare-net',
    '--die-with-parent',
    '--seccomp',
    String(walls.seccompFd),
  ];
  // As root, bwrap keeps capabilities; without them uid 0 cannot remount, unmount or read past modes.
  if (isRoot) args.push('--cap-drop', 'ALL');
  args.push('--bind', fs.tmp, '/tmp');
  const seen = new Set<string>();
  for (const w of [...fs.write, fs.cwd]) {
    const r = real(w);
    if (r === undefined || seen.has(r) || r === '/') continue;
    seen.add(r);
    args.push('--bind', r, r);
  }
  for (const p of fs.git?.pin ?? []) args.push('--bind', p, p);
  for (const p of fs.git?.readOnly ?? []) args.push('--ro-bind', p, p);
  const hidden: string[] = [];
  for (const h of fs.hide) {
    const r = real(h);
    if (r === undefined || r === '/') continue;
    let dir = false;
    try {
      dir = lstatSync(r).isDirectory();
    } catch {
      continue;
    }
    if (dir) {
      args.push('--tmpfs', r);
      hidden.push(r);
    } else args.push('--ro-bind', '/dev/null', r);
  }
  // Listed sockets show through a hidden folder (an agent socket in the runtime folder), so
  // they are bound before the hidden folders turn read-only.
  for (const sock of walls.sockets) {
    const r = real(sock);
    if (r !== undefined) args.push('--bind', r, r);
  }
  for (const r of hidden) args.push('--remount-ro', r);
  for (const r of fs.reveal ?? []) args.push('--ro-bind', r.src, r.dest);
  args.push('--setenv', 'TMPDIR', '/tmp', '--chdir', real(fs.cwd) ?? fs.cwd, '--');
  return args;
}
