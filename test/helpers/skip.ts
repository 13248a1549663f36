import { test } from 'uvu';

/**
 * Tests that cannot run on this machine for want of a tool (Chromium, root and iproute2 for a
 * network namespace, prlimit, a tmpfs mount) are reported as skipped, never passed: a file calls
 * `skipFile(reason)` or `skipTest(name, reason)` instead of registering them. Each call prints one
 * line the runner (test/run.ts) counts as a skip and names, with its reason, at the end. Under
 * CI=true the runner counts it as a failure instead: CI installs every tool, so a skip there means
 * a part of svc went untested.
 */
export const SKIP_MARK = '[svc-test-skipped]';

/** What one skip line carries (JSON after the mark). */
export interface Skip {
  what: string;
  reason: string;
}

function mark(skip: Skip): void {
  process.stdout.write(`${SKIP_MARK} ${JSON.stringify(skip)}\n`);
}

/** Every test in this file is left out (register none of them). */
export function skipFile(reason: string): void {
  mark({ what: 'every test in the file', reason });
}

/** One test is left out (do not register it). */
export function skipTest(name: string, reason: string): void {
  mark({ what: `the test "${name}"`, reason });
}

/** Registers `test(name, fn)`, or, when `missing` says what this machine lacks, skips it so. */
export function testUnless(
  missing: string | undefined,
  name: string,
  fn: () => void | Promise<void>,
) {
  if (missing) skipTest(name, missing);
  else test(name, fn);
}
