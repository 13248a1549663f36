import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import {
  ToolRegistry,
  type ToolContext,
  type ToolResult,
} from '../../src/workers/agent/tools/registry.js';
import { commandEnv } from '../../src/workers/agent/tools/shell/shell-process.js';
import { terminalTools } from '../../src/workers/agent/tools/shell/terminal.js';
import { SLACK, waitFor } from '../helpers/server.js';

const home = mkdtempSync(join(tmpdir(), 'svc-terminal-'));
const work = mkdtempSync(join(tmpdir(), 'svc-terminal-work-'));
const paths = resolvePaths({ SVC_HOME: home });
let db: Db;
const PROVIDER_KEY = 'sk-test-provider-key-123456';
const registry = new ToolRegistry(terminalTools({ secrets: () => [PROVIDER_KEY] }));

test.before(() => {
  db = openAndMigrate(paths.db).db;
});
test.after(() => {
  db.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

interface Emitted {
  type: string;
  data: Record<string, unknown>;
}
let calls = 0;
function context(
  opts: { signal?: AbortSignal; sessionId?: string; workingDir?: string | null } = {},
): { ctx: ToolContext; events: Emitted[] } {
  const events: Emitted[] = [];
  const ctx: ToolContext = {
    sessionId: opts.sessionId ?? 's_terminal',
    turnId: 'turn_1',
    callId: `call_${++calls}`,
    workingDir: opts.workingDir === undefined ? work : opts.workingDir,
    signal: opts.signal ?? new AbortController().signal,
    db,
    paths,
    emit: (type, data) => events.push({ type, data }),
  };
  return { ctx, events };
}

function call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  return registry.call(name, JSON.stringify(args), ctx);
}

/** Gone, or a zombie nobody reaped yet (it runs no more code either way). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

const readPid = (file: string) =>
  waitFor(
    () => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || undefined : undefined),
    5000,
    file,
  );

test('runs a command in the working folder: merged output, exit code, live output events', async () => {
  const { ctx, events } = context();
  const r = await call('terminal', { command: 'pwd; echo to-out; echo to-err >&2; exit 3' }, ctx);
  assert.not.ok(r.isError, 'a non-zero exit is reported, not an error');
  assert.match(r.output, work);
  assert.match(r.output, 'to-out');
  assert.match(r.output, 'to-err');
  assert.match(r.output, /\[exit code 3\]$/);
  const live = events.filter((e) => e.type === 'terminal.output');
  assert.ok(
    live.some((e) => e.data.stream === 'stdout' && String(e.data.chunk).includes('to-out')),
    JSON.stringify(events),
  );
  assert.ok(
    live.some((e) => e.data.stream === 'stderr' && String(e.data.chunk).includes('to-err')),
    JSON.stringify(events),
  );
  const ok = await call('terminal', { command: 'true' }, context().ctx);
  assert.is(ok.output, '(no output)\n[exit code 0]');
});

test('a chatty command sends few live events, merged', async () => {
  const { ctx, events } = context();
  const r = await call(
    'terminal',
    { command: 'for i in $(seq 1 60); do echo line $i; sleep 0.01; done' },
    ctx,
  );
  assert.match(r.output, 'line 60');
  const live = events.filter((e) => e.type === 'terminal.output');
  assert.ok(live.length >= 1 && live.length < 30, `${live.length} events`);
  assert.is(live.map((e) => e.data.chunk).join(''), r.output.replace(/\[exit code 0\]$/, ''));
});

test('the working folder defaults to the home folder; a missing one is an error', async () => {
  const r = await call('terminal', { command: 'pwd' }, context({ workingDir: null }).ctx);
  assert.match(r.output, process.env.HOME ?? '/');
  const bad = await call(
    'terminal',
    { command: 'pwd' },
    context({ workingDir: join(work, 'nope') }).ctx,
  );
  assert.ok(bad.isError);
  assert.match(bad.output, 'does not exist');
});

test('the command sees neither the access key nor a provider key', async () => {
  process.env.SVC_ACCESS_KEY = 'access-key-for-svc-only';
  process.env.SOME_PROVIDER_KEY = PROVIDER_KEY;
  process.env.HARMLESS_VALUE = 'visible';
  process.env.AUTH_HEADER = `Bearer ${PROVIDER_KEY}`;
  try {
    const r = await call(
      'terminal',
      {
        command:
          'echo "A=${SVC_ACCESS_KEY:-none} P=${SOME_PROVIDER_KEY:-none} B=${AUTH_HEADER:-none} H=${HARMLESS_VALUE:-none}"; env | grep -c -e access-key-for-svc -e sk-test-provider || true',
      },
      context().ctx,
    );
    assert.match(r.output, 'A=none P=none B=none H=visible');
    assert.match(r.output, /^0$/m);
  } finally {
    delete process.env.SVC_ACCESS_KEY;
    delete process.env.SOME_PROVIDER_KEY;
    delete process.env.HARMLESS_VALUE;
    delete process.env.AUTH_HEADER;
  }
});

test("under an npm script, npm's description of svc's own launch stays out; a user's npm_ variable otherwise stays", () => {
  const launched = {
    PATH: '/usr/bin',
    npm_lifecycle_event: 'start',
    npm_config_cache: '/root/.npm',
    npm_package_name: 'svc',
    INIT_CWD: '/opt/svc',
  };
  assert.equal(commandEnv([], launched), { PATH: '/usr/bin' });
  const shell = { PATH: '/usr/bin', npm_config_registry: 'https://npm.example.internal/' };
  assert.equal(commandEnv([], shell), shell);
});

test('a timeout kills the whole process group, grandchildren included, and keeps the partial output', async () => {
  const child = join(work, 'child.pid');
  const grandchild = join(work, 'grandchild.pid');
  const r = await call(
    'terminal',
    {
      command: `echo before; bash -c 'sleep 100 & echo $! > ${grandchild}; echo $$ > ${child}; wait'; echo never`,
      timeout_seconds: 1,
    },
    context().ctx,
  );
  // Ended by the timeout, not by `wait` (the grandchild sleeps 100 s): no "never", and both gone.
  assert.ok(r.isError);
  assert.match(r.output, 'before');
  assert.not.match(r.output, 'never');
  assert.match(r.output, 'timed out after 1 s');
  const pids = [Number(readFileSync(child, 'utf8')), Number(readFileSync(grandchild, 'utf8'))];
  assert.ok(pids.every((p) => p > 0));
  await waitFor(() => pids.every(gone), 3000, 'child and grandchild to be gone');
});

test('a timeout longer than 600 s is refused with a pointer to background mode', async () => {
  const r = await call('terminal', { command: 'true', timeout_seconds: 601 }, context().ctx);
  assert.ok(r.isError);
  assert.match(r.output, 'background: true');
});

test('an aborted turn stops the command and what it started', async () => {
  const pidFile = join(work, 'aborted.pid');
  const ac = new AbortController();
  const pending = call(
    'terminal',
    { command: `sleep 100 & echo $! > ${pidFile}; wait` },
    context({ signal: ac.signal }).ctx,
  );
  const pid = await readPid(pidFile);
  ac.abort(new Error('interrupted'));
  const r = await pending;
  assert.ok(r.isError);
  assert.match(r.output, 'interrupted');
  await waitFor(() => gone(pid), 3000, 'sleep to be gone');
});

test('processes a command leaves behind are stopped when it ends', async () => {
  const pidFile = join(work, 'left.pid');
  const r = await call(
    'terminal',
    { command: `sleep 100 > /dev/null 2>&1 & echo $! > ${pidFile}; echo done` },
    context().ctx,
  );
  assert.not.ok(r.isError);
  assert.match(r.output, 'done');
  assert.match(r.output, 'left processes running; they were stopped');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  await waitFor(() => gone(pid), 3000, 'the leftover sleep to be gone');
});

test('a large output is capped: head and tail in the result, everything in a private file', async () => {
  const { ctx } = context();
  const r = await call('terminal', { command: 'echo START; seq 1 30000; echo END' }, ctx);
  assert.ok(r.output.length < 30_000, `result is ${r.output.length} characters`);
  assert.match(r.output, /^START\n1\n2\n/);
  assert.match(r.output, /29999\n30000\nEND\n\[exit code 0\]$/);
  const m = /is in (\S+\.log);/.exec(r.output);
  assert.ok(m, r.output.slice(12_000, 12_400));
  const file = m![1]!;
  assert.is(file, join(home, 'tool-output', ctx.sessionId, `${ctx.callId}.log`));
  assert.is(statSync(file).mode & 0o777, 0o600);
  const full = readFileSync(file, 'utf8');
  assert.is(full, `START\n${Array.from({ length: 30000 }, (_, i) => i + 1).join('\n')}\nEND\n`);
});

test('multi-byte characters survive chunk boundaries, in the result and in the file', async () => {
  const { ctx } = context();
  const r = await call(
    'terminal',
    { command: `for i in $(seq 1 4000); do printf 'é✓%.0s' 1 2 3 4 5; done; echo` },
    ctx,
  );
  assert.not.match(r.output, '\uFFFD');
  const file = /is in (\S+\.log);/.exec(r.output)![1]!;
  assert.is(readFileSync(file, 'utf8'), `${'é✓'.repeat(20_000)}\n`);
});

test('background: starts at once, output can be read so far and from an offset, stop kills it', async () => {
  const pidFile = join(work, 'bg.pid');
  const { ctx } = context();
  const r = await call(
    'terminal',
    {
      command: `echo one; sleep 100 & echo $! > ${pidFile}; sleep 0.3; echo two; wait`,
      background: true,
    },
    ctx,
  );
  assert.not.ok(r.isError, r.output);
  const id = /(bg_[0-9a-f]+)/.exec(r.output)![1]!;
  const first = await waitFor(
    async () => {
      const o = await call('terminal_output', { id }, context().ctx);
      return o.output.includes('two') ? o : undefined;
    },
    5000,
    'two',
  );
  const state = JSON.parse(first.output.split('\n')[0]!);
  // Still running after the call answered: it did not wait for the 100 s sleep.
  assert.is(state.status, 'running');
  assert.is(state.exit_code, null);
  assert.ok(first.output.endsWith('one\ntwo\n'), first.output);
  const again = await call(
    'terminal_output',
    { id, since_offset: state.next_offset },
    context().ctx,
  );
  assert.is(again.output.split('\n').slice(1).join(''), '', 'nothing new since the last read');
  const part = await call('terminal_output', { id, since_offset: 4 }, context().ctx);
  assert.ok(part.output.endsWith('\ntwo\n'));
  const other = await call('terminal_output', { id }, context({ sessionId: 's_other' }).ctx);
  assert.ok(other.isError, 'another session cannot read it');
  const pid = await readPid(pidFile);
  const stop = await call('terminal_stop', { id }, context().ctx);
  assert.match(stop.output, `Stopped ${id}`);
  await waitFor(() => gone(pid), 3000, 'the background sleep to be gone');
  const after = await call('terminal_output', { id }, context().ctx);
  assert.is(JSON.parse(after.output.split('\n')[0]!).status, 'stopped');
});

test('background: a finished command reports its exit code', async () => {
  const r = await call(
    'terminal',
    { command: 'echo bye; exit 7', background: true },
    context().ctx,
  );
  const id = /(bg_[0-9a-f]+)/.exec(r.output)![1]!;
  const done = await waitFor(
    async () => {
      const o = await call('terminal_output', { id }, context().ctx);
      return JSON.parse(o.output.split('\n')[0]!).status === 'exited' ? o : undefined;
    },
    5000,
    'exit',
  );
  assert.is(JSON.parse(done.output.split('\n')[0]!).exit_code, 7);
  assert.match(done.output, 'bye');
});

test('background commands die with the worker process', async () => {
  const pidFile = join(work, 'worker-bg.pid');
  const moduleUrl = pathToFileURL(
    join(import.meta.dirname, '../../src/workers/agent/tools/shell/terminal.js'),
  ).href;
  const script = `
    const { terminalTool } = await import(${JSON.stringify(moduleUrl)});
    const tool = terminalTool();
    const ctx = { sessionId: 's', turnId: 't', callId: 'c', workingDir: ${JSON.stringify(work)}, signal: new AbortController().signal, db: null, paths: { home: ${JSON.stringify(home)} }, emit: () => {} };
    await tool.run({ command: 'sleep 100 & echo $! > ${pidFile}; wait', background: true }, ctx);
    const fs = await import('node:fs');
    while (!fs.existsSync(${JSON.stringify(pidFile)}) || fs.readFileSync(${JSON.stringify(pidFile)}, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 20));
    process.exit(0);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 10_000 * SLACK, // a guard against a hang: the child exits as soon as its condition holds
  });
  assert.is(r.status, 0, r.stderr);
  const pid = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(pid > 0);
  await waitFor(() => gone(pid), 2000, 'the background sleep to die with its worker');
});

test.run();
