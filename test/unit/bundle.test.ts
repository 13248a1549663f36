import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { codeRoot, startedByPath } from '../../src/shared/code-root.js';
import { packageRoot } from '../../src/shared/version.js';
import { roleSpecs } from '../../src/supervisor/roles.js';

// npm test builds first, so dist/bundle is what `svc serve` runs: each file svc starts by path
// must be in it, or a role added without its bundle would fail only when it is first started.
test('every file svc starts by path is in the bundle and in tsc’s output', () => {
  const files = [...Object.values(startedByPath), ...Object.values(roleSpecs).map((r) => r.entry)];
  assert.ok(files.length >= 9, 'the roles and the files started by path');
  for (const rel of files) {
    assert.ok(existsSync(join(packageRoot, 'dist', 'bundle', rel)), `dist/bundle/${rel}`);
    assert.ok(existsSync(join(packageRoot, 'dist', 'src', rel)), `dist/src/${rel}`);
  }
});

test('code run from dist/src starts its children from dist/src; the package root is found', () => {
  assert.is(codeRoot, join(packageRoot, 'dist', 'src'));
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    name: string;
  };
  assert.is(pkg.name, 'svc');
});

test.run();
