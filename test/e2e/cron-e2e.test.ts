import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDb } from '../../src/shared/store/db.js';
import { textReply } from '../fixtures/fake-provider.js';
import { api, assertFieldError } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, messagesOf, startRig, type TurnRig, type WsClient } from '../helpers/turns.js';

/**
 * Scheduled tasks against the real server, cron worker, agent worker and fake provider: a task on
 * a one-second schedule fires and its run is a session with the model's reply; next_run_at moves;
 * enabled:false stops firing and true resumes it; runs never overlap (409); a bad field is a 400
 * naming it; a task goes to the trash and comes back with its schedule.
 */

let rig: TurnRig;
let ws: WsClient;

test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  ws = await connectWs(rig.port, ['tasks']);
});
test.after(async () => {
  ws?.close();
  await rig?.stop();
});
test.before.each(() => rig.fake.reset());

const create = async (body: Record<string, unknown>) => {
  const r = await api(rig.port, 'POST', '/api/tasks', { kind: 'cron', ...body });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
};
const runsOf = async (id: string) => {
  const r = await api(rig.port, 'GET', `/api/tasks/${id}/runs`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  return r.body.items as any[];
};
const getTask = async (id: string) => (await api(rig.port, 'GET', `/api/tasks/${id}`)).body;
/** Waits until no run of any cron task is going, so a scripted reply goes to the run a test starts. */
const quiet = async () => {
  const tasks = (await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items as any[];
  await waitFor(
    async () => {
      for (const t of tasks)
        if ((await runsOf(t.id)).some((r) => r.status === 'running')) return false;
      return true;
    },
    20_000,
    'every cron run to end',
  );
};

test('max_runtime_seconds interrupts a run, recorded as such', async () => {
  await quiet();
  rig.fake.enqueue({ parts: [{ text: 'starting…' }, { stall: true }] });
  const t = await create({
    name: 'Stuck',
    schedule: '0 0 1 1 *',
    prompt: 'hang',
    enabled: false,
    max_runtime_seconds: 2,
  });
  const r = await api(rig.port, 'POST', `/api/tasks/${t.id}/run`);
  assert.is(r.status, 202);
  const done = await waitFor(
    async () => (await runsOf(t.id)).find((x) => x.status !== 'running'),
    20_000,
    'the run to be interrupted',
  );
  assert.is(done.status, 'interrupted');
  assert.match(done.error, 'max_runtime_seconds (2 s)');
  const took = Date.parse(done.ended_at) - Date.parse(done.started_at);
  assert.ok(took >= 2000, `ran ${took} ms`);
  await ws.waitEvent(
    (e) => e.type === 'task.run_interrupted' && e.data.run.id === done.id,
    'task.run_interrupted',
  );
  // The session is free again once its turn has ended (on a loaded machine the run may be
  // recorded as interrupted by its fallback timer a moment before the turn reports the stop).
  const turn = await waitFor(
    async () => {
      const t = await api(rig.port, 'POST', `/api/chat/${r.body.session_id}/turn`, {
        message: 'still there?',
      });
      return t.status === 409 && t.body.error?.code === 'turn_in_progress' ? undefined : t;
    },
    30_000,
    'the interrupted turn to end',
  );
  assert.is(turn.status, 200, JSON.stringify(turn.body));
});

test('a one-second task fires; its run is a session with the reply; next_run_at moves', async () => {
  await quiet();
  rig.fake.enqueue(textReply('Good ', 'morning from cron'));
  const t = await create({
    name: 'Morning note',
    schedule: '* * * * * *',
    prompt: 'Say good morning.',
  });
  assert.equal(
    [t.kind, t.enabled, t.session, t.max_runtime_seconds, t.catch_up, t.permission_mode],
    ['cron', true, 'new', 1800, true, 'auto'],
  );
  assert.ok(t.next_run_at, 'next_run_at is set');
  const first = t.next_run_at as string;
  // The first run gets the scripted reply (a time that passed while the worker started runs as catch_up).
  const done = await waitFor(
    async () => (await runsOf(t.id)).find((r) => r.status === 'completed'),
    20_000,
    'a completed run',
  );
  assert.ok(['schedule', 'catch_up'].includes(done.trigger), done.trigger);
  assert.is(done.error, null);
  assert.ok(done.scheduled_for >= first, `${done.scheduled_for} >= ${first}`);
  const msgs = await messagesOf(rig.port, done.session_id);
  assert.equal(
    msgs.map((m) => m.role),
    ['user', 'assistant'],
  );
  assert.is(msgs[0].content.text, 'Say good morning.');
  assert.is(msgs[1].content.text, 'Good morning from cron');
  const session = (await api(rig.port, 'GET', `/api/sessions/${done.session_id}`)).body;
  assert.match(session.title, /^Morning note · \d{4}-\d\d-\d\d \d\d:\d\d$/);
  const later = await getTask(t.id);
  assert.ok(later.next_run_at > first, `${later.next_run_at} > ${first}`);
  assert.ok(later.last_run.started_at >= done.started_at);
  await ws.waitEvent(
    (e) => e.type === 'task.run_started' && e.data.task_id === t.id,
    'task.run_started',
  );
  const ev = await ws.waitEvent(
    (e) => e.type === 'task.run_completed' && e.data.run.id === done.id,
    'task.run_completed',
  );
  assert.is(ev.data.run.session_id, done.session_id);
  await ws.waitEvent((e) => e.type === 'task.created' && e.data.id === t.id, 'task.created');
  // The croner job itself fires (not only the start's catch-up).
  await waitFor(
    async () =>
      (await runsOf(t.id)).find((r) => r.trigger === 'schedule' && r.status === 'completed'),
    20_000,
    'a scheduled run',
  );
  // Stop it so it does not fire through the rest of the file.
  assert.is((await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: false })).status, 200);
});

test('PATCH enabled:false stops firing within a second; enabled:true resumes', async () => {
  const t = await create({ name: 'Ticker', schedule: '* * * * * *', prompt: 'tick' });
  await waitFor(async () => (await runsOf(t.id)).length >= 1, 20_000, 'a first run');
  const off = await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: false });
  assert.is(off.status, 200);
  assert.equal([off.body.enabled, off.body.next_run_at, off.body.name], [false, null, 'Ticker']);
  const offAt = Date.now();
  // Let any run already going end, then watch for new starts over a few fire times.
  await waitFor(
    async () => (await runsOf(t.id)).every((r) => r.status !== 'running'),
    20_000,
    'runs to end',
  );
  const count = (await runsOf(t.id)).length;
  await waitFor(() => Date.now() - offAt > 3500, 5000, 'three fire times to pass');
  const after = await runsOf(t.id);
  assert.is(after.length, count, 'no run started while disabled');
  assert.ok(
    after.every((r) => Date.parse(r.started_at) < offAt + 1000),
    'every run started before (or within a second of) the PATCH',
  );
  const on = await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: true });
  assert.ok(on.body.next_run_at);
  await waitFor(async () => (await runsOf(t.id)).length > count, 20_000, 'firing to resume');
  await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: false });
});

test('run now: 202 with run and session ids; a second one while it runs is 409; unknown id 404', async () => {
  await quiet();
  rig.fake.enqueue({ parts: [{ text: 'slow ' }, { text: 'answer' }], delayMs: 1500 });
  const t = await create({
    name: 'Manual',
    schedule: '0 0 1 1 *',
    prompt: 'do it',
    enabled: false,
  });
  const r = await api(rig.port, 'POST', `/api/tasks/${t.id}/run`);
  assert.is(r.status, 202, JSON.stringify(r.body));
  assert.match(r.body.run_id, /^run_/);
  assert.match(r.body.session_id, /^s_/);
  const again = await api(rig.port, 'POST', `/api/tasks/${t.id}/run`);
  assert.is(again.status, 409, JSON.stringify(again.body));
  assert.is(again.body.error.code, 'conflict');
  assert.match(again.body.error.message, 'never overlap');
  const done = await waitFor(
    async () => (await runsOf(t.id)).find((x) => x.id === r.body.run_id && x.status !== 'running'),
    20_000,
    'the manual run to end',
  );
  assert.equal(
    [done.status, done.trigger, done.session_id],
    ['completed', 'manual', r.body.session_id],
  );
  assert.is((await messagesOf(rig.port, r.body.session_id)).at(-1).content.text, 'slow answer');
  assert.is((await api(rig.port, 'POST', '/api/tasks/task_nope/run')).status, 404);
  assert.is((await api(rig.port, 'GET', '/api/tasks/task_nope/runs')).status, 404);
  assert.is((await api(rig.port, 'PATCH', '/api/tasks/task_nope', { enabled: true })).status, 404);
});

const schedule = { path: 'schedule', label: 'Schedule' };

test('bad fields are 400s naming the field (as the schedule form labels it, when it shows it)', async () => {
  const labelled: Array<[Record<string, unknown>, { path: string; label: string }, RegExp]> = [
    [{ name: 'x', schedule: 'every day', prompt: 'p' }, schedule, /has 2 fields/],
    [{ name: 'x', schedule: '61 * * * *', prompt: 'p' }, schedule, /minute: 61/],
    [
      { name: 'x', schedule: '@hourly', timezone: 'Mars/Olympus', prompt: 'p' },
      { path: 'timezone', label: 'Time zone' },
      /not an IANA time zone/,
    ],
    [
      { name: 'x', schedule: '@hourly' },
      { path: 'prompt', label: 'Prompt' },
      /a prompt or a workflow/,
    ],
    [
      { name: '', schedule: '@hourly', prompt: 'p' },
      { path: 'name', label: 'Name' },
      /must not be empty/,
    ],
    [
      { name: 'x', schedule: '@hourly', prompt: 'p', max_runtime_seconds: 0 },
      { path: 'max_runtime_seconds', label: 'Max run time (seconds)' },
      /Max run time \(seconds\): must be at least 1\.$/,
    ],
  ];
  for (const [body, field, says] of labelled)
    assertFieldError(
      await api(rig.port, 'POST', '/api/tasks', { kind: 'cron', ...body }),
      field,
      says,
    );
  // Fields the form does not show keep their keys.
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'x', schedule: '@hourly', workflow: 'no-such-flow' }, 'workflow'],
    [{ name: 'x', schedule: '@hourly', prompt: 'p', model: 'gpt-nope' }, 'model'],
    [
      {
        name: 'x',
        schedule: '@hourly',
        prompt: 'p',
        notify: [{ platform: 'telegram', chat_id: '42' }],
      },
      'notify.0.platform',
    ],
    [{ name: 'x', schedule: '@hourly', prompt: 'p', working_dir: 'relative/dir' }, 'working_dir'],
  ];
  for (const [body, field] of cases) {
    const r = await api(rig.port, 'POST', '/api/tasks', { kind: 'cron', ...body });
    assert.is(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
    assert.is(r.body.error.code, 'invalid_request');
    assert.match(r.body.error.message, `${field}:`, JSON.stringify(r.body));
  }
  const t = await create({
    name: 'Valid',
    schedule: '@daily',
    timezone: 'Europe/Berlin',
    prompt: 'p',
    enabled: false,
  });
  const bad = await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { timezone: 'Nowhere/City' });
  assertFieldError(bad, { path: 'timezone', label: 'Time zone' }, /not an IANA time zone/);
  // The form's preview asks as the person types: a bad zone is named as the form names it.
  assertFieldError(
    await api(rig.port, 'GET', '/api/cron/preview?schedule=%40hourly&timezone=Nowhere%2FCity'),
    { path: 'timezone', label: 'Time zone' },
    /^Invalid schedule: Time zone: not an IANA time zone/,
  );
  assert.is((await getTask(t.id)).timezone, 'Europe/Berlin', 'a refused PATCH changes nothing');
  assert.is((await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { schedule: 'nope' })).status, 400);
});

test("DST: a daily task fires at its wall time on both sides of a change; svc reports UTC and the zone's wall time", async () => {
  const t = await create({
    name: 'Berlin 9',
    schedule: '0 9 * * *',
    timezone: 'Europe/Berlin',
    prompt: 'p',
    enabled: true,
  });
  assert.match(t.next_run_local, /T09:00:00\+0[12]:00$/);
  assert.is(new Date(t.next_run_local).toISOString(), t.next_run_at);
  const preview = async (q: string) => {
    const r = await api(rig.port, 'GET', `/api/cron/preview?${q}`);
    assert.is(r.status, 200, JSON.stringify(r.body));
    return r.body.next as Array<{ at: string; local: string }>;
  };
  // Spring forward (29 March 2026): 09:00 stays 09:00, UTC moves an hour.
  const spring = await preview(
    `schedule=${encodeURIComponent('0 9 * * *')}&timezone=Europe/Berlin&from=2026-03-27T12:00:00Z&count=3`,
  );
  assert.equal(spring, [
    { at: '2026-03-28T08:00:00.000Z', local: '2026-03-28T09:00:00+01:00' },
    { at: '2026-03-29T07:00:00.000Z', local: '2026-03-29T09:00:00+02:00' },
    { at: '2026-03-30T07:00:00.000Z', local: '2026-03-30T09:00:00+02:00' },
  ]);
  // Fall back (1 November 2026, New York): 01:30 happens twice on the clock and fires once.
  const fall = await preview(
    `schedule=${encodeURIComponent('30 1 * * *')}&timezone=America/New_York&from=2026-10-31T12:00:00Z&count=2`,
  );
  assert.equal(fall, [
    { at: '2026-11-01T05:30:00.000Z', local: '2026-11-01T01:30:00-04:00' },
    { at: '2026-11-02T06:30:00.000Z', local: '2026-11-02T01:30:00-05:00' },
  ]);
  const bad = await api(rig.port, 'GET', '/api/cron/preview?schedule=nope');
  assert.is(bad.status, 400);
  assert.match(bad.body.error.message, 'schedule');
  // A bad expression is one plain sentence that says what a schedule is, as the form does.
  for (const [schedule, says] of [
    [
      '* * *',
      /"\* \* \*" has 3 fields; a schedule has 5 fields \(minute hour day month weekday\), 6 with seconds first/,
    ],
    ['1 2 3 4 5 6 7', /has 7 fields/],
    ['61 * * * *', /minute: 61/],
    ['@weird', /not a nickname/],
  ] as const) {
    const r = await api(
      rig.port,
      'GET',
      `/api/cron/preview?schedule=${encodeURIComponent(schedule)}`,
    );
    const message = String(r.body.error.message);
    assert.is(r.status, 400);
    assert.match(message, /^Not a schedule: /);
    assert.match(message, says);
    assert.not.match(message, /query parameter|seven|\.\./, message);
    assert.is(
      message.split(/\.(\s|$)/).filter((x) => x.trim()).length,
      1,
      `one sentence: ${message}`,
    );
    const post = await api(rig.port, 'POST', '/api/tasks', {
      kind: 'cron',
      name: 'Bad',
      schedule,
      prompt: 'p',
    });
    assert.is(post.status, 400);
    assert.not.match(String(post.body.error.message), /seven|\.\./, post.body.error.message);
  }
  await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: false });

  // A live fire in that zone: a daily time given as Berlin's wall clock fires at that instant.
  await quiet();
  const at = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000);
  const wall = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((p) => [p.type, Number(p.value)]),
  );
  const live = await create({
    name: 'Berlin now',
    schedule: `${wall.second} ${wall.minute} ${wall.hour} * * *`,
    timezone: 'Europe/Berlin',
    prompt: 'p',
  });
  assert.is(live.next_run_at, at.toISOString());
  const run = await waitFor(
    async () => (await runsOf(live.id)).find((r) => r.status !== 'running'),
    20_000,
    'the Berlin run',
  );
  // (catch_up when that second passed while the cron worker was still starting on a busy machine.)
  assert.equal([run.status, run.scheduled_for], ['completed', at.toISOString()]);
  assert.ok(['schedule', 'catch_up'].includes(run.trigger), run.trigger);
  assert.ok(Date.parse(run.started_at) >= at.getTime(), 'it did not fire early');
  await api(rig.port, 'PATCH', `/api/tasks/${live.id}`, { enabled: false });
});

test('an approval during a run goes to the Web UI and is denied after approval_timeout_seconds, the reason recorded; the run goes on', async () => {
  await quiet();
  const work = mkdtempSync(join(tmpdir(), 'svc-cron-work-'));
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'c1',
            name: 'terminal',
            arguments: [
              JSON.stringify({ command: 'curl --version >/dev/null 2>&1; echo ran-cron' }),
            ],
          },
        },
      ],
      stop: 'tool_use',
    },
    textReply('carried on without it'),
  );
  const t = await create({
    name: 'Needs approval',
    schedule: '0 0 1 1 *',
    prompt: 'fetch it',
    enabled: false,
    permission_mode: 'interactive',
    working_dir: work,
    approval_timeout_seconds: 4,
  });
  // A notify target whose platform has no channels worker here (channels is not configured on
  // this server, so the API refuses it: it is written to the store as an older config would leave it).
  const db = openDb(join(rig.server.home, 'svc.db'));
  db.prepare('UPDATE cron_tasks SET notify = ? WHERE id = ?').run(
    JSON.stringify([{ platform: 'telegram', chat_id: '4242' }]),
    t.id,
  );
  db.close();
  const r = await api(rig.port, 'POST', `/api/tasks/${t.id}/run`);
  assert.is(r.status, 202);
  const sid = r.body.session_id as string;
  // While it waits, the Web UI's list of approvals shows it.
  const pending = await waitFor(
    async () => {
      const items = (await api(rig.port, 'GET', `/api/sessions/${sid}/approvals`)).body
        .items as any[];
      return items.length > 0 ? items : undefined;
    },
    10_000,
    'the approval to be waiting',
  );
  assert.is(pending[0].tool, 'terminal');
  const done = await waitFor(
    async () => (await runsOf(t.id)).find((x) => x.id === r.body.run_id && x.status !== 'running'),
    30_000,
    'the run to end',
  );
  assert.is(done.status, 'completed', JSON.stringify(done));
  assert.is(done.approvals.length, 1, JSON.stringify(done.approvals));
  assert.equal([done.approvals[0].tool, done.approvals[0].decision], ['terminal', 'deny']);
  assert.match(done.approvals[0].why, 'nobody answered within 4 s');
  const msgs = await messagesOf(rig.port, sid);
  const tool = msgs.find((m) => m.role === 'tool');
  assert.match(tool.content.output, 'not approved');
  assert.match(tool.content.output, 'nobody answered within 4 s');
  assert.is(msgs.at(-1).content.text, 'carried on without it');
  const audit = readFileSync(join(rig.server.home, 'logs', 'audit.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.session_id === sid);
  assert.equal(
    audit.map((e) => e.decision),
    ['ask', 'denied_by_timeout'],
  );
  assert.not.ok(existsSync(join(work, 'ran-cron')), 'the command did not run');
  // The approval and the result went to the notify target; it could not be reached, which is recorded and fails nothing.
  const sent = await waitFor(
    async () => {
      const run = (await runsOf(t.id)).find((x) => x.id === r.body.run_id);
      return run.notify_results.length >= 2 ? run.notify_results : undefined;
    },
    20_000,
    'both notify attempts to be recorded',
  );
  assert.equal(sent.map((n: any) => [n.kind, n.platform, n.chat_id, n.ok]).sort(), [
    ['approval', 'telegram', '4242', false],
    ['result', 'telegram', '4242', false],
  ]);
  assert.ok(
    sent.every((n: any) => /channels/.test(n.error)),
    JSON.stringify(sent),
  );
  assert.is((await runsOf(t.id)).find((x) => x.id === r.body.run_id).status, 'completed');
  rmSync(work, { recursive: true, force: true });
});

test('session reuse: every run goes to one session; a workflow task runs its workflow with the inputs', async () => {
  await quiet();
  const t = await create({
    name: 'Same chat',
    schedule: '0 0 1 1 *',
    prompt: 'again',
    enabled: false,
    session: 'reuse',
  });
  const runOnce = async (id: string) => {
    const r = await api(rig.port, 'POST', `/api/tasks/${id}/run`);
    assert.is(r.status, 202, JSON.stringify(r.body));
    return waitFor(
      async () => (await runsOf(id)).find((x) => x.id === r.body.run_id && x.status !== 'running'),
      20_000,
      'the run to end',
    );
  };
  const a = await runOnce(t.id);
  const b = await runOnce(t.id);
  assert.is(a.session_id, b.session_id);
  assert.is((await getTask(t.id)).session_id, a.session_id);
  assert.equal(
    (await messagesOf(rig.port, a.session_id)).map((m) => m.role),
    ['user', 'assistant', 'user', 'assistant'],
  );

  mkdirSync(join(rig.server.home, 'workflows'), { recursive: true });
  writeFileSync(
    join(rig.server.home, 'workflows', 'brief.yml'),
    'description: A brief.\ninputs:\n  topic:\n    required: true\nsteps:\n  - id: one\n    prompt: Say one thing about {{inputs.topic}}.\n',
  );
  const missing = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Brief',
    schedule: '@daily',
    workflow: 'brief',
    enabled: false,
  });
  assert.is(missing.status, 400);
  assert.match(missing.body.error.message, 'topic');
  const w = await create({
    name: 'Brief',
    schedule: '@daily',
    workflow: 'brief',
    inputs: { topic: 'green tea' },
    enabled: false,
  });
  assert.equal([w.workflow, w.prompt, w.inputs], ['brief', null, { topic: 'green tea' }]);
  const run = await runOnce(w.id);
  assert.is(run.status, 'completed', JSON.stringify(run));
  const texts = JSON.stringify(await messagesOf(rig.port, run.session_id));
  assert.match(texts, 'Say one thing about green tea.');
  assert.match(
    (await api(rig.port, 'GET', `/api/sessions/${run.session_id}`)).body.title,
    /^Brief · /,
  );
});

test('GET ?kind=cron lists cron tasks only; the graph list does not show them', async () => {
  const c = await create({ name: 'Listed', schedule: '@weekly', prompt: 'p', enabled: false });
  const g = await api(rig.port, 'POST', '/api/tasks', { subject: 'a graph task' });
  const cron = (await api(rig.port, 'GET', '/api/tasks?kind=cron')).body.items as any[];
  assert.ok(cron.some((x) => x.id === c.id));
  assert.ok(cron.every((x) => x.kind === 'cron'));
  const graph = (await api(rig.port, 'GET', '/api/tasks')).body.items as any[];
  assert.ok(graph.some((x) => x.id === g.body.id));
  assert.ok(graph.every((x) => x.kind === 'graph'));
});

test('DELETE moves a task to the trash; restore brings it back with its schedule', async () => {
  const t = await create({
    name: 'Trashable',
    schedule: '30 9 * * 1-5',
    timezone: 'America/New_York',
    prompt: 'p',
  });
  const del = await api(rig.port, 'DELETE', `/api/tasks/${t.id}`);
  assert.is(del.status, 200);
  assert.is(del.body.deleted, t.id);
  assert.is((await api(rig.port, 'GET', `/api/tasks/${t.id}`)).status, 404);
  await ws.waitEvent((e) => e.type === 'task.deleted' && e.data.id === t.id, 'task.deleted');
  const trash = (await api(rig.port, 'GET', '/api/trash')).body.items as any[];
  const item = trash.find((i) => i.id === del.body.trash_id);
  assert.equal([item?.kind, item?.name], ['cron_task', 'Trashable']);
  const res = await api(rig.port, 'POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(
    [res.body.task.kind, res.body.task.id],
    ['cron', t.id],
    'answered as the API shows a task',
  );
  assert.not.ok('sched_from' in res.body.task, 'not as the store keeps it');
  const back = await getTask(t.id);
  assert.equal(
    [back.schedule, back.timezone, back.enabled, back.prompt],
    ['30 9 * * 1-5', 'America/New_York', true, 'p'],
  );
  assert.ok(back.next_run_at);
  await api(rig.port, 'PATCH', `/api/tasks/${t.id}`, { enabled: false });
});

test.run();
