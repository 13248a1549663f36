import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { repoRoot } from '../helpers/server.js';
import { KEY, startRig, type TurnRig } from '../helpers/turns.js';
import { testUnless } from '../helpers/skip.js';

/**
 * What a new user copies: the README's first curl example that adds a model names its base_url
 * and works against a server that speaks the OpenAI protocol elsewhere; and every dependency with
 * an install script is decided in allowScripts, so `npm ci` does not warn.
 */

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The JSON body of the README's first `curl … /api/config/models` line. */
function firstModelExample(): Record<string, unknown> {
  const line = readme
    .split('\n')
    .find((l) => l.startsWith('curl') && l.includes('/api/config/models'));
  assert.ok(line, 'the README adds a model with curl');
  const body = /-d '(\{.*?\})'/.exec(line)?.[1];
  assert.ok(body, `a JSON body in: ${line}`);
  return JSON.parse(body) as Record<string, unknown>;
}

test("the README's first model example names base_url, and that body, pointed at an OpenAI-compatible server, works", async () => {
  const example = firstModelExample();
  assert.type(example.base_url, 'string', 'base_url is in the example');
  assert.ok(URL.canParse(example.base_url as string));
  let rig: TurnRig | undefined;
  try {
    rig = await startRig({ models: {} });
    // The same body, with the address and key of a local OpenAI-compatible server (the fake).
    const created = await api(rig.port, 'POST', '/api/config/models', {
      ...example,
      base_url: rig.fake.baseUrl('openai'),
      api_key: KEY,
    });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const probe = await api(rig.port, 'POST', '/api/config/test', { model_id: example.id });
    assert.is(probe.body.ok, true, JSON.stringify(probe.body));
  } finally {
    await rig?.stop();
  }
});

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
