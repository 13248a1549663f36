import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hasBuiltinVerdict } from '../../src/workers/agent/permissions/defaults.js';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { http, waitFor } from '../helpers/server.js';
import {
  connectWs,
  ofTurn,
  startRig,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * The agent's hands end to end: the fake provider asks for real tool calls, the real `svc serve`
 * runs them in the agent worker (through the permission gate, in an interactive session, where
 * none of these may ask), and the test checks what a user would see: the tool results and
 * events over /ws, the files on disk, the trash, /api/tasks, /api/memories and the artifacts.
 */

let rig: TurnRig;
let root = '';
/** The session's working folder. */
let work = '';
let sessionId = '';
let ws: WsClient;

test.before(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-hands-e2e-'));
  work = join(root, 'work');
  mkdirSync(work);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  const s = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: 'interactive',
  });
  assert.is(s.status, 201, JSON.stringify(s.body));
  sessionId = s.body.id;
  ws = await connectWs(rig.port, [`session:${sessionId}`, 'tasks']);
});

test.after(async () => {
  ws?.close();
  await rig?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

// ---- driving the model ----

interface Call {
  name: string;
  args: Record<string, unknown>;
}

let nextCall = 0;

interface Turn {
  turnId: string;
  events: WsEvent[];
  /** Tool results by call id, in the order of the calls. */
  results: Array<{ call_id: string; name: string; output: string; is_error: boolean }>;
  /** Events of one call (terminal.output, artifact.updated, approval.*), by call id. */
  ofCall: (callId: string) => WsEvent[];
}

/** Scripts for a turn: one model step per entry of `steps` (each with its tool calls), then a text reply. */
function scripts(steps: Call[][]): { replies: FakeReply[]; ids: string[] } {
  const ids: string[] = [];
  const replies = steps.map((calls) => ({
    parts: calls.map((c) => {
      const id = `call${++nextCall}`;
      ids.push(id);
      return { toolCall: { id, name: c.name, arguments: [JSON.stringify(c.args)] } };
    }),
    stop: 'tool_use' as const,
  }));
  return { replies: [...replies, textReply('done')], ids };
}

function collect(turnId: string, ids: string[]): Turn {
  const events = ofTurn(ws.events, turnId);
  const results = ids.map((id) => {
    const r = events.find((e) => e.type === 'turn.tool_result' && e.data.call_id === id);
    assert.ok(r, `a tool result for ${id}; events: ${events.map((e) => e.type).join(',')}`);
    return r!.data;
  });
  return { turnId, events, results, ofCall: (id) => events.filter((e) => e.data?.call_id === id) };
}

const endOf = (turnId: string, timeoutMs = 15_000) =>
  ws.waitEvent(
    (e) =>
      e.data?.turn_id === turnId &&
      ['turn.completed', 'turn.failed', 'turn.interrupted'].includes(e.type),
    `the end of ${turnId}`,
    timeoutMs,
  );

/** Runs one turn through POST /api/chat/:id/turn (waiting), then checks it completed and used every script. */
async function runTurn(steps: Call[][]): Promise<Turn> {
  const { replies, ids } = scripts(steps);
  rig.fake.enqueue(...replies);
  const res = await api(rig.port, 'POST', `/api/chat/${sessionId}/turn`, {
    message: 'go',
    attachments: [],
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.status, 'completed', JSON.stringify(res.body));
  const end = await endOf(res.body.turn_id);
  assert.is(end.type, 'turn.completed');
  assert.is(rig.fake.pending, 0, 'the model used every scripted step');
  const turn = collect(res.body.turn_id, ids);
  assert.not.ok(
    turn.events.some((e) => e.type === 'approval.requested'),
    'nothing here asks in an interactive session',
  );
  // What the model was told matches what the clients saw.
  const toolMessages = (res.body.messages as any[]).filter((m) => m.role === 'tool');
  assert.equal(
    toolMessages.map((m) => [m.content.tool_call_id, m.content.output]),
    turn.results.map((r) => [r.call_id, r.output]),
  );
  return turn;
}

/** Starts a turn without waiting (to watch it while it runs); answers its turn id. */
async function startTurn(steps: Call[][]): Promise<{ turnId: string; ids: string[] }> {
  const { replies, ids } = scripts(steps);
  rig.fake.enqueue(...replies);
  const res = await api(rig.port, 'POST', `/api/chat/${sessionId}/turn?wait=false`, {
    message: 'go',
    attachments: [],
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  return { turnId: res.body.turn_id, ids };
}

const ok = (r: { output: string; is_error: boolean }, re: RegExp, what: string) => {
  assert.is(r.is_error, false, `${what} succeeded: ${r.output}`);
  assert.match(r.output, re, what);
};

// ---- processes (Linux /proc) ----

interface Proc {
  pid: number;
  state: string;
  pgrp: number;
  argv: string[];
}

/** Live (not zombie) processes whose command line contains `marker`. */
function procsWith(marker: string): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!argv.join(' ').includes(marker)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] === 'Z' || f[0] === 'X') continue;
      out.push({ pid: Number(name), state: f[0]!, pgrp: Number(f[2]), argv });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const unique = () => `${Date.now() % 100000}${Math.floor(Math.random() * 1e6)}`;

// ---- tests ----

test('GET /api/tools lists every built-in tool with an object schema', async () => {
  const res = await api(rig.port, 'GET', '/api/tools');
  assert.is(res.status, 200);
  const items = res.body.items as Array<{ name: string; description: string; parameters: any }>;
  const want = [
    'read_file',
    'write_file',
    'edit_file',
    'delete_file',
    'glob',
    'grep',
    'web_fetch',
    'terminal',
    'terminal_output',
    'terminal_stop',
    'task_create',
    'task_update',
    'task_list',
    'memory_write',
    'memory_search',
    'restart_server',
    'current_time',
    'search_history',
    'update_goal',
    'skill',
    'run_workflow',
  ];
  assert.equal(items.map((t) => t.name).sort(), [...want].sort());
  // A new tool's author decides its default: none is left to the unknown-tool `ask` by omission.
  assert.equal(
    items.map((t) => t.name).filter((n) => !hasBuiltinVerdict(n)),
    [],
    'every built-in tool has its own entry in the default-verdict table',
  );
  for (const t of items) {
    assert.ok(t.description.length > 20, `${t.name} has a description`);
    assert.is(t.parameters.type, 'object', `${t.name} parameters are an object schema`);
  }
  const terminal = items.find((t) => t.name === 'terminal')!;
  assert.ok(terminal.parameters.required.includes('command'));
  assert.ok(
    'background' in terminal.parameters.properties &&
      'timeout_seconds' in terminal.parameters.properties,
  );
});

let artifactPath = '';

test('write_file, read_file, edit_file, glob, grep, delete_file, then restore from the trash', async () => {
  const file = join(work, 'notes', 'plan.txt');
  const t = await runTurn([
    [{ name: 'write_file', args: { path: 'notes/plan.txt', content: 'alpha\nbeta\n' } }],
    [{ name: 'read_file', args: { path: 'notes/plan.txt' } }],
    [
      {
        name: 'edit_file',
        args: { path: 'notes/plan.txt', old_text: 'beta', new_text: 'gamma-e2e' },
      },
    ],
    [{ name: 'glob', args: { pattern: '**/*.txt' } }],
    [{ name: 'grep', args: { pattern: 'gamma-\\w+' } }],
    [{ name: 'delete_file', args: { path: 'notes/plan.txt' } }],
  ]);
  const [write, read, edit, glob, grep, del] = t.results;
  ok(write!, /^Created notes\/plan\.txt \(/, 'write_file');
  const artifacts = t.events.filter((e) => e.type === 'artifact.updated');
  // write_file and edit_file each wrote the file: two updates of one artifact.
  assert.equal(
    artifacts.map((e) => e.data.artifact.path),
    [file, file],
    'writing a file publishes artifact.updated',
  );
  assert.is(artifacts[0]!.data.artifact.id, artifacts[1]!.data.artifact.id);
  assert.is(artifacts[1]!.data.artifact.size, Buffer.byteLength('alpha\ngamma-e2e\n'));
  const writeAt = t.events.findIndex(
    (e) => e.type === 'turn.tool_result' && e.data.call_id === write!.call_id,
  );
  assert.is(
    t.events[writeAt - 1]?.type,
    'artifact.updated',
    "the artifact is announced right before the write's result",
  );
  ok(
    read!,
    /^\s+1\talpha\n\s+2\tbeta\n\[end of file: 2 lines\]$/,
    'read_file shows numbered lines',
  );
  ok(
    edit!,
    /^Edited notes\/plan\.txt: replaced 1 occurrence \(line 2\)\. The previous content is in the trash \(\S+\)\.$/,
    'edit_file',
  );
  ok(glob!, /^notes\/plan\.txt$/m, 'glob finds the file');
  ok(grep!, /^notes\/plan\.txt:2:gamma-e2e$/m, 'grep finds the edited line');
  ok(
    del!,
    /^Moved notes\/plan\.txt to the trash \((\S+)\); it can be restored from there\.$/,
    'delete_file',
  );
  assert.not.ok(existsSync(file), 'the file is gone from its folder');
  artifactPath = file;

  const trashId = /to the trash \((\S+)\)/.exec(del!.output)![1]!;
  const trash = await api(rig.port, 'GET', '/api/trash');
  const item = (trash.body.items as any[]).find((i) => i.id === trashId);
  assert.ok(item, 'the deleted file is listed in the trash');
  assert.equal([item.kind, item.original], ['file', file]);
  // The edit's previous content is in the trash too.
  const editTrash = /in the trash \((\S+)\)/.exec(edit!.output)![1]!;
  assert.ok(
    (trash.body.items as any[]).some((i) => i.id === editTrash && i.original === file),
    'the pre-edit content is in the trash',
  );

  const restored = await api(rig.port, 'POST', `/api/trash/${trashId}/restore`, {});
  assert.is(restored.status, 200, JSON.stringify(restored.body));
  assert.is(restored.body.restored_to, file);
  assert.is(
    readFileSync(file, 'utf8'),
    'alpha\ngamma-e2e\n',
    'the restored file has the content it had when deleted',
  );
  const after = await api(rig.port, 'GET', '/api/trash');
  assert.not.ok(
    (after.body.items as any[]).some((i) => i.id === trashId),
    'a restored item leaves the trash',
  );
});

test('overwriting a file the agent read keeps the old content in the trash; restoring gives it back', async () => {
  const file = join(work, 'config.ini');
  writeFileSync(file, 'mode=old\n');
  const t = await runTurn([
    [{ name: 'write_file', args: { path: 'config.ini', content: 'mode=unread\n' } }],
    [{ name: 'read_file', args: { path: 'config.ini' } }],
    [{ name: 'write_file', args: { path: 'config.ini', content: 'mode=new\n' } }],
  ]);
  const [blind, , overwrite] = t.results;
  assert.is(blind!.is_error, true, 'a file that exists must be read first');
  assert.match(blind!.output, /already exists and has not been read in this session/);
  ok(
    overwrite!,
    /^Overwrote config\.ini \(.*\)\. The previous content is in the trash \((\S+)\)\.$/,
    'write_file over a read file',
  );
  assert.is(readFileSync(file, 'utf8'), 'mode=new\n');

  const trashId = /in the trash \((\S+)\)/.exec(overwrite!.output)![1]!;
  const restored = await api(rig.port, 'POST', `/api/trash/${trashId}/restore`, {});
  assert.is(restored.status, 200, JSON.stringify(restored.body));
  assert.is(readFileSync(file, 'utf8'), 'mode=old\n', 'the old content is back');
  // The undo itself kept what it replaced: nothing is lost either way.
  const backup = restored.body.backed_up_as as string;
  assert.type(backup, 'string');
  const trash = await api(rig.port, 'GET', '/api/trash');
  assert.ok(
    (trash.body.items as any[]).some((i) => i.id === backup && i.original === file),
    'the replaced new content is in the trash',
  );
});

test('terminal runs in the working folder and streams its output live as terminal.output', async () => {
  const { turnId, ids } = await startTurn([
    [{ name: 'terminal', args: { command: 'echo live-one; pwd; sleep 1; echo live-two' } }],
  ]);
  const callId = ids[0]!;
  const first = await ws.waitEvent(
    (e) => e.type === 'terminal.output' && e.data.call_id === callId,
    'live terminal output',
    10_000,
  );
  assert.is(first.data.turn_id, turnId);
  assert.is(first.data.stream, 'stdout');
  assert.match(first.data.chunk, /live-one/);
  assert.not.match(
    first.data.chunk,
    /live-two/,
    'the first part arrives before the command printed the rest',
  );
  assert.not.ok(
    ws.events.some((e) => e.type === 'turn.tool_result' && e.data.call_id === callId),
    'the output arrived while the command was still running',
  );
  await endOf(turnId);
  const t = collect(turnId, ids);
  const r = t.results[0]!;
  ok(r, /^live-one\n/, 'terminal');
  assert.is(r.output, `live-one\n${work}\nlive-two\n[exit code 0]`);
  const live = t.ofCall(callId).filter((e) => e.type === 'terminal.output');
  assert.ok(live.length >= 2, `output came in more than one event (${live.length})`);
  assert.is(
    live.map((e) => e.data.chunk).join(''),
    `live-one\n${work}\nlive-two\n`,
    'the live events add up to the whole output',
  );
});

test('terminal: a failing command reports its exit code as a result the model can read', async () => {
  const t = await runTurn([[{ name: 'terminal', args: { command: 'echo oops >&2; exit 3' } }]]);
  const r = t.results[0]!;
  assert.is(r.output, 'oops\n[exit code 3]');
  const live = t.ofCall(r.call_id).filter((e) => e.type === 'terminal.output');
  assert.equal(
    live.map((e) => [e.data.stream, e.data.chunk]),
    [['stderr', 'oops\n']],
  );
});

test('terminal in the background, then terminal_output and terminal_stop', async () => {
  const marker = `30.${unique()}`;
  const t1 = await runTurn([
    [{ name: 'terminal', args: { command: `echo bg-ready; sleep ${marker}`, background: true } }],
  ]);
  ok(
    t1.results[0]!,
    /^Started in the background as (bg_[0-9a-f]+) \(pid \d+\)/,
    'terminal background',
  );
  const id = /as (bg_[0-9a-f]+)/.exec(t1.results[0]!.output)![1]!;
  // It keeps running after the turn ended.
  const running = await waitFor(
    () => procsWith(`sleep ${marker}`).find((p) => p.argv[0] === 'sleep'),
    5000,
    'the background sleep',
  );
  assert.ok(running.pid > 0);

  const t2 = await runTurn([
    [{ name: 'terminal_output', args: { id } }],
    [{ name: 'terminal_stop', args: { id } }],
    [{ name: 'terminal_output', args: { id } }],
  ]);
  const [out, stop, after] = t2.results;
  ok(out!, /^\{.*\}\nbg-ready\n$/, 'terminal_output');
  const state = JSON.parse(out!.output.split('\n')[0]!);
  assert.equal([state.id, state.status, state.exit_code], [id, 'running', null]);
  ok(stop!, new RegExp(`^Stopped ${id} \\[ended by signal SIG(TERM|KILL)\\]\\.$`), 'terminal_stop');
  assert.is(JSON.parse(after!.output.split('\n')[0]!).status, 'stopped');
  assert.equal(
    procsWith(`sleep ${marker}`),
    [],
    'nothing of the background command is left running',
  );
});

test('terminal timeout stops the command and every process of its group', async () => {
  const marker = `30.${unique()}`;
  const { turnId, ids } = await startTurn([
    [
      {
        name: 'terminal',
        args: { command: `sh -c 'sleep ${marker} & sleep ${marker}'`, timeout_seconds: 1 },
      },
    ],
  ]);
  const sleeping = await waitFor(
    () => {
      const s = procsWith(`sleep ${marker}`).filter((p) => p.argv[0] === 'sleep');
      return s.length === 2 ? s : undefined;
    },
    5000,
    'both sleeps running',
  );
  assert.is(sleeping[0]!.pgrp, sleeping[1]!.pgrp, "the background sleep is in the command's group");
  assert.is.not(sleeping[0]!.pgrp, process.pid);
  await endOf(turnId);
  const r = collect(turnId, ids).results[0]!;
  assert.is(r.is_error, true);
  assert.match(
    r.output,
    /\[timed out after 1 s: the command and every process it started were stopped/,
  );
  assert.equal(
    procsWith(`sleep ${marker}`),
    [],
    'no sleep of the group is left (the one started with & included)',
  );
  for (const p of sleeping)
    assert.not.ok(
      existsSync(`/proc/${p.pid}`) && !/\) [ZX] /.test(readFileSync(`/proc/${p.pid}/stat`, 'utf8')),
      `pid ${p.pid} is gone`,
    );
});

test('web_fetch refuses the cloud metadata address and loopback, with a reason, without connecting', async () => {
  const before = rig.fake.requests.length;
  const t = await runTurn([
    [{ name: 'web_fetch', args: { url: 'http://169.254.169.254/latest/meta-data' } }],
    [{ name: 'web_fetch', args: { url: `${rig.fake.url}/secret-page` } }],
  ]);
  const [meta, loop] = t.results;
  assert.is(meta!.is_error, true);
  assert.match(
    meta!.output,
    /^Refused: 169\.254\.169\.254 is a link-local \(cloud metadata\) address; web_fetch only reaches public internet addresses\.$/,
  );
  assert.is(loop!.is_error, true);
  assert.match(loop!.output, /^Refused: 127\.0\.0\.1 is a loopback/);
  assert.not.ok(
    rig.fake.requests.slice(before).some((r) => r.path.includes('secret-page')),
    'the loopback server was never contacted',
  );
});

test('task_create, task_update and task_list show up in GET /api/tasks and on the tasks topic', async () => {
  const t1 = await runTurn([
    [{ name: 'task_create', args: { subject: 'Draft the plan', description: 'first pass' } }],
  ]);
  ok(t1.results[0]!, /^Created task (\S+): Draft the plan$/, 'task_create');
  const a = /^Created task (\S+):/.exec(t1.results[0]!.output)![1]!;

  const t2 = await runTurn([
    [{ name: 'task_create', args: { subject: 'Ship it', blocked_by: [a] } }],
    [{ name: 'task_list', args: {} }],
  ]);
  ok(
    t2.results[0]!,
    new RegExp(`^Created task (\\S+): Ship it \\(blocked by ${a}\\)$`),
    'task_create blocked',
  );
  const b = /^Created task (\S+):/.exec(t2.results[0]!.output)![1]!;
  ok(
    t2.results[1]!,
    new RegExp(
      `^Tasks: 0 in progress, 2 pending, 0 completed\\n○ ${a} Draft the plan\\n    first pass\\n○ ${b} Ship it \\[blocked by ${a}\\]$`,
    ),
    'task_list',
  );

  const t3 = await runTurn([
    [{ name: 'task_update', args: { id: b, status: 'in_progress' } }],
    [{ name: 'task_update', args: { id: a, status: 'completed' } }],
    [{ name: 'task_update', args: { id: b, status: 'in_progress' } }],
    [{ name: 'task_list', args: { status: 'completed' } }],
  ]);
  const [blocked, done, started, list] = t3.results;
  assert.is(blocked!.is_error, true, 'a blocked task cannot start');
  assert.match(
    blocked!.output,
    new RegExp(`Task ${b} cannot be in_progress while it is blocked by ${a} \\(pending\\)`),
  );
  ok(done!, new RegExp(`^Updated task ${a}: Draft the plan \\(completed\\)$`), 'task_update');
  ok(
    started!,
    new RegExp(`^Updated task ${b}: Ship it \\(in_progress\\)$`),
    'task_update once unblocked',
  );
  ok(
    list!,
    new RegExp(`^Tasks: 1 in progress, 0 pending, 1 completed\\n✓ ${a} Draft the plan`),
    'task_list completed',
  );
  assert.not.match(list!.output, /Ship it/);

  const res = await api(rig.port, 'GET', `/api/tasks?kind=graph&session=${sessionId}`);
  assert.is(res.status, 200);
  assert.equal(
    (res.body.items as any[]).map((t) => [
      t.id,
      t.kind,
      t.subject,
      t.status,
      t.blocked_by,
      t.owner_session,
    ]),
    [
      [a, 'graph', 'Draft the plan', 'completed', [], sessionId],
      [b, 'graph', 'Ship it', 'in_progress', [a], sessionId],
    ],
  );
  const topic = ws.events
    .filter((e) => e.topic === 'tasks' && (e.data.id === a || e.data.id === b))
    .map((e) => [e.type, e.data.id, e.data.status]);
  assert.equal(topic, [
    ['task.created', a, 'pending'],
    ['task.created', b, 'pending'],
    ['task.updated', a, 'completed'],
    ['task.updated', b, 'in_progress'],
  ]);
});

test('memory_write and memory_search, then GET /api/memories lists the note', async () => {
  const t = await runTurn([
    [
      {
        name: 'memory_write',
        args: {
          name: 'deploy-steps',
          content: '# Deploy steps\nRun make deploy-xyzzy from the repo root.',
          description: 'How to deploy',
        },
      },
    ],
    [{ name: 'memory_search', args: { query: 'xyzzy deploy' } }],
    [{ name: 'memory_search', args: { query: 'nothing-matches-this' } }],
  ]);
  const [write, found, none] = t.results;
  const file = join(rig.server.home, 'memory', 'deploy-steps.md');
  ok(
    write!,
    new RegExp(
      `^Saved memory deploy-steps \\(\\d+ bytes\\) to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; MEMORY\\.md lists 1 memory\\.$`,
    ),
    'memory_write',
  );
  assert.is(
    readFileSync(file, 'utf8'),
    '# Deploy steps\nRun make deploy-xyzzy from the repo root.\n',
  );
  ok(found!, /deploy-steps\.md \(2\/2 terms/, 'memory_search finds the note');
  assert.match(found!.output, /2: Run make deploy-xyzzy from the repo root\./);
  ok(none!, /^No memory matches "nothing-matches-this"\.$/, 'memory_search without a hit');

  const mem = await api(rig.port, 'GET', '/api/memories');
  assert.is(mem.status, 200);
  assert.match(mem.body.index, /^- \[deploy-steps\]\(deploy-steps\.md\) — How to deploy$/m);
  assert.equal(
    (mem.body.files as any[]).map((f) => [f.name, f.file]),
    [['deploy-steps', 'deploy-steps.md']],
  );
});

test('current_time answers the time in the asked zone; a bad zone is an error result', async () => {
  const before = Date.now();
  const t = await runTurn([
    [{ name: 'current_time', args: { time_zone: 'Asia/Tokyo' } }],
    [{ name: 'current_time', args: { time_zone: 'Mars/Olympus' } }],
  ]);
  const [tokyo, bad] = t.results;
  assert.is(tokyo!.is_error, false);
  const v = JSON.parse(tokyo!.output);
  assert.is(v.time_zone, 'Asia/Tokyo');
  const at = Date.parse(v.utc);
  assert.ok(at >= before - 1000 && at <= Date.now() + 1000, `utc ${v.utc} is now`);
  assert.match(v.local, /GMT\+9|JST/);
  assert.is(bad!.is_error, true);
  assert.is(bad!.output, 'Unknown time zone "Mars/Olympus".');
});

test('update_goal, offered while a goal is active, completes it', async () => {
  const put = await api(rig.port, 'PUT', `/api/sessions/${sessionId}/goal`, {
    objective: 'Prove the hands work',
  });
  assert.is(put.status, 201, JSON.stringify(put.body));
  try {
    const t = await runTurn([
      [{ name: 'update_goal', args: { status: 'complete', note: 'all tools ran' } }],
    ]);
    assert.is(t.results[0]!.is_error, false, t.results[0]!.output);
    const goal = await api(rig.port, 'GET', `/api/sessions/${sessionId}/goal`);
    assert.is(goal.body.status, 'complete');
  } finally {
    await api(rig.port, 'DELETE', `/api/sessions/${sessionId}/goal`);
  }
});

test('artifacts: the files the tools wrote are listed and served inert (nosniff, CSP sandbox, never as HTML)', async () => {
  const html = join(work, 'report.html');
  const t = await runTurn([
    [{ name: 'write_file', args: { path: 'report.html', content: '<script>alert(1)</script>' } }],
  ]);
  ok(t.results[0]!, /^Created report\.html/, 'write_file html');
  const list = await api(rig.port, 'GET', `/api/sessions/${sessionId}/artifacts`);
  assert.is(list.status, 200);
  const items = list.body.items as any[];
  const paths = items.map((a) => a.path);
  for (const p of [artifactPath, html, join(rig.server.home, 'memory', 'deploy-steps.md')])
    assert.ok(paths.includes(p), `${p} is an artifact (${paths.join(', ')})`);
  assert.is(
    new Set(paths).size,
    paths.length,
    'one artifact per file, however often it was written',
  );

  const page = items.find((a) => a.path === html);
  const raw = await http({
    port: rig.port,
    path: `/api/sessions/${sessionId}/artifacts/${page.id}`,
  });
  assert.is(raw.status, 200);
  assert.is(raw.text, '<script>alert(1)</script>');
  assert.is(raw.headers['x-content-type-options'], 'nosniff');
  assert.is(raw.headers['content-security-policy'], 'sandbox');
  assert.is(
    raw.headers['content-type'],
    'application/octet-stream',
    'HTML is never served as a page',
  );

  const txt = items.find((a) => a.path === artifactPath);
  const plain = await http({
    port: rig.port,
    path: `/api/sessions/${sessionId}/artifacts/${txt.id}`,
  });
  assert.is(plain.status, 200);
  assert.is(plain.text, 'alpha\ngamma-e2e\n');
  assert.is(plain.headers['content-type'], 'text/plain; charset=utf-8');
  assert.is(plain.headers['content-security-policy'], 'sandbox');

  const missing = await api(rig.port, 'GET', `/api/sessions/${sessionId}/artifacts/art_nope`);
  assert.is(missing.status, 404);
});

test.run();
