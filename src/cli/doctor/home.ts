import { chmodSync, existsSync, readdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Check, type Context, fail, ok, warn } from './check.js';

/** svc's private folders and files: 0700 and 0600, owned by this user. `--fix` tightens modes. */
export function checkModes(ctx: Context): Check[] {
  const { paths } = ctx;
  if (!existsSync(paths.home))
    return [ok('home', `${paths.home} does not exist yet; "svc serve" creates it (0700)`)];
  const targets: { path: string; dir: boolean }[] = [{ path: paths.home, dir: true }];
  for (const f of [
    paths.config,
    paths.accessKey,
    paths.serveEnv,
    paths.permissions,
    paths.db,
    `${paths.db}-wal`,
    `${paths.db}-shm`,
  ])
    targets.push({ path: f, dir: false });
  for (const d of [paths.runDir, paths.logsDir]) {
    targets.push({ path: d, dir: true });
    for (const name of listDir(d)) targets.push({ path: join(d, name), dir: false });
  }
  const uid = process.getuid?.();
  const loose: { path: string; mode: number; want: number }[] = [];
  const foreign: string[] = [];
  for (const t of targets) {
    let st;
    try {
      st = statSync(t.path);
    } catch {
      continue;
    }
    if (uid !== undefined && st.uid !== uid) foreign.push(`${t.path} (uid ${st.uid})`);
    if (st.isSocket()) continue; // the control socket is 0600 by its own chmod; a stale one is the pid check's
    const mode = st.mode & 0o777;
    if (mode & 0o077) loose.push({ path: t.path, mode, want: t.dir ? 0o700 : 0o600 });
  }
  const checks: Check[] = [];
  if (foreign.length > 0)
    checks.push(
      fail(
        'home-owner',
        `owned by another user: ${foreign.join(', ')}`,
        `give them back to you: sudo chown -R ${process.env.USER ?? '$USER'} ${paths.home}`,
      ),
    );
  if (loose.length === 0)
    checks.push(ok('home', `${paths.home}: the folder and svc's files are private (0700/0600)`));
  else {
    const list = loose.map((l) => `${l.path} is ${l.mode.toString(8)}`).join(', ');
    checks.push({
      ...fail(
        'home',
        `other users can read or change svc's files: ${list}`,
        `svc doctor --fix (or chmod ${loose.map((l) => `${l.want.toString(8)} ${l.path}`).join('; chmod ')})`,
      ),
      repair: () => {
        // An earlier repair may have removed one since (the stale pid file): nothing to tighten.
        const tightened = loose.filter((l) => {
          try {
            chmodSync(l.path, l.want);
            return true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
            throw err;
          }
        });
        return `tightened ${tightened.map((l) => `${l.path} to ${l.want.toString(8)}`).join(', ')}`;
      },
    });
  }
  return checks;
}

export function checkDisk(ctx: Context): Check {
  let dir = ctx.paths.home;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  let free: number;
  try {
    const st = statfsSync(dir);
    free = st.bavail * st.bsize;
  } catch (err) {
    return warn('disk', `cannot read the free space of ${dir}: ${(err as Error).message}`);
  }
  const text =
    free >= 2 ** 30 ? `${(free / 2 ** 30).toFixed(1)} GiB` : `${Math.round(free / 2 ** 20)} MiB`;
  if (free < 100 * 2 ** 20)
    return fail(
      'disk',
      `only ${text} free for ${ctx.paths.home}; writes to svc.db and uploads will fail`,
      'free some space on that disk (svc trash can be emptied in the Web UI)',
    );
  if (free < 2 ** 30)
    return warn(
      'disk',
      `${text} free for ${ctx.paths.home}; uploads and the database may run out soon`,
      'free some space on that disk',
    );
  return ok('disk', `${text} free for ${ctx.paths.home}`);
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
