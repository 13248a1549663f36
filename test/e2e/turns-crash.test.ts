import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { runCli, waitFor } from '../helpers/server.js';
import {
  connectWs,
  joined,
  messagesOf,
  newChat,
  ofTurn,
  sse,
  status,
  startRig,
  type TurnRig,
} from '../helpers/turns.js';

/**
 * Crash and restart safety: kill -9 of the agent worker running a turn, and POST /api/restart
 * while a turn runs (it finishes, new turns get 503 meanwhile, then the restart happens).
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ config: 'restart:\n  drain_seconds: 10\n' });
});
test.after(async () => {
  await rig?.stop();
});
// A test that failed half-way leaves no scripts behind for the next one.
test.before.each(() => rig.fake.reset());

/** `svc status --json`, as a user would run it. */
async function cliStatus(): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('kill -9 of the agent worker running a turn: turn.failed worker_crashed, committed messages stay, the next turn works', async () => {
  const id = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    // First step: a tool call (committed with its result); second step: text, then the stream stalls.
    rig.fake.enqueue(
      { parts: [{ toolCall: { id: 'c1', name: 'current_time', arguments: '{}' } }] },
      { parts: [{ text: ['Almost ', 'there'] }, { stall: true }] },
    );
    const waiting = api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'do the thing' });
    const started = await ws.waitEvent((e) => e.type === 'turn.started', 'turn.started');
    const turnId = started.data.turn_id as string;
    await waitFor(
      () => joined(ofTurn(ws.events, turnId), 'turn.text_delta') === 'Almost there',
      5000,
      'the text before the stall',
    );

    const busy = await waitFor(
      async () => {
        const agents = (await cliStatus()).processes.filter(
          (p: any) => p.role === 'agent' && p.inflight_turns > 0,
        );
        return agents.length > 0 ? agents : undefined;
      },
      5000,
      'svc status to show the agent running the turn',
    );
    assert.is(busy.length, 1, `one agent runs the turn: ${JSON.stringify(busy)}`);
    const pid = busy[0].pid as number;
    assert.ok(pid > 0 && pid !== rig.server.proc.pid);
    process.kill(pid, 'SIGKILL');

    const failed = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && e.type === 'turn.failed',
      'turn.failed',
      5000,
    );
    assert.is(failed.data.reason, 'worker_crashed');
    assert.type(failed.data.message, 'string');
    assert.not.ok(
      ofTurn(ws.events, turnId).some(
        (e) => e.type === 'turn.completed' || e.type === 'turn.interrupted',
      ),
      'one ending only',
    );
    const res = await waiting;
    assert.is(res.body.status, 'failed');
    assert.is(res.body.error.reason, 'worker_crashed');
    assert.is(res.body.turn_id, turnId);

    // What was committed before the crash is kept; the half-streamed text was never committed.
    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.is(stored[0].content.text, 'do the thing');
    assert.is(stored[1].content.tool_calls[0].name, 'current_time');
    assert.equal(res.body.messages, stored);

    // A new turn on the same session is taken by a new worker.
    rig.fake.enqueue({ parts: [{ text: 'recovered' }] });
    const next = await waitFor(
      async () => {
        const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'try again' });
        return r.body?.status === 'completed' ? r : undefined;
      },
      5000,
      'a turn after the crash',
    );
    assert.is(next.body.reply, 'recovered');
    const after = await cliStatus();
    const agents = after.processes.filter((p: any) => p.role === 'agent');
    assert.ok(agents.length >= 1);
    assert.not.ok(
      agents.some((p: any) => p.pid === pid),
      'the killed worker is gone from svc status',
    );
    assert.equal(
      (await messagesOf(rig.port, id)).map((m) => m.role),
      ['user', 'assistant', 'tool', 'user', 'assistant'],
    );
  } finally {
    ws.close();
  }
});

test('POST /api/restart during a turn: the turn finishes with its reply, new turns get 503 with Retry-After, then the restart happens', async () => {
  const slow = await newChat(rig.port);
  const other = await newChat(rig.port);
  assert.is((await status(rig.port)).restarts, 0);
  const deltas = Array.from({ length: 20 }, (_, i) => `part${i} `);
  // The reply waits half-way until every refusal below was seen: the turn is surely still
  // running then, however slow the machine.
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  rig.fake.enqueue({
    parts: [{ text: deltas.slice(0, 10) }, { gate }, { text: deltas.slice(10) }],
    delayMs: 100,
    match: { stream: true },
  });
  const from = rig.fake.requests.length;
  let settled = false;
  const waiting = api(rig.port, 'POST', `/api/chat/${slow}/turn`, {
    message: 'take your time',
  }).finally(() => (settled = true));
  await rig.fake.waitForRequests(from + 1);

  const restart = await api(rig.port, 'POST', '/api/restart', {});
  assert.is(restart.status, 202);

  // While the turn runs, new turns are refused in every mode, with a Retry-After.
  const refused = await api(rig.port, 'POST', `/api/chat/${other}/turn`, { message: 'hello?' });
  assert.not.ok(settled, 'the running turn is still going when the new one is refused');
  assert.is(refused.status, 503, JSON.stringify(refused.body));
  assert.is(refused.body.error.code, 'draining');
  const retryAfter = Number(refused.headers['retry-after']);
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30,
    `Retry-After: ${refused.headers['retry-after']}`,
  );
  const refusedAsync = await api(rig.port, 'POST', `/api/chat/${other}/turn?wait=false`, {
    message: 'hello?',
  });
  assert.is(refusedAsync.status, 503);
  const refusedSse = await sse(rig.port, `/api/chat/${other}/turn`, { message: 'hello?' });
  assert.is(refusedSse.status, 503);
  assert.ok(refusedSse.headers['retry-after']);
  const ws = await connectWs(rig.port, [`session:${other}`]);
  try {
    ws.send({
      type: 'turn',
      session_id: other,
      message: { text: 'hello?', attachments: [] },
      request_id: 'd',
    });
    const refusedWs = await ws.waitFrame(
      (f) => f.request_id === 'd',
      'the answer to the turn command',
    );
    assert.equal([refusedWs.type, refusedWs.error?.code], ['error', 'draining']);
  } finally {
    ws.close();
  }
  const refusedChat = await api(rig.port, 'POST', '/api/chat', { message: 'a new chat' });
  assert.is(refusedChat.status, 503);
  assert.is((await api(rig.port, 'GET', '/api/health')).body.status, 'draining');

  // The running turn completes, its reply kept.
  release();
  const done = await waiting;
  assert.is(done.status, 200);
  assert.is(done.body.status, 'completed', JSON.stringify(done.body));
  assert.is(done.body.reply, deltas.join(''));

  // Then the restart completes, on the same port.
  const after = await waitFor(
    async () => {
      const s = await status(rig.port);
      return s.restarts === 1 && s.state === 'running' ? s : undefined;
    },
    20_000,
    'the restart to finish',
  );
  assert.is(after.last_restart_error, null);
  assert.equal(
    (await messagesOf(rig.port, slow)).map((m) => [m.role, m.content.text]),
    [
      ['user', 'take your time'],
      ['assistant', deltas.join('')],
    ],
  );
  assert.equal(await messagesOf(rig.port, other), [], 'refused turns left nothing behind');

  // And turns work again.
  rig.fake.enqueue({ parts: [{ text: 'back online' }] });
  const again = await api(rig.port, 'POST', `/api/chat/${other}/turn`, { message: 'hello again' });
  assert.is(again.status, 200, JSON.stringify(again.body));
  assert.is(again.body.reply, 'back online');
});

test.run();
