import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve, sep } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { packageRoot } from '../shared/version.js';
import {
  archiveName,
  archiveStem,
  CHECKSUMS_FILE,
  checksumLine,
  sha256File,
  SIGNATURE_FILE,
  thisTarget,
} from '../shared/upgrade/release-files.js';
import { signChecksums } from '../shared/upgrade/signature.js';
import { CODE_CACHE_DIR } from './code-loader.js';
import { parseVersion } from '../shared/upgrade/semver.js';

/*
 * `npm run release`: from a built checkout, svc-<version>-<platform>-<arch>-node<major>.tar.gz
 * (bin, the built code, the Web UI, the built-ins and the production dependencies with their
 * native parts for this platform and Node major; nothing else) and checksums.txt, in release/.
 *
 * The archive is made by the system `tar` (through execa, already a dependency): every platform
 * svc runs on ships one (GNU tar, bsdtar on macOS and Windows 10+), and it writes long paths and
 * symlinks correctly, which a hand-written writer would not; no new dependency for a build step.
 */

const lockSchema = z.object({
  packages: z.record(
    z.string(),
    z
      .object({
        dev: z.boolean().optional(),
        devOptional: z.boolean().optional(),
        link: z.boolean().optional(),
      })
      .loose(),
  ),
});

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
  return v;
}

/** The production packages of the lock file that are installed here (optional ones for other platforms are not). */
function productionPackages(root: string): string[] {
  const lock = lockSchema.parse(JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')));
  return Object.entries(lock.packages)
    .filter(
      ([path, p]) =>
        path !== '' &&
        !p.dev &&
        !p.devOptional &&
        !p.link &&
        existsSync(join(root, path, 'package.json')),
    )
    .map(([path]) => path);
}

/**
 * A native binary built or shipped for another platform, arch or Node ABI: uWS names its binaries
 * uws_<platform>_<arch>_<abi>.node, prebuildify packages keep prebuilds/<platform>-<arch>[+arch…].
 */
function foreignBinary(rel: string): boolean {
  const m = /_(darwin|linux|win32)_([a-z0-9]+)_(\d+)\.node$/.exec(rel);
  if (m)
    return !(
      m[1] === process.platform &&
      m[2] === process.arch &&
      m[3] === process.versions.modules
    );
  const parts = rel.split(sep);
  const at = parts.indexOf('prebuilds');
  const entry = at >= 0 ? parts[at + 1] : undefined;
  const p =
    entry === undefined ? null : /^([a-z0-9]+?)(?:musl)?-([a-z0-9+]+?)(?:\.node)?$/.exec(entry);
  return p !== null && !(p[1] === process.platform && p[2]!.split('+').includes(process.arch));
}

/** What a package does not need at run time: its sources and build leftovers for native parts. */
function keepInPackage(pkgDir: string, file: string): boolean {
  const rel = relative(pkgDir, file);
  if (rel === '') return true;
  const first = rel.split(sep)[0];
  if (first === 'node_modules') return false; // nested packages are copied as packages of their own
  if (foreignBinary(rel)) return false;
  if (existsSync(join(pkgDir, 'binding.gyp'))) {
    if (first === 'deps' || first === 'src') return false;
    if (first === 'build')
      return (
        rel === 'build' ||
        rel === join('build', 'Release') ||
        (rel.startsWith(join('build', 'Release') + sep) &&
          rel.endsWith('.node') &&
          !rel.includes('test_extension'))
      );
  }
  return true;
}

function stage(root: string, into: string, version: string): void {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  pkg.version = version;
  delete pkg.scripts; // npm install in an unpacked release must not try to build it again
  delete pkg.devDependencies;
  mkdirSync(into, { recursive: true });
  writeFileSync(join(into, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
  for (const f of ['README.md', 'LICENSE', 'release-key.pem'])
    if (existsSync(join(root, f))) cpSync(join(root, f), join(into, f));
  cpSync(join(root, 'bin'), join(into, 'bin'), { recursive: true });
  cpSync(join(root, 'builtin'), join(into, 'builtin'), { recursive: true });
  cpSync(join(root, 'web', 'dist'), join(into, 'web', 'dist'), { recursive: true });
  const built = join(root, 'dist', 'src');
  cpSync(built, join(into, 'dist', 'src'), {
    recursive: true,
    filter: (f) => !f.endsWith('.map') && !f.startsWith(join(built, 'release')),
  });
  // The bundle each process runs from (bin/svc.js prefers it); dist/src stays as its fallback.
  // Not its code caches: they are this machine's, and the installed release writes its own.
  cpSync(join(root, 'dist', 'bundle'), join(into, 'dist', 'bundle'), {
    recursive: true,
    filter: (f) => basename(f) !== CODE_CACHE_DIR,
  });
  for (const path of productionPackages(root)) {
    const from = join(root, path);
    cpSync(from, join(into, path), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (f) => keepInPackage(from, f),
    });
  }
}

export async function buildRelease(opts: {
  root: string;
  out: string;
  version?: string;
}): Promise<{ archive: string; sha256: string; checksums: string }> {
  const pkgVersion = z
    .object({ version: z.string() })
    .parse(JSON.parse(readFileSync(join(opts.root, 'package.json'), 'utf8'))).version;
  const version = opts.version ?? pkgVersion;
  if (!parseVersion(version))
    throw new Error(`"${version}" is not a version (major.minor.patch, an optional suffix)`);
  for (const needed of [
    join('dist', 'src', 'cli', 'main.js'),
    join('dist', 'bundle', 'cli', 'main.js'),
    join('web', 'dist', 'index.html'),
  ]) {
    if (!existsSync(join(opts.root, needed)))
      throw new Error(`${needed} is missing: run "npm run build" first (npm run release does)`);
  }
  const stem = archiveStem(version, thisTarget());
  const work = mkdtempSync(join(tmpdir(), 'svc-release-'));
  try {
    stage(opts.root, join(work, stem), version);
    mkdirSync(opts.out, { recursive: true });
    const archive = join(opts.out, archiveName(version));
    const partial = `${archive}.partial`;
    await execa('tar', ['-czf', partial, '-C', work, stem]);
    rmSync(archive, { force: true });
    cpSync(partial, archive);
    rmSync(partial, { force: true });
    // checksums.txt covers every archive in the folder, so archives built on other machines can join one release
    const lines: string[] = [];
    let sha256 = '';
    for (const f of readdirSync(opts.out)
      .filter((n) => n.endsWith('.tar.gz'))
      .sort()) {
      const digest = await sha256File(join(opts.out, f));
      if (f === basename(archive)) sha256 = digest;
      lines.push(checksumLine(digest, f));
    }
    const checksums = join(opts.out, CHECKSUMS_FILE);
    writeFileSync(checksums, lines.join(''));
    // SVC_RELEASE_SIGNING_KEY: a PEM Ed25519 private key; its signature goes beside checksums.txt
    const signing = process.env.SVC_RELEASE_SIGNING_KEY;
    if (signing)
      writeFileSync(
        join(opts.out, SIGNATURE_FILE),
        signChecksums(lines.join(''), readFileSync(signing, 'utf8')),
      );
    return { archive, sha256, checksums };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  try {
    const out = resolve(flag('out') ?? join(packageRoot, 'release'));
    const started = Date.now();
    const r = await buildRelease({ root: packageRoot, out, version: flag('version') });
    const mib = (statSync(r.archive).size / 1024 / 1024).toFixed(1);
    console.log(
      `${r.archive} (${mib} MiB, ${((Date.now() - started) / 1000).toFixed(1)} s)\n${r.sha256}  ${basename(r.archive)}\n${r.checksums}`,
    );
  } catch (err) {
    process.stderr.write(`release: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
