import { pathToFileURL } from 'node:url';
import type { Piscina } from 'piscina';
import { codePath, startedByPath } from '../../../../shared/code-root.js';
import {
  globResultSchema,
  grepResultSchema,
  type GlobResult,
  type GlobTask,
  type GrepResult,
  type GrepTask,
  type SearchTask,
} from './search-types.js';
import { importPackage } from '../../../../shared/import-package.js';

/**
 * glob and grep walk trees and read files synchronously, which would stall the worker's event
 * loop (and its turn's streaming) on a big tree; they run on this small thread pool instead.
 * Created on first use, once per process; idle threads exit on their own.
 */
let pool: Piscina<SearchTask, unknown> | undefined;

/** piscina itself loads with the first search too (1.4 MB resident otherwise kept by every agent). */
async function searchPool(): Promise<Piscina<SearchTask, unknown>> {
  if (pool) return pool;
  const { Piscina: Pool } = await importPackage<typeof import('piscina')>('piscina');
  pool ??= new Pool<SearchTask, unknown>({
    filename: pathToFileURL(codePath(startedByPath.searchWorker)).href,
    minThreads: 0,
    maxThreads: 2,
    idleTimeout: 30_000,
  });
  return pool;
}

/** Runs a search on the pool; aborting the signal ends it (a running thread is terminated). */
export async function runGlob(
  task: Omit<GlobTask, 'op'>,
  signal: AbortSignal,
): Promise<GlobResult> {
  return globResultSchema.parse(
    await (await searchPool()).run({ op: 'glob', ...task }, { signal }),
  );
}

export async function runGrep(
  task: Omit<GrepTask, 'op'>,
  signal: AbortSignal,
): Promise<GrepResult> {
  return grepResultSchema.parse(
    await (await searchPool()).run({ op: 'grep', ...task }, { signal }),
  );
}

/** Stops the pool's threads (tests, shutdown); the next search starts a new pool. */
export async function closeSearchPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}
