import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot } from '../helpers/server.js';
import { testUnless } from '../helpers/skip.js';

/**
 * `npm ci` as the README says: every dependency with an install script is decided in
 * allowScripts, so npm does not warn. (The README's first chat itself runs in
 * test/e2e/docs-examples.test.ts.)
 */

test('every package with an install script in the lock file is allowed or denied in allowScripts', () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  const withScripts = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
  assert.ok(withScripts.includes('esbuild'));
  const undecided = withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== 'boolean');
  assert.equal(undecided, []);
});

const review = spawnSync('npm', ['install-scripts', 'ls', '--offline'], {
  cwd: repoRoot,
  encoding: 'utf8',
  timeout: 60_000,
});
const noReview =
  review.status !== 0 &&
  /Unknown command|not a valid command/i.test(`${review.stdout}${review.stderr}`)
    ? 'this npm has no install-scripts command'
    : undefined;

testUnless(noReview, 'npm itself finds no install script left undecided', () => {
  const r = review;
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /No packages with unreviewed install scripts/);
});

test.run();
