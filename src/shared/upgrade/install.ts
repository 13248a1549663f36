import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { UpgradeProgress } from '../protocol/ipc.js';
import { packageRoot, version as runningVersion } from '../version.js';
import { download, fetchText, mib, UpgradeError } from './fetch.js';
import {
  archiveName,
  archiveStem,
  CHECKSUMS_FILE,
  MAX_ARCHIVE_BYTES,
  parseChecksums,
  sha256File,
  SIGNATURE_FILE,
  thisTarget,
} from './release-files.js';
import { checkSignature } from './signature.js';
import type { Release } from './releases.js';
import { tagVersion } from './semver.js';
import { activate, layout, pruneVersions, target } from './versions.js';
import { importPackage } from '../import-package.js';

/** The steps of an upgrade, as `svc upgrade` prints them and /ws (topic server) carries them. */
export type Progress = UpgradeProgress;
export type OnProgress = (p: Progress) => void;

const CHECKSUMS_CAP = 1024 * 1024;
/** Idle time allowed in a download (no bytes for this long ends it). */
const DOWNLOAD_IDLE_MS = 60_000;

/** The version running now: versions/current when an upgrade made one active, else this install. */
export function activeRoot(home: string): string {
  return target(layout(home).current) ?? resolve(packageRoot);
}

/**
 * Downloads the release's archive for this platform, verifies its SHA-256 against checksums.txt,
 * unpacks it into versions/<version> and makes it the active version. Any refusal leaves the
 * versions folder as it was (the download lives in a temp folder removed on the way out).
 */
export async function installRelease(
  home: string,
  release: Release,
  onProgress: OnProgress,
): Promise<{ version: string; root: string }> {
  const version = tagVersion(release.tag_name);
  const name = archiveName(version, thisTarget());
  const asset = release.assets.find((a) => a.name === name);
  if (!asset)
    throw new UpgradeError(
      `release ${release.tag_name} has no archive for this system (${name}); it has ${release.assets.map((a) => a.name).join(', ') || 'no files'}`,
    );
  const sums = release.assets.find((a) => a.name === CHECKSUMS_FILE);
  if (!sums)
    throw new UpgradeError(
      `release ${release.tag_name} has no ${CHECKSUMS_FILE}, so its archive cannot be verified; nothing was changed`,
    );
  if (asset.size > MAX_ARCHIVE_BYTES)
    throw new UpgradeError(
      `${name} is ${mib(asset.size)}, over the ${mib(MAX_ARCHIVE_BYTES)} limit; nothing was changed`,
    );

  const l = layout(home);
  mkdirSync(l.dir, { recursive: true, mode: 0o700 });
  const work = mkdtempSync(join(l.dir, '.incoming-'));
  try {
    const sumsText = await fetchText(sums.browser_download_url, CHECKSUMS_FILE, {
      cap: CHECKSUMS_CAP,
      timeoutMs: 30_000,
    });
    const sigAsset = release.assets.find((a) => a.name === SIGNATURE_FILE);
    const sig = sigAsset
      ? await fetchText(sigAsset.browser_download_url, SIGNATURE_FILE, {
          cap: 4096,
          timeoutMs: 30_000,
        })
      : undefined;
    if (checkSignature(sumsText, sig) === 'verified')
      onProgress({
        stage: 'verifying',
        message: `${CHECKSUMS_FILE} is signed by this version's release key`,
      });
    const checksums = parseChecksums(sumsText);
    const file = join(work, name);
    onProgress({
      stage: 'downloading',
      bytes: 0,
      total: asset.size,
      message: `downloading ${name} (${mib(asset.size)})`,
    });
    await download(asset.browser_download_url, file, name, {
      maxBytes: MAX_ARCHIVE_BYTES,
      expected: asset.size,
      timeoutMs: DOWNLOAD_IDLE_MS,
      onProgress: (bytes, total) => onProgress({ stage: 'downloading', bytes, total }),
    });
    onProgress({ stage: 'verifying', message: `verifying the SHA-256 of ${name}` });
    const actual = await sha256File(file);
    const expected = checksums.get(name);
    if (expected === undefined)
      throw new UpgradeError(
        `${CHECKSUMS_FILE} has no entry for ${name} (expected: none, downloaded: ${actual}); refused, nothing was changed`,
      );
    if (expected !== actual)
      throw new UpgradeError(
        `${name} does not match ${CHECKSUMS_FILE} (expected: ${expected}, downloaded: ${actual}); refused, nothing was changed`,
      );

    onProgress({ stage: 'installing', message: `unpacking ${version}` });
    const root = await unpack(file, archiveStem(version, thisTarget()), work, version);
    const dest = join(l.dir, version);
    const from = activeRoot(home);
    if (resolve(from) === resolve(dest))
      throw new UpgradeError(`${version} is already the active version`);
    if (existsSync(dest)) renameSync(dest, join(work, 'replaced')); // an earlier copy of this version, not active
    renameSync(root, dest);
    activate(l, dest, from);
    pruneVersions(l);
    return { version, root: dest };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Unpacks with the system tar after listing it: every member must sit under the one top folder
 * (no absolute paths, no `..`), and the result must be the version it claims to be.
 */
async function unpack(file: string, stem: string, work: string, version: string): Promise<string> {
  const { execa } = await importPackage<typeof import('execa')>('execa');
  const listed = await execa('tar', ['-tzf', file], { reject: false, maxBuffer: 64 * 1024 * 1024 });
  if (listed.exitCode !== 0)
    throw new UpgradeError(
      `the archive cannot be read (${listed.stderr.split('\n')[0] ?? 'tar failed'}); nothing was changed`,
    );
  for (const member of listed.stdout.split('\n').filter((m) => m !== '')) {
    const clean = member.replace(/\/$/, '');
    if (clean !== stem && !clean.startsWith(`${stem}/`))
      throw new UpgradeError(`the archive holds "${member}" outside its ${stem}/ folder; refused`);
    if (clean.split('/').includes('..'))
      throw new UpgradeError(
        `the archive holds "${member}", which climbs out of its folder; refused`,
      );
  }
  const into = join(work, 'unpacked');
  mkdirSync(into);
  const out = await execa('tar', ['-xzf', file, '-C', into], { reject: false });
  if (out.exitCode !== 0)
    throw new UpgradeError(
      `the archive could not be unpacked (${out.stderr.split('\n')[0] ?? 'tar failed'}); nothing was changed`,
    );
  const root = join(into, stem);
  const pkg = z
    .object({ version: z.string() })
    .safeParse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  if (!pkg.success || pkg.data.version !== version)
    throw new UpgradeError(
      `the archive holds version ${pkg.success ? pkg.data.version : '?'}, not ${version}; refused`,
    );
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js')))
    throw new UpgradeError('the archive has no dist/src/cli/main.js; refused');
  return root;
}

/** --rollback: the previous version becomes active again, and the one left becomes the previous. */
export function rollback(home: string): { from: string; to: string } {
  const l = layout(home);
  const to = target(l.previous);
  if (!to)
    throw new UpgradeError(
      `there is no previous version to return to (${l.previous} does not exist)`,
    );
  const from = activeRoot(home);
  activate(l, to, from);
  return { from: versionAt(from), to: versionAt(to) };
}

export function versionAt(root: string): string {
  try {
    return z
      .object({ version: z.string() })
      .parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))).version;
  } catch {
    return '?';
  }
}

export { runningVersion };
