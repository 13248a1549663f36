import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startMcpHttpServer, type McpHttpFixture } from '../fixtures/mcp-server.js';
import { docFiles, examplesIn, RUNNABLE, type Example } from '../helpers/docs.js';
import { repoRoot, SLACK, svcBin } from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';
import { KEY, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Every example the docs mark to run (`<!-- test -->` shell, `<!-- test: node -->` JavaScript,
 * `<!-- test: ts -->` TypeScript) runs as written against one real `svc serve`, in the order a
 * reader meets them (README first, then docs/), with the fake provider standing in for the model
 * and a real MCP server for the one the MCP page adds. Only addresses and keys are put in (the
 * table below); `curl` fails on any HTTP error, so an example that answers 4xx fails here. The
 * README's first chat adds the model `main` the later examples use.
 */

const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const missing = ['curl', 'jq', 'git'].filter((c) => !have(c));

const examples: Example[] = docFiles()
  .flatMap(examplesIn)
  .filter((e) => RUNNABLE.has(e.kind));

/**
 * Run in bash before each example: `svc` and `npx svc` are this checkout's, `npx <tool>` is the
 * checkout's dev dependency (never a download), and curl stops at an HTTP error and prints it
 * (`--fail-with-body`) instead of passing it on.
 */
const PRELUDE = `
svc() { node "$SVC_BIN" "$@"; }
npx() {
  if [ "$1" = svc ]; then shift; node "$SVC_BIN" "$@"
  elif [ -x "$REPO/node_modules/.bin/$1" ]; then local b="$1"; shift; "$REPO/node_modules/.bin/$b" "$@"
  else echo "npx $1: not a dependency of svc (the examples download nothing)" >&2; return 1; fi
}
curl() { command curl -sS --fail-with-body --max-time "$CURL_MAX_TIME" "$@"; }
`;

let rig: TurnRig | undefined;
let mcp: McpHttpFixture | undefined;
/** Outside /tmp: a sandboxed command sees a private /tmp, and a workflow example runs git here. */
let cwd: string | undefined;

/** What the docs say, and what it is here. */
function substitutions(): Array<[string, string]> {
  if (!rig || !mcp) throw new Error('not started');
  const here = `127.0.0.1:${rig.port}`;
  return [
    ['127.0.0.1:8088', here],
    ['localhost:8088', here],
    ['my-host:8088', here],
    ['~/.svc/', `${rig.server.home}/`],
    ['https://api.openai.com/v1', rig.fake.baseUrl('openai')],
    ['"sk-…"', JSON.stringify(KEY)],
    ['http://127.0.0.1:3000/mcp', mcp.url],
  ];
}

/**
 * A TypeScript example is written beside what the examples before it made (the generated API
 * types), type-checked strictly with the checkout's tsc, then run.
 */
function compileAndRun(e: Example, code: string): string {
  const name = `example-${e.line}`;
  writeFileSync(join(cwd!, `${name}.ts`), code);
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = '--strict --target es2022 --module nodenext --moduleResolution nodenext';
  return `node ${tsc} ${flags} --skipLibCheck --outDir out ${name}.ts && node out/${name}.js`;
}

/** Runs one example in bash; the fake provider and the MCP server answer from this process meanwhile. */
async function run(e: Example): Promise<void> {
  let code = e.code;
  for (const [from, to] of substitutions()) code = code.split(from).join(to);
  // Node 20 has WebSocket behind a flag; 22 and later have it on.
  const ws = Number(process.versions.node.split('.')[0]) < 22 ? ['--experimental-websocket'] : [];
  const [cmd, args] =
    e.kind === 'node'
      ? [process.execPath, [...ws, '--input-type=module', '-e', code]]
      : e.kind === 'ts'
        ? ['bash', ['-euo', 'pipefail', '-c', compileAndRun(e, code)]]
        : ['bash', ['-euo', 'pipefail', '-c', PRELUDE + code]];
  const child = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      SVC_HOME: rig!.server.home,
      SVC_BIN: svcBin,
      REPO: repoRoot,
      CURL_MAX_TIME: String(30 * SLACK),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000 * SLACK);
  const [status, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s])),
  );
  clearTimeout(timer);
  assert.is(
    status,
    0,
    `${e.file}:${e.line} failed (exit ${status}${signal ? `, ${signal}` : ''}):\n${e.code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
  );
}

if (missing.length > 0) {
  skipFile(`${missing.join(', ')} not installed (the docs' examples use them)`);
} else {
  test.before(async () => {
    mcp = await startMcpHttpServer();
    rig = await startRig({ models: {} });
    cwd = mkdtempSync(join('/var/tmp', 'svc-docs-examples-'));
    // A TypeScript example imports the API client from the checkout's dependencies, as an ES module.
    symlinkSync(join(repoRoot, 'node_modules'), join(cwd, 'node_modules'));
    writeFileSync(join(cwd, 'package.json'), '{"type":"module"}\n');
  });
  test.after(async () => {
    await rig?.stop();
    await mcp?.close();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  test('the docs mark their examples: the README first chat, and more in docs/', () => {
    assert.ok(examples[0]?.file === 'README.md', 'the README has a runnable first chat');
    assert.ok(examples.length >= 8, `runnable examples: ${examples.length}`);
  });

  for (const e of examples) test(`${e.file}:${e.line} runs as written`, () => run(e));
}

test.run();
