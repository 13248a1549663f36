import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, messagesOf, startRig, status, type TurnRig } from '../helpers/turns.js';

/*
 * A restart drains a workflow run like a turn: a run in flight when the restart is asked for
 * finishes every step before svc restarts; one still going past restart.drain_seconds ends, its
 * end announced on the `workflows` topic and kept in the run, and no later step starts.
 */

let rig: TurnRig;
const write = (name: string, text: string) => {
  mkdirSync(join(rig.server.home, 'workflows'), { recursive: true });
  writeFileSync(join(rig.server.home, 'workflows', `${name}.yml`), text);
};
const restarted = (n: number) =>
  waitFor(
    async () => {
      const s = await status(rig.port);
      return s.restarts === n && s.state === 'running' ? s : undefined;
    },
    60_000,
    `restart ${n} to finish`,
  );

test.before(async () => {
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: 'restart:\n  drain_seconds: 15\n',
  });
});
test.after(async () => {
  await rig?.stop();
});

test('a run in flight when a restart is asked for finishes every step before svc restarts', async () => {
  write(
    'paced',
    'description: a slow step, then a quick one\nsteps:\n  - id: slow\n    prompt: Take your time.\n  - id: quick\n    needs: [slow]\n    prompt: "Now: {{steps.slow.output}}"\n',
  );
  // The slow step streams for a couple of seconds, well inside the 15 s drain.
  rig.fake.enqueue(
    { parts: [{ text: ['one ', 'two ', 'three ', 'four ', 'five'] }], delayMs: 400 },
    textReply('quick-done'),
  );
  const ws = await connectWs(rig.port, ['workflows']);
  const start = await api(rig.port, 'POST', '/api/workflows/paced/run', {});
  assert.is(start.status, 202, JSON.stringify(start.body));
  const { run_id, session_id } = start.body;
  try {
    await ws.waitEvent(
      (e) =>
        e.type === 'workflow.step_started' && e.data.run_id === run_id && e.data.step === 'slow',
      'the slow step',
      15_000,
    );
    await rig.fake.waitForRequests(1, 15_000);
    const asked = new Date().toISOString();
    assert.is((await api(rig.port, 'POST', '/api/restart', {})).status, 202);
    await restarted(1);
    const run = (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body;
    assert.is(run.status, 'completed', JSON.stringify(run));
    assert.ok(
      run.ended_at > asked,
      `the run was still going when the restart was asked for (${run.ended_at} > ${asked})`,
    );
    assert.is(run.steps.slow.output, 'one two three four five');
    assert.is(run.steps.quick.output, 'quick-done');
    const texts = (await messagesOf(rig.port, session_id)).map((m) => m.content.text);
    assert.ok(
      texts.includes('Now: one two three four five'),
      "the second step ran, with the first one's output",
    );
    assert.ok(
      ws.events.some((e) => e.type === 'workflow.run_completed' && e.data.run_id === run_id),
      'the completion was announced before the old gateway went',
    );
  } finally {
    ws.close();
  }
});

test('a run still going past the drain bound ends with its reason; no later step starts', async () => {
  write(
    'stalls',
    'description: a step whose model never finishes\nsteps:\n  - id: stuck\n    prompt: Never mind.\n  - id: after\n    needs: [stuck]\n    prompt: Never asked.\n',
  );
  rig.fake.reset();
  rig.fake.enqueue({ parts: [{ text: 'partial ' }, { stall: true }] });
  const ws = await connectWs(rig.port, ['workflows']);
  const start = await api(rig.port, 'POST', '/api/workflows/stalls/run', {});
  assert.is(start.status, 202, JSON.stringify(start.body));
  const { run_id } = start.body;
  try {
    await ws.waitEvent(
      (e) => e.type === 'workflow.step_started' && e.data.run_id === run_id,
      'the stuck step',
      15_000,
    );
    await rig.fake.waitForRequests(1, 15_000);
    assert.is((await api(rig.port, 'POST', '/api/restart', {})).status, 202);
    const end = await ws.waitEvent(
      (e) =>
        e.data?.run_id === run_id &&
        (e.type === 'workflow.run_failed' || e.type === 'workflow.run_completed'),
      'the end of the run',
      45_000,
    );
    assert.is(end.type, 'workflow.run_failed');
    assert.is(end.data.step, 'stuck');
    assert.is(end.data.reason, 'restarted', 'the end says why: a restart, not the user');
    assert.match(end.data.message, /restart\.drain_seconds/);
    await restarted(2);
    const run = (await api(rig.port, 'GET', `/api/workflows/runs/${run_id}`)).body;
    assert.is(run.status, 'interrupted', JSON.stringify(run));
    assert.match(run.error, /restarted before the run finished/);
    assert.is(run.failed_step, 'stuck');
    // A step after a failed one is marked skipped (it never ran: no output).
    assert.is(run.steps.after?.status ?? 'skipped', 'skipped', 'the step after it never started');
    assert.is(run.steps.after?.output ?? null, null, 'the step after it never ran');
    assert.is(rig.fake.requests.length, 1, 'the model was not asked again');
  } finally {
    ws.close();
  }
});

test.run();
