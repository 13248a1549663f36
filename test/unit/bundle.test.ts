import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { codeRoot, startedByPath } from '../../src/shared/code-root.js';
import { packageRoot } from '../../src/shared/version.js';
import { refuseUnloadable } from '../../src/release/bundle.js';
import { BODY_WRAPPER_END, BODY_WRAPPER_START } from '../../src/release/code-loader.js';
import { roleSpecs } from '../../src/supervisor/roles.js';
import { tmpHome } from '../helpers/server.js';

const bundleDir = join(packageRoot, 'dist', 'bundle');
const files = [...Object.values(startedByPath), ...Object.values(roleSpecs).map((r) => r.entry)];

// npm test builds first, so dist/bundle is what `svc serve` runs: each file svc starts by path
// must be in it, or a role added without its bundle would fail only when it is first started.
test('every file svc starts by path is in the bundle and in tsc’s output', () => {
  assert.ok(files.length >= 9, 'the roles and the files started by path');
  for (const rel of files) {
    assert.ok(existsSync(join(bundleDir, rel)), `dist/bundle/${rel}`);
    assert.ok(existsSync(join(packageRoot, 'dist', 'src', rel)), `dist/src/${rel}`);
  }
});

// V8 checks only a cache's source length: the hash in the stub is what keeps a cache of an older
// build of the same length from running in place of this one.
test('each stub runs its own body under the hash of that body’s content', () => {
  for (const rel of files) {
    const stub = readFileSync(join(bundleDir, rel), 'utf8');
    const m = /join\(__dirname, "([^"]+)"\), '([0-9a-f]{16})'\)/.exec(stub);
    assert.ok(m, `dist/bundle/${rel} names a body and a hash:\n${stub}`);
    const body = readFileSync(join(bundleDir, rel, '..', m[1]!));
    assert.is(m[2], createHash('sha256').update(body).digest('hex').slice(0, 16), rel);
  }
});

test('code run from dist/src starts its children from dist/src; the package root is found', () => {
  assert.is(codeRoot, join(packageRoot, 'dist', 'src'));
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    name: string;
  };
  assert.is(pkg.name, 'svc');
});

/** Runs `body` through the built loader in a process of its own (the cache is written at its exit). */
function runBody(
  body: string,
  hash: string,
  v8Flags: string[] = [],
  env: NodeJS.ProcessEnv = {},
): { how: string; answer: unknown; stderr: string } {
  const script = `const m = {}; const how = require(${JSON.stringify(join(bundleDir, 'code-loader.js'))}).run(m, ${JSON.stringify(body)}, ${JSON.stringify(hash)});
m.exports.answer().then((answer) => console.log(JSON.stringify({ how, answer })));`;
  const r = spawnSync(process.execPath, [...v8Flags, '-e', script], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.is(r.status, 0, r.stderr);
  return { ...(JSON.parse(r.stdout) as { how: string; answer: unknown }), stderr: r.stderr };
}

test('a body runs from its code cache once kept; a stale, broken or unwritable cache only costs a compile', () => {
  const dir = tmpHome('svc-code-cache-');
  try {
    const body = join(dir, 'main.body.js');
    // What bundled code does: CommonJS, and import() through the loader (shared/import-package.ts).
    writeFileSync(
      body,
      `${BODY_WRAPPER_START}module.exports = { answer: async () => [6 * 7, typeof (await globalThis.__svcImport('node:os')).cpus] };${BODY_WRAPPER_END}`,
    );
    const caches = () => readdirSync(join(dir, '.code-cache'));
    const off = { SVC_CODE_CACHE: 'off' };
    assert.equal(runBody(body, 'aaaa', [], off).how, 'from-source');
    assert.is(existsSync(join(dir, '.code-cache')), false, 'SVC_CODE_CACHE=off keeps nothing');
    assert.equal(runBody(body, 'aaaa').how, 'from-source');
    assert.equal(caches().length, 1, 'written at exit');
    assert.equal(runBody(body, 'aaaa', [], off).how, 'from-source', 'nor reads one');
    const kept = runBody(body, 'aaaa');
    assert.equal(kept, { how: 'from-cache', answer: [42, 'function'], stderr: '' });

    // V8 refuses a cache made under other flags (the service's supervisor runs with some, the
    // CLI with none): each keeps its own, so neither rewrites the other's on every start.
    const small = ['--max-semi-space-size=1'];
    assert.is(runBody(body, 'aaaa', small).how, 'from-source');
    assert.is(runBody(body, 'aaaa', small).how, 'from-cache');
    assert.is(runBody(body, 'aaaa').how, 'from-cache');
    assert.is(caches().length, 2);
    rmSync(join(dir, '.code-cache', caches().find((f) => /aaaa\.v[\d.]+-\w+-/.test(f))!));

    // Another build of the same length: another hash, so the old cache is not taken for it.
    assert.is(runBody(body, 'bbbb').how, 'from-source');
    assert.is(caches().length, 2);

    // A cache V8 refuses: compiled from source, and a good one written in its place.
    const file = join(dir, '.code-cache', caches().find((f) => f.includes('.aaaa.'))!);
    writeFileSync(file, Buffer.alloc(4096, 7));
    assert.equal(runBody(body, 'aaaa'), {
      how: 'from-source',
      answer: [42, 'function'],
      stderr: '',
    });
    assert.is(runBody(body, 'aaaa').how, 'from-cache');

    // Nowhere to write (the folder's name taken by a file): it runs, says nothing, keeps nothing.
    rmSync(join(dir, '.code-cache'), { recursive: true });
    writeFileSync(join(dir, '.code-cache'), '');
    assert.equal(runBody(body, 'aaaa'), {
      how: 'from-source',
      answer: [42, 'function'],
      stderr: '',
    });
    assert.is(runBody(body, 'aaaa').how, 'from-source');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the build refuses a body the loader could not run', () => {
  const dir = tmpHome('svc-bundle-refuse-');
  try {
    mkdirSync(join(dir, 'node_modules', 'esm-only'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'esm-only', 'package.json'),
      JSON.stringify({ name: 'esm-only', type: 'module', exports: { '.': './index.js' } }),
    );
    mkdirSync(join(dir, 'node_modules', 'dual'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'dual', 'package.json'),
      JSON.stringify({
        name: 'dual',
        type: 'module',
        exports: { import: './a.js', require: './b.cjs' },
      }),
    );
    const body = join(dir, 'main.body.js');
    const check = (code: string) => {
      writeFileSync(body, code);
      refuseUnloadable(body, dir, ['esm-only', 'dual']);
    };
    check('require("node:fs"); require("buffer"); require("dual"); require("./own.js");');
    assert.throws(() => check('const m = import("esm-only");'), /importPackage/);
    assert.throws(() => check('const m = require("esm-only");'), /ES-module-only/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
