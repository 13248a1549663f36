import {
  chmodSync,
  existsSync,
  readdirSync,
  renameSync,
  rmSync,
  mkdirSync,
  statSync,
} from 'node:fs';
import { connect } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { openAndMigrate } from '../store/db.js';
import { version } from '../version.js';
import type { Opening } from './age.js';
import { BACKUP_FORMAT_VERSION } from './manifest.js';
import { integrityProblems, knownSchema } from './schema.js';
import { unpackChecked } from './unpack.js';

export interface RestoreOptions {
  home: string;
  force: boolean;
  opening?: Opening;
}

export interface Restored {
  home: string;
  /** Where a non-empty home was moved with --force. */
  movedAside?: string;
  from: { svc_version: string; schema_version: number; created_at: string };
  /** Store migrations applied to bring an older backup forward. */
  migrated: number[];
  files: number;
}

export class RestoreRefused extends Error {}

/** Whether a server answers on the home's control socket. */
function running(home: string): Promise<boolean> {
  const sock = join(home, 'run', 'supervisor.sock');
  if (!existsSync(sock)) return Promise.resolve(false);
  return new Promise((done) => {
    const c = connect(sock);
    c.once('connect', () => {
      c.destroy();
      done(true);
    });
    c.once('error', () => done(false));
  });
}

const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/** Every file 0600 and every folder 0700, as svc keeps its home. */
function tighten(dir: string): void {
  chmodSync(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tighten(p);
    else chmodSync(p, 0o600);
  }
}

/**
 * Restores a backup into an empty or new home (a non-empty one only with `force`, which moves
 * it aside first). Everything is unpacked and checked in a sibling folder, the database
 * checked and migrated forward as a start would, and only then renamed into place: a failure at
 * any step leaves the home as it was.
 */
export async function restoreBackup(file: string, opts: RestoreOptions): Promise<Restored> {
  const home = resolve(opts.home);
  if (await running(home))
    throw new RestoreRefused(`svc is running on ${home}; stop it first (svc serve --stop)`);
  if (!isEmptyDir(home) && !opts.force)
    throw new RestoreRefused(
      `${home} is not empty; restore into a new folder with --home DIR, or add --force to move the current one aside first`,
    );
  mkdirSync(dirname(home), { recursive: true });
  const staging = join(dirname(home), `.${basename(home)}.restoring-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  try {
    const r = await unpackChecked(file, {
      ...(opts.opening ? { opening: opts.opening } : {}),
      into: staging,
    });
    const m = r.manifest;
    if (!m) throw new RestoreRefused('not an svc backup');
    if (m.format_version > BACKUP_FORMAT_VERSION || m.schema_version > knownSchema())
      throw new RestoreRefused(
        `this backup was made by svc ${m.svc_version} (schema ${m.schema_version}), newer than this svc ${version} (schema ${knownSchema()}); upgrade svc first (svc upgrade), then restore`,
      );
    if (r.problems.length > 0)
      throw new RestoreRefused(
        `the backup is damaged, nothing was restored: ${r.problems.map((p) => `${p.path}: ${p.problem}`).join('; ')}`,
      );
    let migrated: number[] = [];
    const db = join(staging, 'svc.db');
    if (existsSync(db)) {
      const bad = integrityProblems(db);
      if (bad.length > 0)
        throw new RestoreRefused(`svc.db in the backup fails its integrity check: ${bad[0]}`);
      const opened = openAndMigrate(db);
      migrated = opened.applied;
      opened.db.pragma('wal_checkpoint(TRUNCATE)');
      opened.db.close();
    }
    tighten(staging);
    let movedAside: string | undefined;
    if (existsSync(home)) {
      if (!isEmptyDir(home)) {
        movedAside = `${home}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        renameSync(home, movedAside);
      } else rmSync(home, { recursive: true });
    }
    renameSync(staging, home);
    return {
      home,
      ...(movedAside ? { movedAside } : {}),
      from: {
        svc_version: m.svc_version,
        schema_version: m.schema_version,
        created_at: m.created_at,
      },
      migrated,
      files: r.files,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
