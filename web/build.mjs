// Builds the Web UI: type-checks web/src, bundles and minifies it with esbuild into web/dist with
// hashed asset names, writes index.html pointing at them, and records the gzipped JavaScript size
// in web/dist/build-stats.json. The build fails when that size is over the budget. Text files are
// also written precompressed (.br and .gz beside each) for the gateway to send by Accept-Encoding.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const BUDGET_GZIP_BYTES = 150 * 1024;
const web = dirname(fileURLToPath(import.meta.url));
const out = join(web, 'dist');
const assets = join(out, 'assets');
const require = createRequire(import.meta.url);

function typecheck() {
  const tsc = require.resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(web, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    console.error('web: the type check failed');
    process.exit(1);
  }
}

async function bundle() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(assets, { recursive: true });
  const result = await esbuild.build({
    entryPoints: { app: join(web, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    // A classic script, not a module: module scripts are fetched with an Origin header even from
    // their own origin, and the gateway refuses non-local origins (a remote visitor's page).
    format: 'iife',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    sourcemap: false,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  return result.metafile;
}

function page(metafile) {
  const outputs = Object.keys(metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js) throw new Error('esbuild produced no JavaScript file');
  const tags = [
    css ? `<link rel="stylesheet" href="/assets/${css}">` : '',
    `<script defer src="/assets/${js}"></script>`,
  ]
    .filter(Boolean)
    .join('\n');
  const html = readFileSync(join(web, 'src', 'index.html'), 'utf8').replace('<!--ASSETS-->', tags);
  writeFileSync(join(out, 'index.html'), html);
  for (const name of ['favicon.svg']) {
    const from = join(web, 'public', name);
    if (existsSync(from)) copyFileSync(from, join(out, name));
  }
}

function stats() {
  const files = readdirSync(assets).map((name) => {
    const body = readFileSync(join(assets, name));
    return {
      name: `assets/${name}`,
      bytes: body.length,
      gzip_bytes: gzipSync(body, { level: 9 }).length,
    };
  });
  const sum = (ext, key) =>
    files.filter((f) => f.name.endsWith(ext)).reduce((n, f) => n + f[key], 0);
  const s = {
    js_bytes: sum('.js', 'bytes'),
    js_gzip_bytes: sum('.js', 'gzip_bytes'),
    css_bytes: sum('.css', 'bytes'),
    css_gzip_bytes: sum('.css', 'gzip_bytes'),
    budget_js_gzip_bytes: BUDGET_GZIP_BYTES,
    files,
  };
  writeFileSync(join(out, 'build-stats.json'), JSON.stringify(s, null, 2) + '\n');
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    `web: ${kb(s.js_gzip_bytes)} gzipped JavaScript (${kb(s.js_bytes)} raw; budget ${kb(BUDGET_GZIP_BYTES)}), ${kb(s.css_gzip_bytes)} gzipped CSS -> web/dist`,
  );
  if (s.js_gzip_bytes > BUDGET_GZIP_BYTES) {
    console.error(
      `web: the JavaScript is over its budget by ${kb(s.js_gzip_bytes - BUDGET_GZIP_BYTES)}`,
    );
    process.exit(1);
  }
}

/** Brotli and gzip copies of every text file, at the highest levels (done once, at build). */
function precompress() {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    );
  for (const file of walk(out)) {
    if (!/\.(js|css|html|svg|json)$/.test(file)) continue;
    const body = readFileSync(file);
    writeFileSync(
      `${file}.br`,
      brotliCompressSync(body, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    );
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  }
}

if (!process.argv.includes('--no-typecheck')) typecheck();
page(await bundle());
stats();
precompress();
