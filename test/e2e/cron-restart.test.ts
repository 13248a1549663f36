import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeProvider, type FakeProvider } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import {
  removeHome,
  startServer,
  tmpHome,
  waitFor,
  type RunningServer,
} from '../helpers/server.js';
import { KEY } from '../helpers/turns.js';

/**
 * Scheduled tasks across process deaths: a time missed while svc was down runs once at the next
 * start (and not at all with catch_up:false); a kill -9 of the cron worker loses no schedule and
 * fires no scheduled time twice, and the run it was watching is still recorded.
 */

let fake: FakeProvider;
const home = tmpHome('svc-cron-restart-');
let server: RunningServer | undefined;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY });
});
test.after(async () => {
  await server?.stop();
  await fake.close();
  removeHome(home);
});

async function start(): Promise<RunningServer> {
  server = await startServer({ home });
  return server;
}

const runsOf = async (port: number, id: string) =>
  (await api(port, 'GET', `/api/tasks/${id}/runs`)).body.items as any[];

/** A 6-field line that fires once a year, at `at` (UTC). */
function onceAt(at: Date): string {
  return `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
}

test('catch_up: a time missed while svc was down runs once at start; catch_up:false skips it', async () => {
  const s = await start();
  const model = await api(s.port, 'POST', '/api/config/models', {
    id: 'oa',
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake',
    api_key: KEY,
  });
  assert.is(model.status, 201, JSON.stringify(model.body));
  assert.is(
    (await api(s.port, 'PUT', '/api/config/models/default', { model_id: 'oa' })).status,
    200,
  );
  const at = new Date(Math.ceil((Date.now() + 8000) / 1000) * 1000);
  const mk = async (name: string, catch_up: boolean) => {
    const r = await api(s.port, 'POST', '/api/tasks', {
      kind: 'cron',
      name,
      schedule: onceAt(at),
      timezone: 'UTC',
      prompt: `hello from ${name}`,
      catch_up,
    });
    assert.is(r.status, 201, JSON.stringify(r.body));
    assert.is(r.body.next_run_at, at.toISOString());
    return r.body.id as string;
  };
  const yes = await mk('catches up', true);
  const no = await mk('skips', false);
  await s.stop();
  assert.ok(
    Date.now() < at.getTime(),
    'svc stopped before the scheduled time (the machine was too slow for this test)',
  );
  await waitFor(
    () => Date.now() > at.getTime() + 500,
    15_000,
    'the scheduled time to pass while svc is down',
  );

  const s2 = await start();
  const run = await waitFor(
    async () => (await runsOf(s2.port, yes)).find((r) => r.status !== 'running'),
    20_000,
    'the catch-up run',
  );
  assert.equal(
    [run.status, run.trigger, run.scheduled_for],
    ['completed', 'catch_up', at.toISOString()],
  );
  const msgs = (await api(s2.port, 'GET', `/api/sessions/${run.session_id}/messages`)).body
    .items as any[];
  assert.is(msgs[0].content.text, 'hello from catches up');
  assert.is((await runsOf(s2.port, yes)).length, 1, 'one run, not a burst');
  assert.is((await runsOf(s2.port, no)).length, 0, 'catch_up:false does not run the missed time');
  const t = (await api(s2.port, 'GET', `/api/tasks/${yes}`)).body;
  assert.is(t.last_run.id, run.id);
  assert.ok(t.next_run_at > at.toISOString(), 'the next time is next year');
  for (const id of [yes, no]) await api(s2.port, 'DELETE', `/api/tasks/${id}`);
});

test('kill -9 of the cron worker: the schedule goes on, no scheduled time fires twice, runs are all recorded', async () => {
  const s = server!;
  const r = await api(s.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Every second',
    schedule: '* * * * * *',
    prompt: 'tick',
  });
  assert.is(r.status, 201, JSON.stringify(r.body));
  const id = r.body.id as string;
  const cronPid = async () =>
    ((await api(s.port, 'GET', '/api/status')).body.processes as any[]).find(
      (p) => p.role === 'cron' && p.pid > 0,
    )?.pid as number | undefined;
  await waitFor(
    async () => (await runsOf(s.port, id)).filter((x) => x.status === 'completed').length >= 2,
    30_000,
    'two completed runs',
  );
  const pid = (await waitFor(cronPid, 10_000, 'the cron worker in /api/status'))!;
  process.kill(pid, 'SIGKILL');
  const killedAt = Date.now();
  const pid2 = await waitFor(
    async () => {
      const p = await cronPid();
      return p !== undefined && p !== pid ? p : undefined;
    },
    30_000,
    'a new cron worker',
  );
  assert.is.not(pid2, pid);
  await waitFor(
    async () =>
      (await runsOf(s.port, id)).filter(
        (x) => Date.parse(x.started_at) > killedAt && x.status === 'completed',
      ).length >= 2,
    30_000,
    'runs after the restart',
  );
  assert.is((await api(s.port, 'PATCH', `/api/tasks/${id}`, { enabled: false })).status, 200);
  const runs = await waitFor(
    async () => {
      const all = await runsOf(s.port, id);
      return all.every((x) => x.status !== 'running') ? all : undefined;
    },
    30_000,
    'every run to end',
  );
  const times = runs.map((x) => x.scheduled_for);
  assert.is(
    new Set(times).size,
    times.length,
    `no scheduled time fired twice: ${times.join(', ')}`,
  );
  const ordered = [...runs].sort((a, b) => a.started_at.localeCompare(b.started_at));
  for (let i = 1; i < ordered.length; i++)
    assert.ok(
      ordered[i].started_at >= ordered[i - 1].ended_at,
      `runs never overlap: ${JSON.stringify(ordered.slice(i - 1, i + 1))}`,
    );
  assert.ok(
    runs.every((x) => x.status === 'completed'),
    `every run completed: ${JSON.stringify(runs.map((x) => [x.status, x.error]))}`,
  );
});

test.run();
