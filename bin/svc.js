#!/usr/bin/env node
// The launcher. `svc upgrade` installs versions under $SVC_HOME/versions and points
// $SVC_HOME/versions/current at the active one; every install's launcher runs that version, so
// the `svc` on your PATH (and a service file naming this file) always starts the active version.
// With no versions/current (never upgraded), or SVC_IGNORE_VERSIONS=1, it runs this install.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Each install runs its bundle (dist/bundle, one file a process: a faster start) when it has one
// at least as new as tsc's last output (a checkout rebuilt with tsc alone would otherwise run stale
// code), else tsc's output (dist/src).
const here = join(dirname(fileURLToPath(import.meta.url)), '..');
let root = here;
if (process.env.SVC_IGNORE_VERSIONS !== '1') {
  const home = resolve(process.env.SVC_HOME ? process.env.SVC_HOME : join(homedir(), '.svc'));
  try {
    const active = realpathSync(join(home, 'versions', 'current'));
    if (existsSync(join(active, 'dist', 'src', 'cli', 'main.js'))) root = active;
  } catch {
    // no active version recorded: this install is the one
  }
}
const bundled = join(root, 'dist', 'bundle', 'cli', 'main.js');
const tscRun = join(root, 'dist', '.tsbuildinfo');
const current =
  existsSync(bundled) &&
  (!existsSync(tscRun) || statSync(bundled).mtimeMs >= statSync(tscRun).mtimeMs);
const main = current ? bundled : join(root, 'dist', 'src', 'cli', 'main.js');
// `svc serve` forks its gateway first, before svc's own code loads (src/cli/early-gateway.ts).
const early = join(dirname(main), 'early-gateway.js');
if (process.argv[2] === 'serve' && existsSync(early)) {
  const m = await import(pathToFileURL(early).href);
  (m.forkGatewayEarly ?? m.default.forkGatewayEarly)(process.argv);
}
await import(pathToFileURL(main).href);
