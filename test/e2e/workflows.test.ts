import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  assertIncreasing,
  connectWs,
  messagesOf,
  newChat,
  startRig,
  type TurnRig,
  type WsClient,
} from '../helpers/turns.js';

/**
 * Workflows against the real server, agent worker and fake provider: listing (invalid files with
 * line and field), inputs checked before a run, a three-step fan-in run with its events in order
 * and every step kept in its session, shell steps through the permission engine, a failing
 * step, an interrupt, and the run_workflow tool.
 */

let rig: TurnRig;
let ws: WsClient;
const wfDir = () => join(rig.server.home, 'workflows');
const write = (name: string, text: string) => {
  mkdirSync(wfDir(), { recursive: true });
  writeFileSync(join(wfDir(), `${name}.yml`), text);
};

test.before(async () => {
  // The lite slot is the Anthropic entry, so a step's slot shows in which protocol the fake was asked.
  rig = await startRig({
    models: { oa: { protocol: 'openai' }, an: { protocol: 'anthropic' } },
    lite: 'an',
  });
  ws = await connectWs(rig.port, ['workflows']);
  write(
    'fan-in',
    `description: Two facts, combined.
inputs:
  topic:
    description: What the facts are about
    required: true
  tone:
    default: dry
steps:
  - id: fact
    prompt: Give one fact about {{inputs.topic}}.
  - id: shell
    run: echo shell-says {{inputs.topic}}
  - id: combine
    needs: [fact, shell]
    prompt: "In a {{inputs.tone}} tone, combine: {{steps.fact.output}} / {{steps.shell.output}}"
`,
  );
});
test.after(async () => {
  ws?.close();
  await rig?.stop();
});
test.before.each(() => rig.fake.reset());

const runEvents = (runId: string) =>
  ws.events.filter((e) => e.topic === 'workflows' && e.data?.run_id === runId);
const ended = (runId: string) =>
  ws.waitEvent(
    (e) =>
      e.data?.run_id === runId &&
      (e.type === 'workflow.run_completed' || e.type === 'workflow.run_failed'),
    `the end of ${runId}`,
    30_000,
  );

test('built-in and user workflows are listed; an invalid file is listed with its line and field', async () => {
  write(
    'broken',
    `description: needs a step that does not exist
steps:
  - id: one
    run: echo one
  - id: two
    needs: [one, nowhere]
    run: echo two
`,
  );
  write('bad-yaml', 'description: [unclosed\nsteps: {\n');
  write(
    'bad-template',
    'description: x\nsteps:\n  - id: a\n    prompt: "{{steps.b.output}}"\n  - id: b\n    run: echo b\n',
  );
  const res = await api(rig.port, 'GET', '/api/workflows');
  assert.is(res.status, 200);
  const by = Object.fromEntries(res.body.items.map((w: any) => [w.name, w]));
  for (const name of ['repo-digest', 'page-brief']) {
    assert.is(by[name]?.source, 'builtin', name);
    assert.is(by[name].valid, true, `${name}: ${by[name].why}`);
  }
  assert.equal(Object.keys(by['repo-digest'].inputs), ['path', 'commits']);
  assert.is(by['repo-digest'].inputs.path.required, true);
  const fan = by['fan-in'];
  assert.is(fan.source, 'user');
  assert.is(fan.valid, true, fan.why);
  assert.equal(
    fan.steps.map((s: any) => [s.id, s.kind]),
    [
      ['fact', 'prompt'],
      ['shell', 'run'],
      ['combine', 'prompt'],
    ],
  );

  const broken = by.broken;
  assert.is(broken.valid, false);
  assert.equal(broken.error, {
    line: 6,
    field: 'steps.1.needs.1',
    message: 'needs names "nowhere", which is not a step of this workflow',
  });
  assert.is(
    broken.why,
    'line 6, steps.1.needs.1: needs names "nowhere", which is not a step of this workflow',
  );
  assert.is(by['bad-yaml'].valid, false);
  assert.is(by['bad-yaml'].error.field, '(yaml)');
  assert.type(by['bad-yaml'].error.line, 'number');
  assert.is(by['bad-template'].error.line, 4);
  assert.match(by['bad-template'].error.message, /does not need/);

  const run = await api(rig.port, 'POST', '/api/workflows/broken/run', { inputs: {} });
  assert.is(run.status, 409, 'an invalid workflow does not run');
  assert.match(run.body.error.message, /line 6/);
});

test('inputs are checked before a run: missing, unknown and mistyped are 400 naming the input', async () => {
  const missing = await api(rig.port, 'POST', '/api/workflows/fan-in/run', { inputs: {} });
  assert.is(missing.status, 400);
  assert.match(missing.body.error.message, /needs the input "topic"/);
  assert.equal(missing.body.error.details, [{ path: 'inputs.topic', message: 'required' }]);
  const unknown = await api(rig.port, 'POST', '/api/workflows/fan-in/run', {
    inputs: { topic: 'x', colour: 'red' },
  });
  assert.is(unknown.status, 400);
  assert.match(unknown.body.error.message, /no input "colour"/);
  const typed = await api(rig.port, 'POST', '/api/workflows/repo-digest/run', {
    inputs: { path: '/tmp', commits: 'many' },
  });
  assert.is(typed.status, 400);
  assert.match(typed.body.error.message, /"commits".*number/);
  assert.is(
    (
      await api(rig.port, 'POST', '/api/workflows/fan-in/run', {
        inputs: { topic: { nested: true } },
      })
    ).status,
    400,
  );
  assert.is(
    (await api(rig.port, 'POST', '/api/workflows/no-such/run', { inputs: {} })).status,
    404,
  );
  assert.is((await api(rig.port, 'GET', '/api/workflows/runs/wr_nope')).status, 404);
});

test('a three-step fan-in runs through the agent worker: events in order on /ws, every step in its session', async () => {
  rig.fake.enqueue(
    { parts: [{ text: 'Otters hold hands.' }] },
    { parts: [{ text: 'COMBINED: otters' }] },
  );
  const from = rig.fake.requests.length;
  const start = await api(rig.port, 'POST', '/api/workflows/fan-in/run', {
    inputs: { topic: "otters'; echo pwned" },
  });
  assert.is(start.status, 202, JSON.stringify(start.body));
  const { run_id, session_id } = start.body;
  assert.match(run_id, /^wr_/);
  const end = await ended(run_id);
  assert.is(end.type, 'workflow.run_completed', JSON.stringify(end.data));

  const events = runEvents(run_id);
  assert.equal(
    events.map((e) => `${e.type}${e.data.step ? `:${e.data.step}` : ''}`),
    [
      'workflow.run_started',
      'workflow.step_started:fact',
      'workflow.step_completed:fact',
      'workflow.step_started:shell',
      'workflow.step_completed:shell',
      'workflow.step_started:combine',
      'workflow.step_completed:combine',
      'workflow.run_completed',
    ],
  );
  assertIncreasing(events, 'workflow events');
  assert.is(events[2]!.data.output, 'Otters hold hands.');
  assert.is(
    events[4]!.data.output,
    "shell-says otters'; echo pwned",
    'an input is one shell word: nothing was injected',
  );

  // Only the two prompt steps called the model; the fan-in step got both outputs and only its own messages.
  const reqs = rig.fake.requests.slice(from);
  assert.is(reqs.length, 2);
  const lastMsgs = (reqs[1]!.body!.messages as any[]).filter((m) => m.role !== 'system');
  assert.is(lastMsgs.length, 1, "a step does not see the other steps' messages");
  assert.is(
    lastMsgs[0].content,
    "In a dry tone, combine: Otters hold hands. / shell-says otters'; echo pwned",
  );

  const msgs = await messagesOf(rig.port, session_id);
  assert.equal(
    msgs.map((m) => m.role),
    ['user', 'user', 'assistant', 'assistant', 'tool', 'user', 'assistant', 'assistant'],
  );
  assert.match(msgs[0].content.text, /Run the workflow "fan-in"/);
  assert.is(msgs[1].content.text, "Give one fact about otters'; echo pwned.");
  assert.is(msgs[3].content.tool_calls[0].name, 'terminal');
  assert.match(msgs[4].content.output, /^shell-says/);
  assert.is(msgs[6].content.text, 'COMBINED: otters');
  assert.match(msgs[7].content.text, /completed/);

  const run = (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body;
  assert.is(run.status, 'completed');
  assert.equal(Object.keys(run.steps).sort(), ['combine', 'fact', 'shell']);
  assert.ok(Object.values(run.steps).every((s: any) => s.status === 'completed'));
  const listed = (await api(rig.port, 'GET', '/api/workflows')).body.items.find(
    (w: any) => w.name === 'fan-in',
  );
  assert.is(listed.last_run.id, run_id);
  assert.is(listed.last_run.status, 'completed');
  const session = (await api(rig.port, 'GET', `/api/sessions/${session_id}`)).body;
  assert.is(session.title, 'Workflow: fan-in');
});

test('a prompt step runs on the slot it names (lite or default); a tool step makes its one call', async () => {
  write(
    'slots',
    `description: a quick draft, a skill, then the full answer
steps:
  - id: quick
    model: lite
    prompt: Draft it quickly.
  - id: load
    tool: skill
    args: { name: svc-config }
  - id: full
    needs: [quick, load]
    model: default
    prompt: "Expand: {{steps.quick.output}}"
`,
  );
  rig.fake.enqueue({ parts: [{ text: 'quick-draft' }] }, { parts: [{ text: 'full-answer' }] });
  const start = await api(rig.port, 'POST', '/api/workflows/slots/run', {});
  assert.is(start.status, 202, JSON.stringify(start.body));
  const end = await ended(start.body.run_id);
  assert.is(end.type, 'workflow.run_completed', JSON.stringify(end.data));
  assert.equal(
    rig.fake.requests.map((r) => r.protocol),
    ['anthropic', 'openai'],
    'the lite step went to the lite entry, the other to the default',
  );
  assert.is(end.data.outputs.quick, 'quick-draft');
  assert.is(end.data.outputs.full, 'full-answer');
  assert.match(end.data.outputs.load, /svc/, 'the skill tool answered with the skill');
  const msgs = await messagesOf(rig.port, start.body.session_id);
  const call = msgs.find(
    (m) => m.role === 'assistant' && m.content.tool_calls?.[0]?.name === 'skill',
  );
  assert.ok(call, 'the tool step is a tool call in the session');
  assert.equal(JSON.parse(call.content.tool_calls[0].arguments), { name: 'svc-config' });
});

test('a failing shell step fails the run with the step and the reason; later steps do not run', async () => {
  write(
    'fails',
    'description: fails in the middle\nsteps:\n  - id: ok\n    run: echo fine\n  - id: bad\n    needs: [ok]\n    run: echo first-line; echo last-words; ls /tmp/svc-no-such-dir-31; exit 3\n  - id: never\n    needs: [bad]\n    run: echo never\n',
  );
  const start = await api(rig.port, 'POST', '/api/workflows/fails/run', {});
  assert.is(start.status, 202, JSON.stringify(start.body));
  const end = await ended(start.body.run_id);
  assert.is(end.type, 'workflow.run_failed');
  assert.is(end.data.step, 'bad');
  assert.match(end.data.message, /exit code 3/);
  assert.not.ok(runEvents(start.body.run_id).some((e) => e.data.step === 'never'));
  const run = (await api(rig.port, 'GET', `/api/workflows/runs/${start.body.run_id}`)).body;
  assert.is(run.status, 'failed');
  assert.is(run.failed_step, 'bad');
  assert.is(run.steps.bad.status, 'failed');
  // The failed step keeps its last lines; the one after it is skipped, not pending.
  assert.match(run.steps.bad.output, /last-words/);
  assert.is(run.steps.never.status, 'skipped');
  assert.match(end.data.message, /under \/tmp: in the sandbox \/tmp is private/);
});

test('shell steps go through the permission engine: an asking command waits for approval, a deny fails the step', async () => {
  write(
    'asks',
    'description: reaches the network\nsteps:\n  - id: net\n    run: curl -s http://127.0.0.1:9/\n',
  );
  const start = await api(rig.port, 'POST', '/api/workflows/asks/run', {});
  assert.is(start.status, 202);
  const sid = start.body.session_id;
  const pending = await waitFor(
    async () => {
      const r = await api(rig.port, 'GET', `/api/sessions/${sid}/approvals`);
      return r.body.items.length ? r.body.items[0] : undefined;
    },
    15_000,
    'an approval request',
  );
  assert.is(pending.tool, 'terminal');
  const ans = await api(
    rig.port,
    'POST',
    `/api/sessions/${sid}/approvals/${pending.approval_id}`,
    {
      decision: 'deny',
    },
    { key: rig.server.key() },
  );
  assert.is(ans.status, 200);
  const end = await ended(start.body.run_id);
  assert.is(end.type, 'workflow.run_failed');
  assert.is(end.data.step, 'net');
  const tool = (await messagesOf(rig.port, sid)).find((m) => m.role === 'tool');
  assert.match(tool.content.output, /permission_denied/);
});

test("a tool step goes through the permission engine: a write into svc's folder waits for approval, then runs", async () => {
  const target = join(rig.server.home, 'wf-written.txt');
  write(
    'writes',
    `description: writes a file\nsteps:\n  - id: put\n    tool: write_file\n    args: { path: ${JSON.stringify(target)}, content: written-by-a-step }\n`,
  );
  const start = await api(rig.port, 'POST', '/api/workflows/writes/run', {});
  assert.is(start.status, 202, JSON.stringify(start.body));
  const sid = start.body.session_id;
  const pending = await waitFor(
    async () => (await api(rig.port, 'GET', `/api/sessions/${sid}/approvals`)).body.items?.[0],
    15_000,
    'an approval request',
  );
  assert.is(pending.tool, 'write_file');
  assert.not.ok(existsSync(target), 'nothing is written before the approval');
  assert.is(
    (
      await api(
        rig.port,
        'POST',
        `/api/sessions/${sid}/approvals/${pending.approval_id}`,
        {
          decision: 'allow_once',
        },
        { key: rig.server.key() },
      )
    ).status,
    200,
  );
  const end = await ended(start.body.run_id);
  assert.is(end.type, 'workflow.run_completed', JSON.stringify(end.data));
  assert.is(readFileSync(target, 'utf8'), 'written-by-a-step');
});

test("an interrupt of the run's session stops the run", async () => {
  write(
    'slow',
    'description: waits\nsteps:\n  - id: wait\n    run: sleep 30\n  - id: after\n    needs: [wait]\n    run: echo after\n',
  );
  const start = await api(rig.port, 'POST', '/api/workflows/slow/run', {});
  assert.is(start.status, 202);
  const { run_id, session_id } = start.body;
  await ws.waitEvent(
    (e) => e.data?.run_id === run_id && e.type === 'workflow.step_started',
    'the first step',
    15_000,
  );
  const stop = await api(rig.port, 'POST', `/api/chat/${session_id}/interrupt`, {});
  assert.is(stop.status, 200, JSON.stringify(stop.body));
  const end = await ended(run_id);
  assert.is(end.type, 'workflow.run_failed');
  assert.is(end.data.reason, 'interrupted');
  // The sleep was cut short: its step never completed.
  assert.not.ok(
    runEvents(run_id).some((e) => e.type === 'workflow.step_completed' && e.data.step === 'wait'),
    'the 30 s sleep was cut short',
  );
  assert.not.ok(runEvents(run_id).some((e) => e.data.step === 'after'));
  assert.is(
    (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body.status,
    'interrupted',
  );
});

test('the agent starts a workflow with run_workflow; the run goes on in its own session', async () => {
  write(
    'echoer',
    'description: says hi\ninputs:\n  who:\n    required: true\nsteps:\n  - id: hi\n    run: echo hi {{inputs.who}}\n',
  );
  const chat = await newChat(rig.port, {});
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'rw1',
            name: 'run_workflow',
            arguments: '{"name":"echoer","inputs":{"who":"ann"}}',
          },
        },
      ],
    },
    { parts: [{ text: 'Started.' }] },
  );
  const turn = await api(rig.port, 'POST', `/api/chat/${chat}/turn`, {
    message: 'run echoer for ann',
  });
  assert.is(turn.status, 200, JSON.stringify(turn.body));
  const tool = (await messagesOf(rig.port, chat)).find((m) => m.role === 'tool');
  assert.is(tool.content.is_error, undefined, tool.content.output);
  const out = JSON.parse(tool.content.output);
  assert.not.equal(out.session_id, chat, 'a session of its own');
  const end = await ended(out.run_id);
  assert.is(end.type, 'workflow.run_completed');
  assert.is(end.data.outputs.hi, 'hi ann');

  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: { id: 'rw2', name: 'run_workflow', arguments: '{"name":"echoer","inputs":{}}' },
        },
      ],
    },
    { parts: [{ text: 'Oops.' }] },
  );
  await api(rig.port, 'POST', `/api/chat/${chat}/turn`, { message: 'again without input' });
  const last = (await messagesOf(rig.port, chat)).filter((m) => m.role === 'tool').at(-1);
  assert.is(last.content.is_error, true);
  assert.match(last.content.output, /needs the input "who"/);
});

test.run();
