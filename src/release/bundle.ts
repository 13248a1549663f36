import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { z } from 'zod';
import { startedByPath } from '../shared/code-root.js';
import { BODY_WRAPPER_END, BODY_WRAPPER_START } from './code-loader.js';
import { packageRoot } from '../shared/version.js';
import { roleSpecs } from '../supervisor/roles.js';

/*
 * Part of `npm run build`, after tsc: bundles each file svc starts (`svc` itself, every worker
 * role's entry, the files started by path) from tsc's output in dist/src into dist/bundle, same
 * relative paths. Each is one CommonJS file (`<entry>.body.js`, everything it may load inlined)
 * behind a two-line stub at the entry's own path that runs it through release/code-loader.ts, from
 * V8's code cache once one is kept. A process reads two files instead of two hundred modules (zod
 * alone is 95) or forty ES module chunks, and compiles almost nothing: the gateway reached its
 * first line of its own in about half the time (bench/RESULTS.md, "Start: bundles from the code
 * cache").
 *
 * Packages stay external (loaded from node_modules as before) except the pure-JS ones every start
 * loads; native addons, packages that find files of their own by path (piscina, playwright-core,
 * web-tree-sitter) and big optional ones loaded on first use stay out by construction.
 */
const BUNDLED_PACKAGES = new Set([
  'zod',
  'yaml',
  'sade', // its own mri comes along
  'croner',
  // Only the mcp worker loads it: bundled, its schemas use the one zod of the bundle instead of
  // a second, whole copy from node_modules (3 MB of heap, 8 MB resident: issue 37).
  '@modelcontextprotocol/sdk',
]);

/**
 * zod's index re-exports all of its ~45 locales as a namespace, which no bundler can shake: half
 * of zod's 730 KiB, parsed and run by every process at start. svc's messages are English (zod's
 * default, set by zod itself), so the namespace holds `en` alone here.
 */
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}node_modules${sep}zod${sep}`)
        ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-en' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

const pkgSchema = z.object({ dependencies: z.record(z.string(), z.string()) });

export async function bundle(root: string): Promise<string[]> {
  const deps = Object.keys(
    pkgSchema.parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))).dependencies,
  );
  const src = join(root, 'dist', 'src');
  const out = join(root, 'dist', 'bundle');
  const files = [...Object.values(startedByPath), ...Object.values(roleSpecs).map((r) => r.entry)];
  rmSync(out, { recursive: true, force: true });
  const external = deps.filter((d) => !BUNDLED_PACKAGES.has(d));
  await build({
    entryPoints: files.map((f) => ({ in: join(src, f), out: f.replace(/\.js$/, '.body') })),
    outdir: out,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external,
    // Code run by vm cannot import(): a package's import() of a builtin or a CommonJS package
    // becomes require(); an ES-module-only package goes through importPackage (refused below).
    supported: { 'dynamic-import': false },
    // The body's own file, as the ES module it was written as would see it (code-root.ts, version.ts).
    define: { 'import.meta.url': '__svcModuleUrl' },
    banner: { js: "var __svcModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
  // The loader's own import() is the one real one, lent to the bodies.
  await build({
    entryPoints: [{ in: join(src, 'release', 'code-loader.js'), out: 'code-loader' }],
    outdir: out,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  // The files in it are CommonJS, whatever the package around says.
  writeFileSync(join(out, 'package.json'), '{ "type": "commonjs" }\n');
  for (const f of files) {
    const body = join(out, f.replace(/\.js$/, '.body.js'));
    refuseUnloadable(body, root, external);
    // Wrapped here, as Node's CommonJS loader would wrap it (on the first line, so line numbers
    // hold), so the loader compiles the file's text as read: no second 1.3 MB string per process.
    const wrapped = `${BODY_WRAPPER_START}${readFileSync(body, 'utf8')}${BODY_WRAPPER_END}`;
    writeFileSync(body, wrapped);
    const hash = createHash('sha256').update(wrapped).digest('hex').slice(0, 16);
    const loader = relative(dirname(body), join(out, 'code-loader.js')).split(sep).join('/');
    writeFileSync(
      join(out, f),
      `'use strict';\nrequire('./${loader}').run(module, require('node:path').join(__dirname, ${JSON.stringify(basename(body))}), '${hash}');\n`,
    );
  }
  return files;
}

/**
 * Code the loader cannot run, refused at build time rather than found at a user's first backup:
 * a plain `import()` (code compiled by vm has no module loader: shared/import-package.ts), and a
 * `require` of a package that is an ES module only (Node 20 before 20.19 cannot require one).
 */
export function refuseUnloadable(body: string, root: string, external: string[]): void {
  const code = readFileSync(body, 'utf8');
  const dynamic = /(?<![\w$.])import\(\s*["'`]([^"'`]+)/.exec(code);
  if (dynamic)
    throw new Error(
      `${body}: import("${dynamic[1]}") cannot run in the bundle; use importPackage (shared/import-package.ts)`,
    );
  for (const m of code.matchAll(/\brequire\("([^"]+)"\)/g)) {
    const name = m[1]!;
    if (isBuiltin(name) || !external.some((e) => name === e || name.startsWith(`${e}/`))) continue;
    const pkgName = name.startsWith('@')
      ? name.split('/').slice(0, 2).join('/')
      : name.split('/')[0]!;
    const pkg = esmSchema.parse(
      JSON.parse(readFileSync(join(root, 'node_modules', pkgName, 'package.json'), 'utf8')),
    );
    if (pkg.type === 'module' && !JSON.stringify(pkg.exports ?? {}).includes('"require"'))
      throw new Error(
        `${body}: require("${name}") of an ES-module-only package; load it with importPackage (shared/import-package.ts)`,
      );
  }
}

const esmSchema = z.object({ type: z.string().optional(), exports: z.unknown().optional() });

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await bundle(packageRoot);
  process.stdout.write(`bundled ${files.length} entry files into dist/bundle\n`);
}
