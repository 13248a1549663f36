import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  connectWs,
  messagesOf,
  newChat,
  startRig,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * Goals that keep working: after a turn, a session with an active goal takes continuation turns
 * (each visible as a turn with origin 'goal') until the model marks the goal complete or blocked,
 * the token budget runs out, a continuation makes no progress, or agent.max_continuations.
 */

const MAX_CONTINUATIONS = 2;
let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ config: `agent:\n  max_continuations: ${MAX_CONTINUATIONS}\n` });
});
test.after(async () => {
  await rig?.stop();
});
// A test that failed half-way leaves no scripts behind for the next one.
test.before.each(() => rig.fake.reset());

const toolCall = (name: string, args: unknown, usage = { input: 10, output: 5 }): FakeReply => ({
  parts: [{ toolCall: { name, arguments: JSON.stringify(args) } }],
  usage,
});
const text = (t: string, usage = { input: 10, output: 5 }): FakeReply => ({
  parts: [{ text: t }],
  usage,
});

interface Chain {
  id: string;
  ws: WsClient;
  /** turn.started events of the session, in order. */
  started: WsEvent[];
  goal: any;
  requests: number;
}

/**
 * Sets a goal, sends one user turn, and waits until the session is idle again after `turns`
 * turns have ended: the chain of continuations is over, and no turn runs.
 */
async function runGoal(
  goal: Record<string, unknown>,
  scripts: FakeReply[],
  turns: number,
): Promise<Chain> {
  const id = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    const set = await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, goal);
    assert.is(set.status, 201);
    const from = rig.fake.requests.length;
    rig.fake.enqueue(...scripts);
    const first = await api(rig.port, 'POST', `/api/chat/${id}/turn`, {
      message: 'Work on the goal',
    });
    assert.is(first.body.status, 'completed', JSON.stringify(first.body));
    const ended = () =>
      ws.events.filter(
        (e) =>
          e.type === 'turn.completed' || e.type === 'turn.failed' || e.type === 'turn.interrupted',
      ).length;
    await waitFor(() => ended() >= turns, 15_000, `${turns} turns to end`);
    // Idle: nothing left to interrupt (a stray continuation would show up as an extra turn below).
    await waitFor(
      async () =>
        (await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {})).body.turn_id === null,
      10_000,
      'the session to be idle',
    );
    const started = ws.events.filter((e) => e.type === 'turn.started');
    assert.is(ended(), started.length, 'every turn that started ended');
    assert.is(rig.fake.pending, 0, 'every scripted reply was used');
    return {
      id,
      ws,
      started,
      goal: (await api(rig.port, 'GET', `/api/sessions/${id}/goal`)).body,
      requests: rig.fake.requests.length - from,
    };
  } catch (err) {
    ws.close();
    throw err;
  }
}

/** Continuations are turns: origin 'goal', a stored user message marked as a continuation. */
function assertContinuations(chain: Chain, count: number): void {
  assert.equal(
    chain.started.map((e) => e.data.origin),
    ['http', ...Array(count).fill('goal')],
    'one user turn, then the continuations',
  );
  for (const e of chain.started.slice(1)) {
    assert.is(e.data.message.role, 'user');
    assert.is(e.data.message.content.continuation, true);
    assert.type(e.data.message.content.text, 'string');
  }
  assert.is(
    chain.started
      .filter((e) => e.data.origin === 'goal')
      .every((e) =>
        chain.ws.events.some(
          (x) => x.type === 'turn.completed' && x.data.turn_id === e.data.turn_id,
        ),
      ),
    true,
    'each continuation completed',
  );
}

for (const status of ['complete', 'blocked'] as const) {
  test(`a goal chain stops when the model calls update_goal ${status}`, async () => {
    const chain = await runGoal(
      { objective: 'Write the quarterly report' },
      [
        text('Starting on the report.'),
        toolCall('update_goal', { status, note: `it is ${status}` }),
        text(status === 'complete' ? 'The report is done.' : 'I need your numbers.'),
      ],
      2,
    );
    try {
      assertContinuations(chain, 1);
      assert.is(chain.goal.status, status);
      assert.is(chain.goal.usage.turns, 2);
      assert.is(chain.requests, 3);
      const updates = chain.ws.events.filter((e) => e.type === 'goal.updated');
      assert.ok(
        updates.some((e) => e.data.status === status),
        `goal.updated with ${status}`,
      );
      assert.is(updates.at(-1)!.data.status, status);
      const result = chain.ws.events.find((e) => e.type === 'turn.tool_result')!;
      assert.equal([result.data.name, result.data.is_error], ['update_goal', false]);
      assert.match(result.data.output, new RegExp(status));
      assert.not.ok(chain.ws.events.some((e) => e.type === 'goal.paused'));

      // The model was told about the goal and given the tool while it was active.
      const reqs = rig.fake.requests.slice(-3);
      for (const r of reqs.slice(0, 2)) {
        const tools = (r.body!.tools as any[]).map((t) => t.function?.name ?? t.name);
        assert.ok(tools.includes('update_goal'), `update_goal offered: ${tools}`);
        assert.match(JSON.stringify(r.body!.messages), /Write the quarterly report/);
      }
      // Once the goal is closed, the system prompt stops asking for it.
      assert.not.match(JSON.stringify(reqs[2]!.body!.messages), /Write the quarterly report/);
      const stored = await messagesOf(rig.port, chain.id);
      assert.equal(
        stored.filter((m) => m.role === 'user').map((m) => m.content.continuation === true),
        [false, true],
      );
    } finally {
      chain.ws.close();
    }
  });
}

test('a goal chain stops at the token budget (budget_limited)', async () => {
  const chain = await runGoal(
    { objective: 'Count to a million', token_budget: 250 },
    [
      text('Counting.', { input: 50, output: 20 }), // 70 of 250
      toolCall('current_time', {}, { input: 80, output: 20 }),
      text('Still counting.', { input: 90, output: 10 }), // 270 of 250
    ],
    2,
  );
  try {
    assertContinuations(chain, 1);
    assert.is(chain.goal.status, 'budget_limited');
    assert.equal(chain.goal.usage, { input_tokens: 220, output_tokens: 50, turns: 2 });
    assert.is(chain.requests, 3);
    assert.is(
      chain.ws.events.filter((e) => e.type === 'goal.updated').at(-1)!.data.status,
      'budget_limited',
    );
    assert.not.ok(chain.ws.events.some((e) => e.type === 'goal.paused'));
  } finally {
    chain.ws.close();
  }
});

test('a continuation that makes no tool call pauses the goal (no_progress)', async () => {
  const chain = await runGoal(
    { objective: 'Plan the trip' },
    [text('Looking into it.'), text('I am thinking about the trip.')],
    2,
  );
  try {
    assertContinuations(chain, 1);
    assert.is(chain.goal.status, 'paused');
    assert.is(chain.requests, 2);
    const paused = chain.ws.events.filter((e) => e.type === 'goal.paused');
    assert.is(paused.length, 1);
    assert.is(paused[0]!.data.reason, 'no_progress');
    assert.is(
      chain.ws.events.filter((e) => e.type === 'goal.updated').at(-1)!.data.status,
      'paused',
    );
  } finally {
    chain.ws.close();
  }
});

test(`agent.max_continuations (${MAX_CONTINUATIONS}) caps a chain that keeps making progress`, async () => {
  const progress = () => [toolCall('current_time', {}), text('Made progress.')];
  const chain = await runGoal(
    { objective: 'Never-ending task' },
    [text('Go.'), ...progress(), ...progress()],
    1 + MAX_CONTINUATIONS,
  );
  try {
    assertContinuations(chain, MAX_CONTINUATIONS);
    assert.is(chain.requests, 1 + 2 * MAX_CONTINUATIONS);
    const paused = chain.ws.events.filter((e) => e.type === 'goal.paused');
    assert.is(paused.length, 1);
    assert.is(paused[0]!.data.reason, 'max_continuations');
    assert.is(chain.goal.status, 'paused', 'the stored goal says what the event said');
    assert.is(
      chain.ws.events.filter((e) => e.type === 'goal.updated').at(-1)!.data.status,
      'paused',
    );
  } finally {
    chain.ws.close();
  }
});

test('a goal that is not active takes no continuation turns', async () => {
  const id = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, {
      objective: 'Later',
      status: 'paused',
    });
    const from = rig.fake.requests.length;
    rig.fake.enqueue(text('Just this.'));
    const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'One thing' });
    assert.is(res.body.status, 'completed', JSON.stringify(res.body));
    await waitFor(
      async () =>
        (await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {})).body.turn_id === null,
      10_000,
      'the session to be idle',
    );
    const reqs = rig.fake.requests.slice(from);
    assert.is(
      reqs.length,
      1,
      `one model call: ${JSON.stringify(reqs.map((r) => [r.path, r.stream, r.answer]))}`,
    );
    const tools = (reqs[0]!.body!.tools as any[]).map((t) => t.function?.name ?? t.name);
    assert.not.ok(tools.includes('update_goal'), `no update_goal tool for a paused goal: ${tools}`);
    assert.equal(
      ws.events.filter((e) => e.type === 'turn.started').map((e) => e.data.origin),
      ['http'],
      'no continuation turn',
    );
    const goal = (await api(rig.port, 'GET', `/api/sessions/${id}/goal`)).body;
    assert.equal([goal.status, goal.usage.turns], ['paused', 1]);
  } finally {
    ws.close();
  }
});

test.run();
