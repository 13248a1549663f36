import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAndMigrate } from '../src/shared/store/db.js';
import { insertMessageRow } from '../src/shared/store/messages.js';
import { insertSessionRow } from '../src/shared/store/sessions.js';
import { newId } from '../src/shared/store/util.js';
import {
  emit,
  envInt,
  machine,
  median,
  note,
  removeLater,
  round,
  statusBytes,
  svcBin,
  track,
} from './lib.js';

/**
 * Issue 35's bar: the time and peak memory of `svc backup create` (and `verify`) on a 1 GB home,
 * against `tar -cf` of the same home in the same run: the floor of reading and writing it once
 * (a copy by hand cannot snapshot a live database; with gzip it took 5.6× svc's time on the
 * first run, since svc stores photos as they are and deflates only text). The same home at a
 * tenth of the size shows whether memory grows with the home (it must not: everything streams).
 *
 * The home: about a third svc.db (sessions of user, assistant and tool messages in made-up words,
 * with the search index), the rest uploads, half text (deflated) and half random bytes named as
 * photos (stored), plus memory notes and a skill.
 *
 *   BENCH_BACKUP_MB=1024 BENCH_BACKUP_RUNS=3
 */

const MB = envInt('BENCH_BACKUP_MB', 1024);
const RUNS = Math.max(1, envInt('BENCH_BACKUP_RUNS', 3));
const mib = (n: number) => round(n / 1024 / 1024, 1);

let seed = 0x2545f491;
function rand(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 0x100000000;
}
const SYLLABLES = 'ka lo mi nu re sa ti vo ze pa do fi gu he ja ke li ma ne po ru se ta'.split(' ');
const VOCAB = Array.from({ length: 5000 }, () => {
  let w = '';
  for (let i = 2 + Math.floor(rand() * 3); i > 0; i--)
    w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
  return w;
});
function text(words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(VOCAB[Math.floor(rand() * rand() * VOCAB.length)]!);
  return out.join(' ');
}

function sizeOf(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, name) => n + sizeOf(join(path, name)), 0);
}

/** A home of about `mb` MB, built with svc's own store code. */
function makeHome(mb: number): string {
  const home = mkdtempSync(join(tmpdir(), `svc-bench-backup-${mb}-`));
  removeLater(home);
  const dbBytes = (mb * 1024 * 1024) / 3;
  const { db } = openAndMigrate(join(home, 'svc.db'));
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  let written = 0;
  let k = 0;
  while (written < dbBytes) {
    db.transaction(() => {
      for (let s = 0; s < 50 && written < dbBytes; s++, k++) {
        const id = newId('s', t0 + k * 3_600_000);
        const at = new Date(t0 + k * 3_600_000).toISOString();
        insertSessionRow(db, {
          id,
          title: text(5),
          model_id: null,
          reasoning_effort: 'medium',
          show_reasoning: 1,
          permission_mode: 'interactive',
          working_dir: null,
          created_at: at,
          updated_at: at,
          message_count: 40,
        });
        for (let seq = 1; seq <= 40; seq++) {
          const role = seq % 4 === 3 ? 'tool' : seq % 2 === 1 ? 'user' : 'assistant';
          const content = JSON.stringify(
            role === 'tool'
              ? { tool_call_id: 'c', name: 'terminal', output: text(200) }
              : { text: text(role === 'user' ? 20 : 80) },
          );
          insertMessageRow(db, {
            id: newId('m', t0 + k * 3_600_000 + seq),
            session_id: id,
            seq,
            role,
            content,
            created_at: at,
          });
          // Stored text plus its share of the search index, roughly.
          written += content.length * 2;
        }
      }
    })();
  }
  db.close();
  const uploads = join(home, 'uploads');
  mkdirSync(uploads);
  const left = mb * 1024 * 1024 - sizeOf(join(home, 'svc.db'));
  const FILE = 4 * 1024 * 1024;
  for (let i = 0; i * FILE < left; i++) {
    if (i % 2 === 0) writeFileSync(join(uploads, `photo-${i}.jpg`), randomBytes(FILE));
    else writeFileSync(join(uploads, `notes-${i}.txt`), text(FILE / 6).slice(0, FILE));
  }
  mkdirSync(join(home, 'memory'));
  for (let i = 0; i < 50; i++) writeFileSync(join(home, 'memory', `note-${i}.md`), text(300));
  mkdirSync(join(home, 'skills', 'weather'), { recursive: true });
  writeFileSync(
    join(home, 'skills', 'weather', 'SKILL.md'),
    '---\nname: weather\ndescription: Looks up the weather\n---\nUse curl.\n',
  );
  writeFileSync(join(home, 'config.yml'), 'models: {}\n');
  return home;
}

/** Runs a command; answers its wall time and the peak resident memory it reached (VmHWM). */
function measured(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; peak: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const p = track(spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] }));
    let err = '';
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    let peak = 0;
    // VmHWM only grows, so the last reading before exit is the peak less its last few ms.
    const poll = setInterval(() => {
      peak = Math.max(peak, statusBytes(p.pid!, 'VmHWM') ?? 0);
    }, 5);
    p.once('exit', (code) => {
      clearInterval(poll);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code === 0) resolve({ ms, peak });
      else reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-500)}`));
    });
  });
}

async function benchHome(mb: number): Promise<Record<string, number>> {
  note(`building a ${mb} MB home…`);
  const home = makeHome(mb);
  const size = sizeOf(home);
  const out = mkdtempSync(join(tmpdir(), 'svc-bench-backup-out-'));
  removeLater(out);
  const env = { ...process.env, SVC_HOME: home };
  const create: number[] = [];
  const tar: number[] = [];
  const verify: number[] = [];
  let createPeak = 0;
  let verifyPeak = 0;
  let archive = '';
  for (let r = 0; r < RUNS; r++) {
    // Alternate, so a noisy neighbour weighs on both.
    const dir = join(out, `run-${r}`);
    const c = await measured(
      process.execPath,
      [svcBin, 'backup', 'create', '--to', dir, '--json'],
      env,
    );
    create.push(c.ms);
    createPeak = Math.max(createPeak, c.peak);
    archive = join(dir, readdirSync(dir).find((n) => n.endsWith('.zip'))!);
    const t = await measured('tar', ['-cf', join(out, `home-${r}.tar`), '-C', home, '.'], env);
    tar.push(t.ms);
    const v = await measured(process.execPath, [svcBin, 'backup', 'verify', archive], env);
    verify.push(v.ms);
    verifyPeak = Math.max(verifyPeak, v.peak);
    note(
      `${mb} MB run ${r + 1}: create ${round(c.ms / 1000, 1)} s, tar -cf ${round(t.ms / 1000, 1)} s, verify ${round(v.ms / 1000, 1)} s`,
    );
  }
  spawnSync('sync');
  return {
    home_mb: mib(size),
    archive_mb: mib(statSync(archive).size),
    create_s: round(median(create) / 1000, 2),
    tar_cf_s: round(median(tar) / 1000, 2),
    verify_s: round(median(verify) / 1000, 2),
    create_peak_mb: mib(createPeak),
    verify_peak_mb: mib(verifyPeak),
    create_vs_tar: round(median(create) / median(tar), 2),
  };
}

const small = await benchHome(Math.max(16, Math.round(MB / 10)));
emit({ bench: 'backup', home: 'small', ...small });
const full = await benchHome(MB);
emit({ bench: 'backup', home: 'full', ...full });
emit({
  kind: 'ratios',
  bench: 'backup',
  machine: machine(),
  create_vs_tar_cf: full.create_vs_tar,
  create_mb_per_s: round(full.home_mb! / full.create_s!, 1),
  verify_mb_per_s: round(full.home_mb! / full.verify_s!, 1),
  // Near 1.0: memory does not grow with the home.
  peak_memory_full_vs_small: round(full.create_peak_mb! / small.create_peak_mb!, 2),
});
