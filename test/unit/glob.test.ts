import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { globToRegExp as ruleGlob } from '../../src/workers/agent/permissions/glob.js';
import { globToRegExp as toolGlob } from '../../src/workers/agent/tools/search/glob-pattern.js';

/**
 * One glob grammar (src/shared/glob.ts): a permission rule and the glob tool read a pattern the
 * same way, so a path a rule denies is the path the tool would list. The one documented
 * difference: a rule's trailing `/**` also covers the folder itself.
 */
const table: Array<[string, string, boolean]> = [
  ['/h/**/.env', '/h/.env', true],
  ['/h/**/.env', '/h/a/b/.env', true],
  ['/h/*.env', '/h/a/x.env', false],
  ['/h/**.env', '/h/a/x.env', true], // `**` inside a name spans folders in both
  ['/h/***/x', '/h/a/b/x', true],
  ['/h/id_*', '/h/id_rsa', true],
  ['/h/file?.txt', '/h/file10.txt', false],
  ['/h/[!a]b', '/h/cb', true],
  ['/h/[!a]b', '/h/ab', false],
  ['/h/*.{ts,tsx}', '/h/x.tsx', true],
  ['/h/{a,b{c,d}}/x', '/h/bd/x', true],
  ['/h/a.(b)+', '/h/a.(b)+', true],
  ['/h/\\*', '/h/*', true],
  ['/h/\\*', '/h/x', false],
  ['/h/dist/**', '/h/dist/a/b', true],
];

test('a permission rule and the glob tool agree on every pattern', () => {
  for (const [pattern, path, want] of table) {
    assert.is(ruleGlob(pattern).test(path), want, `rule ${pattern} on ${path}`);
    assert.is(toolGlob(pattern, { braces: true }).test(path), want, `tool ${pattern} on ${path}`);
  }
});

test("a rule's trailing /** covers the folder itself; the tool lists only what is below it", () => {
  assert.ok(
    ruleGlob('/h/.ssh/**').test('/h/.ssh'),
    'rm -r ~/.ssh is judged by a rule on ~/.ssh/**',
  );
  assert.not.ok(toolGlob('/h/.ssh/**').test('/h/.ssh'));
  assert.ok(toolGlob('/h/.ssh/**').test('/h/.ssh/id_rsa'));
});

test.run();
