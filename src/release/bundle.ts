import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { z } from 'zod';
import { startedByPath } from '../shared/code-root.js';
import { packageRoot } from '../shared/version.js';
import { roleSpecs } from '../supervisor/roles.js';

/*
 * Part of `npm run build`, after tsc: bundles each file svc starts (`svc` itself, every worker
 * role's entry, the files started by path) from tsc's output in dist/src into dist/bundle, same
 * relative paths, shared code in dist/bundle/chunks. A process then loads a few files instead of
 * two hundred modules (zod alone is 95): the supervisor and gateway start about a quarter faster.
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
  await build({
    entryPoints: files.map((f) => ({ in: join(src, f), out: f.replace(/\.js$/, '') })),
    outdir: out,
    bundle: true,
    // Code shared by several entries goes to chunks/. Nothing depends on a file's depth: the
    // package root is found upward and the code root from the tree's name (shared/code-root.ts).
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: deps.filter((d) => !BUNDLED_PACKAGES.has(d)),
    // yaml is CommonJS: its require() calls need a require in an ES module.
    banner: {
      js: "import { createRequire as svcCreateRequire } from 'node:module'; const require = svcCreateRequire(import.meta.url);",
    },
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await bundle(packageRoot);
  process.stdout.write(`bundled ${files.length} entry files into dist/bundle\n`);
}
