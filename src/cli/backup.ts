import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Opening, Sealing } from '../shared/backup/age.js';
import type { BackupProgress } from '../shared/backup/create.js';
import type { Paths } from '../shared/paths.js';
import { UsageError } from './argv.js';

export interface BackupFlags {
  to?: string;
  uploads: boolean;
  encrypt: boolean;
  recipients: string[];
  passphraseFile?: string;
  identityFiles: string[];
  home?: string;
  force: boolean;
  json: boolean;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** A passphrase never comes from the command line (it would sit in the shell's history and ps). */
async function passphrase(flags: BackupFlags, confirm: boolean): Promise<string | undefined> {
  if (flags.passphraseFile !== undefined) {
    const text = readFileSync(flags.passphraseFile, 'utf8').split('\n')[0] ?? '';
    if (text === '') throw new UsageError(`${flags.passphraseFile} holds no passphrase`);
    return text;
  }
  const env = process.env.SVC_BACKUP_PASSPHRASE;
  if (env !== undefined && env !== '') return env;
  if (!process.stdin.isTTY) return undefined;
  const first = await ask('Passphrase: ');
  if (confirm && (await ask('Again: ')) !== first) throw new UsageError('the passphrases differ');
  if (first === '') throw new UsageError('an empty passphrase protects nothing');
  return first;
}

/** Reads a line from the terminal without echoing it. */
function ask(prompt: string): Promise<string> {
  return new Promise((done) => {
    process.stderr.write(prompt);
    const stdin = process.stdin;
    stdin.setRawMode(true);
    stdin.resume();
    let text = '';
    const onData = (b: Buffer) => {
      for (const ch of b.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stderr.write('\n');
          return done(text);
        }
        if (ch === '\u0003') process.exit(130);
        if (ch === '\u007f') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
  });
}

function identities(flags: BackupFlags): string[] {
  return flags.identityFiles.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('AGE-SECRET-KEY-')),
  );
}

async function opening(flags: BackupFlags): Promise<Opening> {
  const ids = identities(flags);
  if (ids.length > 0) return { identities: ids };
  const p = await passphrase(flags, false);
  return p === undefined ? {} : { passphrase: p };
}

function progressLine(p: BackupProgress): string {
  if (p.stage === 'database') return 'snapshotting svc.db…';
  if (p.stage === 'finishing') return 'finishing…';
  const pct = p.bytes_total > 0 ? Math.floor((100 * p.bytes_done) / p.bytes_total) : 100;
  return `${pct}%  ${p.files_done}/${p.files_total} files, ${mb(p.bytes_done)} of ${mb(p.bytes_total)}`;
}

export async function backupCreate(paths: Paths, flags: BackupFlags): Promise<void> {
  let seal: Sealing | undefined;
  if (flags.recipients.length > 0) seal = { recipients: flags.recipients };
  else if (flags.encrypt) {
    const p = await passphrase(flags, true);
    if (p === undefined)
      throw new UsageError(
        '--encrypt needs a passphrase: --passphrase-file FILE, SVC_BACKUP_PASSPHRASE, or a terminal to type it in; or use --recipient',
      );
    seal = { passphrase: p };
  }
  const { createBackup } = await import('../shared/backup/create.js');
  const tty = process.stderr.isTTY && !flags.json;
  const made = await createBackup({
    home: paths.home,
    to: resolve(flags.to ?? join(paths.home, 'backups')),
    uploads: flags.uploads,
    ...(seal ? { seal } : {}),
    ...(tty ? { onProgress: (p) => process.stderr.write(`\r\x1b[K${progressLine(p)}`) } : {}),
  });
  if (tty) process.stderr.write('\r\x1b[K');
  if (flags.json) {
    const { manifest: _m, ...rest } = made;
    console.log(JSON.stringify({ ...rest, skipped: made.manifest.skipped }));
    return;
  }
  console.log(
    `Backup written: ${made.file} (${mb(made.size)}, ${made.files} files, ${(made.ms / 1000).toFixed(1)} s${made.encrypted ? ', encrypted' : ''})`,
  );
  console.log(
    made.encrypted
      ? 'It is encrypted; keep the passphrase or key apart from it.'
      : 'It holds your keys and sign-ins (mode 0600): keep it like a password file, or use --encrypt.',
  );
  for (const s of made.manifest.skipped) console.log(`left out: ${s.path} (${s.why})`);
}

export async function backupVerify(file: string, flags: BackupFlags): Promise<boolean> {
  const { verifyBackup } = await import('../shared/backup/verify.js');
  const report = await verifyBackup(resolve(file), await opening(flags));
  if (flags.json) console.log(JSON.stringify(report));
  else {
    for (const p of report.problems) console.log(`fail  ${p.path}: ${p.problem}`);
    const m = report.manifest;
    console.log(
      report.ok
        ? `ok    ${report.files} files, ${mb(report.bytes)}; svc ${m?.svc_version}, schema ${m?.schema_version}, made ${m?.created_at}${report.encrypted ? ', encrypted' : ''}${report.restorable ? '' : '; made by a newer svc: upgrade before restoring'}`
        : `${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}: do not rely on this backup`,
    );
  }
  return report.ok;
}

export async function backupRestore(paths: Paths, file: string, flags: BackupFlags): Promise<void> {
  const { restoreBackup } = await import('../shared/backup/restore.js');
  const r = await restoreBackup(resolve(file), {
    home: flags.home ?? paths.home,
    force: flags.force,
    opening: await opening(flags),
  });
  if (flags.json) {
    console.log(JSON.stringify(r));
    return;
  }
  if (r.movedAside) console.log(`The home that was there is kept at ${r.movedAside}`);
  console.log(
    `Restored ${r.files} files into ${r.home} from a backup of svc ${r.from.svc_version} made ${r.from.created_at}${r.migrated.length > 0 ? `; its database was brought forward (${r.migrated.length} migrations)` : ''}. Start it with: SVC_HOME=${r.home} svc serve`,
  );
}
