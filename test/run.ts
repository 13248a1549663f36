import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { chooseEngine } from '../src/gateway/engine/pick.js';
import { SKIP_MARK } from './helpers/skip.js';

/**
 * Runs every `*.test.js` under dist/test in its own process (a crashed server or a stuck socket
 * in one file cannot sink the others) and adds up uvu's counts.
 * `node dist/test/run.js auth` runs only files whose path contains "auth"; the folders are areas
 * (`unit/`, `e2e/` with real servers, `web/` in Chromium), so `node dist/test/run.js /web/` runs one.
 *
 * Skips are counted, never passed: uvu's `.skip`, and the tests a file leaves out for want of a
 * tool (test/helpers/skip.ts prints a line per skip). The run ends by naming each skip and its
 * reason, then `N passed, N failed, N skipped`. Under CI=true a tool's skip is a failure instead:
 * CI installs every tool, so a missing one means the run did not test what it claims to.
 *
 * One pass, on the engine this runtime serves with: uWS where its native binary loads (Node 20),
 * node:http elsewhere (Node 22, 24). CI runs the suite on Node 20 and on Node 24, so each engine
 * gets every file once. SVC_TEST_BOTH_ENGINES=1 adds, where uWS loads, a second pass of the files
 * that talk to a real gateway with SVC_HTTP_ENGINE=node (both engines on one runtime).
 */
const root = dirname(fileURLToPath(import.meta.url));
/** A file that hangs is cut off; an upgrade round trip on a machine loaded past 15 once needed more than 5 minutes. */
const FILE_TIMEOUT_MS = 10 * 60_000;

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) yield* walk(full);
    else if (name.endsWith('.test.js')) yield full;
  }
}

/** A compiled test whose source is gone (moved or deleted since the last build) is not run. */
const sourceOf = (file: string) =>
  join(root, '../../test', relative(root, file).replace(/\.js$/, '.ts'));

const filters = process.argv.slice(2);
const files = [...walk(root)].filter(
  (f) => existsSync(sourceOf(f)) && (filters.length === 0 || filters.some((x) => f.includes(x))),
);

const ci = process.env.CI === 'true';

/** One thing a file did not run, and why. */
const Skip = z.object({ what: z.string(), reason: z.string() });
type Skip = z.infer<typeof Skip>;

/** The skip lines a file printed (test/helpers/skip.ts); a line that does not parse is a skip too. */
function skipsIn(out: string): Skip[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith(SKIP_MARK))
    .map((l) => {
      try {
        return Skip.parse(JSON.parse(l.slice(SKIP_MARK.length)));
      } catch {
        return { what: 'an unreadable skip line', reason: l };
      }
    });
}

interface FileResult {
  passed: number;
  failed: number;
  /** Tests uvu skipped (`.skip`). */
  skipped: number;
  /** What the file left out for want of a tool, and why. */
  skips: Skip[];
  /** Everything the file printed (stdout and stderr), printed whole when it ends. */
  log: string;
}

function runFile(file: string, env: NodeJS.ProcessEnv = {}): Promise<FileResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', ...env },
    });
    let out = '';
    let log = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      log += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const timer = setTimeout(() => {
      log += `\n${relative(root, file)}: timed out after ${FILE_TIMEOUT_MS / 1000} s\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
      const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? NaN);
      const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? NaN);
      const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
      if (Number.isNaN(total) || Number.isNaN(passed)) {
        log += `${relative(root, file)}: ended (code ${code}) without a test summary; counted as one failure\n`;
        return resolve({ passed: 0, failed: 1, skipped: 0, skips: skipsIn(plain), log });
      }
      // uvu's Total counts the tests that ran; skipped ones are outside it.
      const failed = total - passed + (code !== 0 && total === passed ? 1 : 0);
      resolve({ passed, failed, skipped, skips: skipsIn(plain), log });
    });
  });
}

/**
 * How many files run at once. Each file is its own process with its own servers, homes and ports,
 * so files do not share state. Most of a file's time is waiting (on a child process, a browser, a
 * drain), so one more file than cores keeps the machine busy: three on CI's two cores.
 * SVC_TEST_JOBS=1 runs them one by one.
 */
const JOBS = Math.max(
  1,
  Number.parseInt(process.env.SVC_TEST_JOBS ?? '', 10) || Math.min(3, availableParallelism() + 1),
);

/** A rough cost: a browser file takes longest, then files with a real server, then the rest. */
function weight(file: string): number {
  const text = readFileSync(file, 'utf8');
  if (text.includes('helpers/browser.js')) return 2;
  return talksToGateway(file) ? 1 : 0;
}

/** Files that start a real gateway (svc serve, the turn rig, a browser) or an engine of their own. */
function talksToGateway(file: string): boolean {
  const text = readFileSync(file, 'utf8');
  return ['startServer(', 'startRig(', 'createEngine(', 'helpers/browser.js'].some((m) =>
    text.includes(m),
  );
}

const passes: Array<{ label: string; files: string[]; env: NodeJS.ProcessEnv }> = [
  { label: '', files, env: {} },
];
let first: 'uws' | 'node';
try {
  first = chooseEngine();
} catch (err) {
  process.stdout.write(`${(err as Error).message}\n0 passed, 1 failed, 0 skipped\n`);
  process.exit(1);
}
if (
  process.env.SVC_HTTP_ENGINE === undefined &&
  first === 'uws' &&
  process.env.SVC_TEST_BOTH_ENGINES === '1'
) {
  passes.push({
    label: ' [node engine]',
    files: files.filter(talksToGateway),
    env: { SVC_HTTP_ENGINE: 'node' },
  });
}

let passed = 0;
let failed = 0;
let skipped = 0;
/** Each skip, named at the end: `file: what (reason)`. */
const skipList: string[] = [];
let ran = 0;
const started = Date.now();
/** Each file's wall time, for the list of the slowest at the end (where CI's time goes). */
const durations: Array<{ name: string; seconds: number }> = [];
for (const pass of passes) {
  const engine = pass.env.SVC_HTTP_ENGINE ?? first;
  process.stdout.write(
    `\n## Node ${process.versions.node}, ${engine} engine: ${pass.files.length} files, ${JOBS} at a time\n`,
  );
  // The slow kinds first, so the pass does not end waiting on one browser file started last.
  const queue = [...pass.files].sort((a, b) => weight(b) - weight(a));
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const t0 = Date.now();
      const r = await runFile(file, pass.env);
      const seconds = (Date.now() - t0) / 1000;
      durations.push({ name: `${relative(root, file)}${pass.label}`, seconds });
      // Each file's output in one piece, never interleaved with another's.
      process.stdout.write(
        `\n# ${relative(root, file)}${pass.label} (${seconds.toFixed(1)} s)\n${r.log}`,
      );
      passed += r.passed;
      failed += r.failed;
      skipped += r.skipped;
      const name = `${relative(root, file)}${pass.label}`;
      if (r.skipped > 0) skipList.push(`${name}: ${r.skipped} test(s) marked .skip`);
      for (const s of r.skips) {
        if (ci) failed++;
        else skipped++;
        skipList.push(`${ci ? 'FAILED (CI=true) ' : ''}${name}: ${s.what} (${s.reason})`);
      }
      ran++;
    }
  };
  await Promise.all(Array.from({ length: JOBS }, worker));
}
process.stdout.write(
  `\n${ran} test file runs in ${((Date.now() - started) / 1000).toFixed(1)} s; the slowest:\n${durations
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 12)
    .map((d) => `  ${d.seconds.toFixed(1)} s  ${d.name}`)
    .join('\n')}\n`,
);
if (skipList.length > 0) {
  process.stdout.write(
    `Not run${ci ? ' (under CI=true a test left out for want of a tool fails the run)' : ''}:\n`,
  );
  for (const line of skipList) process.stdout.write(`  ${line}\n`);
}
process.stdout.write(`${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(failed > 0 || files.length === 0 ? 1 : 0);
