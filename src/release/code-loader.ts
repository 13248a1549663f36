import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { isMainThread } from 'node:worker_threads';

/*
 * Runs one bundled file (dist/bundle/<entry>.body.js) from V8's code cache: the bundle's stubs,
 * written by bundle.ts, call `run`. Node 20 keeps no compiled code between runs, so every start
 * parsed and compiled a megabyte of JavaScript (zod, yaml, svc) before serving: about a third of
 * the gateway's start. With the cache, V8 takes the compiled functions from disk instead.
 *
 * The cache is written after the first run of each build (a few seconds in, or at exit for a
 * short command), so it holds what a start compiles, not only the top level. It is a file per
 * bundle, Node version and build: `hash` is the body's content hash, written into the stub by the
 * build, since V8 itself only checks the source's length. It lives beside the bundle, as
 * trusted as the code it stands for: never in a shared directory, where anyone could plant code.
 * A cache that cannot be read, is refused by V8 or cannot be written costs speed, never a start.
 * SVC_CODE_CACHE=off compiles from source and keeps nothing (bench/cold-start's uncached runs).
 */

/** A body is a function of what a CommonJS module gets, wrapped at build time (bundle.ts). */
export const BODY_WRAPPER_START = '(function (exports, require, module, __filename, __dirname) { ';
export const BODY_WRAPPER_END = '\n})';

/** The folder beside each body that holds its caches (not copied into a release: build.ts). */
export const CODE_CACHE_DIR = '.code-cache';

/** How long after the start the cache is written: after startup, while the process is idle. */
const WRITE_AFTER_MS = 3000;

/** How a body was compiled: from a kept cache, or from source (a cache is then written). */
export type Compiled = 'from-cache' | 'from-source';

export function run(stub: { exports: unknown }, body: string, hash: string): Compiled {
  globalThis.__svcImport ??= (specifier) => import(specifier);
  const source = readFileSync(body, 'utf8');
  const cacheFile = join(
    dirname(body),
    CODE_CACHE_DIR,
    `${basename(body, '.js')}.${hash}.${process.version}-${process.arch}${flagsTag()}.bin`,
  );
  const off = process.env.SVC_CODE_CACHE === 'off';
  let cachedData: Buffer | undefined;
  try {
    if (!off) cachedData = readFileSync(cacheFile);
  } catch {
    // first run of this build (or the cache cannot be read): compiled from source
  }
  const script = new Script(source, { filename: body, cachedData });
  const compiled = cachedData && !script.cachedDataRejected ? 'from-cache' : 'from-source';
  if (compiled === 'from-source' && !off) keepCacheLater(script, cacheFile);
  const module = { exports: {} as unknown };
  const fn = script.runInThisContext() as (...args: unknown[]) => void;
  fn.call(module.exports, module.exports, createRequire(body), module, body, dirname(body));
  stub.exports = module.exports;
  return compiled;
}

/**
 * V8 refuses a cache made under other V8 flags: the CLI runs with none, the supervisor of a
 * service with a small young generation. Each set of flags keeps its own file, so the two do not
 * overwrite each other's on every start. (FNV-1a: node:crypto alone costs a start 10 ms.)
 */
function flagsTag(): string {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  if (flags === '') return '';
  let h = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) h = Math.imul(h ^ flags.charCodeAt(i), 0x01000193);
  return `-${(h >>> 0).toString(16)}`;
}

function keepCacheLater(script: Script, file: string): void {
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // Several processes may write the same file at once: each renames its own whole copy.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, file);
    } catch {
      // a read-only install or a full disk: the next start compiles from source again
      try {
        rmSync(tmp, { force: true });
      } catch {
        // nothing was written
      }
    }
  };
  setTimeout(write, WRITE_AFTER_MS).unref();
  // A command that ends sooner (svc status) writes it as it exits; a worker thread has no exit event.
  if (isMainThread) process.once('exit', write);
}
