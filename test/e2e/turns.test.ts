import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { httpError, textReply, type FakeProtocol } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  assertIncreasing,
  connectWs,
  joined,
  messagesOf,
  newChat,
  ofTurn,
  sse,
  startRig,
  type TurnRig,
} from '../helpers/turns.js';

/**
 * A turn from the user's side, against the real server and the fake provider: the three ways to
 * answer (JSON, SSE, 202 + /ws) with both provider protocols, tools, reasoning shown or hidden,
 * interrupt over HTTP, a busy session, a provider failing mid-stream, and a 429 that is retried.
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig();
});
test.after(async () => {
  await rig?.stop();
});
// A test that failed half-way leaves no scripts behind for the next one.
test.before.each(() => rig.fake.reset());

const protocols: Array<[FakeProtocol, string]> = [
  ['openai', 'oa'],
  ['anthropic', 'an'],
];

/** The requests the fake provider received from `from` on. */
const requestsSince = (from: number) => rig.fake.requests.slice(from);

for (const [protocol, model] of protocols) {
  test(`${protocol}: JSON answer — a tool call with fragmented arguments runs current_time, then the reply`, async () => {
    const id = await newChat(rig.port, { model_id: model });
    const from = rig.fake.requests.length;
    rig.fake.enqueue(
      {
        parts: [
          { text: ['Let me ', 'check.'] },
          {
            toolCall: {
              id: 'call_time_1',
              name: 'current_time',
              arguments: ['{"ti', 'me_zo', 'ne": "Euro', 'pe/Paris"', '}'],
            },
          },
        ],
        usage: { input: 100, output: 20 },
      },
      { parts: [{ text: ['It is ', 'late ', 'in Paris.'] }], usage: { input: 150, output: 10 } },
    );
    const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, {
      message: 'What time is it in Paris?',
    });
    assert.is(res.status, 200, JSON.stringify(res.body));
    const b = res.body;
    assert.is(b.session_id, id);
    assert.match(b.turn_id, /^turn_/);
    assert.is(b.status, 'completed');
    assert.is(b.reply, 'It is late in Paris.');
    assert.is(b.stop_reason, 'end_turn');
    assert.is(b.usage.input, 250, 'usage adds up both model calls');
    assert.is(b.usage.output, 30);
    assert.is(b.error, undefined);

    // The new messages, in order: the user's, the tool call, its result, the reply.
    assert.equal(
      b.messages.map((m: any) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    const [user, call, result, reply] = b.messages;
    assert.is(user.content.text, 'What time is it in Paris?');
    assert.is(call.content.text, 'Let me check.');
    assert.is(call.content.tool_calls.length, 1);
    assert.is(call.content.tool_calls[0].id, 'call_time_1');
    assert.is(call.content.tool_calls[0].name, 'current_time');
    assert.equal(
      JSON.parse(call.content.tool_calls[0].arguments),
      { time_zone: 'Europe/Paris' },
      'the fragments are joined into the whole arguments',
    );
    assert.is(result.content.tool_call_id, 'call_time_1');
    assert.is(result.content.is_error, undefined);
    const out = JSON.parse(result.content.output);
    assert.is(out.time_zone, 'Europe/Paris', 'current_time really ran with the arguments');
    assert.ok(
      Math.abs(Date.parse(out.utc) - Date.now()) < 60_000,
      `current_time tells the time: ${out.utc}`,
    );
    assert.is(reply.content.text, 'It is late in Paris.');
    assert.equal(
      await messagesOf(rig.port, id),
      b.messages,
      'the answer lists exactly what was stored',
    );

    // The provider was called twice; the second call carried the tool's result back.
    const reqs = requestsSince(from);
    assert.is(reqs.length, 2);
    assert.ok(reqs.every((r) => r.protocol === protocol && r.stream && r.answer === 'script'));
    const tools = (reqs[0]!.body!.tools as any[]).map((t) =>
      protocol === 'openai' ? t.function.name : t.name,
    );
    assert.ok(tools.includes('current_time'), `tools offered: ${tools}`);
    assert.not.ok(tools.includes('update_goal'), 'update_goal only with an active goal');
    const sent = reqs[1]!.body!.messages as any[];
    if (protocol === 'openai') {
      const toolMsg = sent.find((m) => m.role === 'tool');
      assert.is(toolMsg.tool_call_id, 'call_time_1');
      assert.is(toolMsg.content, result.content.output);
    } else {
      const block = sent
        .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
        .find((c: any) => c.type === 'tool_result');
      assert.is(block.tool_use_id, 'call_time_1');
      assert.is(block.content, result.content.output);
    }
  });

  test(`${protocol}: SSE answer — reasoning shown, text streamed, ends after turn.completed`, async () => {
    const id = await newChat(rig.port, {
      model_id: model,
      show_reasoning: true,
      reasoning_effort: 'high',
    });
    rig.fake.enqueue({
      parts: [
        { reasoning: ['Weighing ', 'the ', 'options.'] },
        { text: ['Go ', 'with ', 'plan ', 'B.'] },
      ],
      delayMs: 40,
      usage: { input: 30, output: 12 },
    });
    const s = await sse(rig.port, `/api/chat/${id}/turn`, { message: 'Which plan?' });
    // The session's reasoning effort reached the provider.
    const sent = rig.fake.requests.at(-1)!.body!;
    if (protocol === 'openai') assert.is(sent.reasoning_effort, 'high');
    else assert.equal(sent.thinking, { type: 'enabled', budget_tokens: 16384 });
    assert.is(s.status, 200);
    assert.match(String(s.headers['content-type']), /^text\/event-stream/);
    const [accepted, ...rest] = s.events;
    assert.is(accepted!.event, 'turn.accepted');
    const turnId = accepted!.data.data.turn_id as string;
    assert.match(turnId, /^turn_/);
    assert.is(accepted!.data.data.session_id, id);
    // Every SSE event, turn.accepted too, is one turn event: its name is the event type, its id the seq.
    for (const e of s.events) {
      assert.is(e.event, e.data.type);
      assert.is(e.id, String(e.data.seq));
      assert.is(e.data.topic, `session:${id}`);
      assert.is(e.data.data.turn_id, turnId);
    }
    const events = rest.map((e) => e.data);
    assertIncreasing(events, 'SSE');
    assert.ok(
      accepted!.data.seq < events[0].seq,
      "turn.accepted comes before the turn's events in seq order too",
    );
    assert.is(events[0].type, 'turn.started');
    assert.is(events[0].data.message.content.text, 'Which plan?');
    assert.is(events.at(-1).type, 'turn.completed', 'the stream ends after the final event');
    assert.is(events.filter((e) => e.type === 'turn.completed').length, 1);
    assert.is(joined(events, 'turn.reasoning_delta'), 'Weighing the options.');
    assert.is(joined(events, 'turn.text_delta'), 'Go with plan B.');
    const lastReasoning = events.map((e) => e.type).lastIndexOf('turn.reasoning_delta');
    const firstText = events.findIndex((e) => e.type === 'turn.text_delta');
    assert.ok(lastReasoning < firstText, 'reasoning comes before the text it led to');
    const done = events.at(-1).data;
    assert.is(done.reply, 'Go with plan B.');
    assert.is(done.stop_reason, 'end_turn');
    assert.is(done.usage.input, 30);
    assert.is(done.usage.output, 12);
    const committed = events
      .filter((e) => e.type === 'message.committed')
      .map((e) => e.data.message);
    assert.is(committed.length, 1);
    assert.is(committed[0].role, 'assistant');
    assert.is(committed[0].content.text, 'Go with plan B.');
    assert.is(committed[0].content.reasoning[0].text, 'Weighing the options.');
    // Streamed, not buffered: the first text arrived in an earlier read than the end.
    const sseFirstText = s.events.find((e) => e.event === 'turn.text_delta')!;
    assert.ok(
      sseFirstText.chunk < s.events.at(-1)!.chunk,
      'text reached the client before the turn ended',
    );
  });

  test(`${protocol}: 202 answer (?wait=false) — events on /ws, reasoning hidden when show_reasoning is off`, async () => {
    const id = await newChat(rig.port, {
      model_id: model,
      show_reasoning: false,
      reasoning_effort: 'off',
    });
    const ws = await connectWs(rig.port, [`session:${id}`]);
    try {
      rig.fake.enqueue({
        parts: [{ reasoning: ['secret ', 'thoughts'] }, { text: ['Visible ', 'answer.'] }],
        delayMs: 20,
      });
      const res = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
        message: 'Answer me',
      });
      assert.is(res.status, 202, JSON.stringify(res.body));
      const turnId = res.body.turn_id as string;
      assert.match(turnId, /^turn_/);
      assert.is(res.body.session_id, id);
      const end = await ws.waitEvent(
        (e) =>
          e.data?.turn_id === turnId &&
          e.type.startsWith('turn.') &&
          ['turn.completed', 'turn.failed', 'turn.interrupted'].includes(e.type),
        'the end of the turn',
      );
      assert.is(end.type, 'turn.completed');
      assert.is(end.data.reply, 'Visible answer.');
      const events = ofTurn(ws.events, turnId);
      assertIncreasing(events);
      assert.equal(
        events.map((e) => e.type).filter((t) => t !== 'turn.text_delta'),
        ['turn.started', 'message.committed', 'turn.completed'],
      );
      assert.is(joined(events, 'turn.text_delta'), 'Visible answer.');
      assert.is(
        events.filter((e) => e.type === 'turn.reasoning_delta').length,
        0,
        'no reasoning reaches the client',
      );
      const stored = await messagesOf(rig.port, id);
      assert.equal(
        stored.map((m) => [m.role, m.content.text]),
        [
          ['user', 'Answer me'],
          ['assistant', 'Visible answer.'],
        ],
      );
      const sent = rig.fake.requests.at(-1)!.body!;
      assert.is(sent.reasoning_effort, undefined, 'reasoning effort off asks for no reasoning');
      assert.is(sent.thinking, undefined);
    } finally {
      ws.close();
    }
  });
}

test('POST /api/chat with a message creates the chat and runs its first turn (201)', async () => {
  rig.fake.enqueue(textReply('Hello', ' there'));
  const res = await api(rig.port, 'POST', '/api/chat', { title: 'First', message: 'Hi' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.status, 'completed');
  assert.is(res.body.reply, 'Hello there');
  assert.is(res.body.session.title, 'First');
  assert.is(res.body.session.id, res.body.session_id);
  assert.equal(
    res.body.messages.map((m: any) => m.role),
    ['user', 'assistant'],
  );
});

test('a turn validates its body and its session', async () => {
  const id = await newChat(rig.port);
  assert.is((await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: '' })).status, 400);
  assert.is((await api(rig.port, 'POST', `/api/chat/${id}/turn`, { text: 'hi' })).status, 400);
  const ghost = await api(rig.port, 'POST', '/api/chat/s_nosuchsession/turn', { message: 'hi' });
  assert.is(ghost.status, 404);
  const badAttachment = await api(rig.port, 'POST', `/api/chat/${id}/turn`, {
    message: 'hi',
    attachments: ['never-uploaded.txt'],
  });
  assert.is(badAttachment.status, 400);
  assert.match(badAttachment.body.error.message, /upload/);
  assert.equal(await messagesOf(rig.port, id), [], 'a refused turn stores nothing');
});

test('interrupt over HTTP: a stalled stream stops, the partial text is kept as an interrupted reply', async () => {
  const id = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    const from = rig.fake.requests.length;
    rig.fake.enqueue({ parts: [{ text: ['Half ', 'an ', 'answer'] }, { stall: true }] });
    // The waiting JSON call is answered when the turn ends, whatever ends it.
    const waiting = api(rig.port, 'POST', `/api/chat/${id}/turn`, {
      message: 'Tell me everything',
    });
    await ws.waitEvent((e) => e.type === 'turn.text_delta', 'streamed text');
    await waitFor(
      () => joined(ws.events, 'turn.text_delta') === 'Half an answer',
      5000,
      'all the text before the stall',
    );

    const int = await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {});
    assert.is(int.status, 200, JSON.stringify(int.body));
    assert.is(int.body.interrupted, true);
    const res = await waiting;
    assert.is(res.status, 200);
    assert.is(int.body.turn_id, res.body.turn_id);
    assert.is(res.body.status, 'interrupted');
    const ended = await ws.waitEvent((e) => e.type === 'turn.interrupted', 'turn.interrupted');
    assert.is(ended.data.turn_id, res.body.turn_id);
    assert.is(
      ws.events.filter((e) => e.type === 'turn.completed' || e.type === 'turn.failed').length,
      0,
    );

    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.is(stored[1].content.text, 'Half an answer', 'what the user saw is kept');
    assert.is(stored[1].content.stop_reason, 'interrupted');
    assert.equal(res.body.messages, stored, 'the waiting call lists the kept reply');
    await waitFor(
      () => requestsSince(from)[0]?.closed,
      5000,
      'the provider request to be cancelled',
    );

    // Nothing runs now: a second interrupt has nothing to stop, and the session takes a new turn.
    const again = await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {});
    assert.equal(again.body, { interrupted: false, turn_id: null });
    rig.fake.enqueue(textReply('Back.'));
    const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'Go on' });
    assert.is(next.body.status, 'completed');
    assert.is(next.body.reply, 'Back.');
  } finally {
    ws.close();
  }
});

test('a busy session answers 409 turn_in_progress, over HTTP (all modes) and /ws; other sessions are free', async () => {
  const id = await newChat(rig.port);
  const other = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue({ parts: [{ text: 'working' }, { stall: true }], match: { stream: true } });
    const first = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
      message: 'long job',
    });
    assert.is(first.status, 202);
    await ws.waitEvent((e) => e.type === 'turn.started', 'turn.started');

    const busy = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'another' });
    assert.is(busy.status, 409);
    assert.is(busy.body.error.code, 'turn_in_progress');
    assert.match(busy.body.error.message, new RegExp(first.body.turn_id));
    assert.is(
      (await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, { message: 'another' }))
        .status,
      409,
    );
    const busySse = await sse(rig.port, `/api/chat/${id}/turn`, { message: 'another' }).catch(
      (e: Error) => e,
    );
    assert.ok(!(busySse instanceof Error) && busySse.status === 409, 'SSE mode is refused too');
    ws.send({
      type: 'turn',
      session_id: id,
      message: { text: 'another', attachments: [] },
      request_id: 'r1',
    });
    const refused = await ws.waitFrame(
      (f) => f.request_id === 'r1',
      'the answer to the turn command',
    );
    assert.is(refused.type, 'error');
    assert.is(refused.error.code, 'turn_in_progress');

    // Another session is not blocked.
    rig.fake.enqueue(textReply('free'));
    const free = await api(rig.port, 'POST', `/api/chat/${other}/turn`, { message: 'hi' });
    assert.is(free.body.status, 'completed');
    assert.is(free.body.reply, 'free');

    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.content.text),
      ['long job'],
      'refused turns store nothing',
    );
  } finally {
    await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {});
    ws.close();
  }
});

for (const [protocol, model] of protocols) {
  test(`${protocol}: a provider error mid-stream ends the turn as failed with a reason`, async () => {
    const id = await newChat(rig.port, { model_id: model });
    rig.fake.enqueue({
      parts: [
        { text: ['Starting '] },
        { error: { type: 'server_error', message: 'upstream exploded' } },
      ],
    });
    const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'try' });
    assert.is(res.status, 200);
    assert.is(res.body.status, 'failed');
    assert.is(res.body.reply, null);
    assert.type(res.body.error.reason, 'string');
    assert.match(res.body.error.reason, /^provider_/);
    assert.match(res.body.error.message, /upstream exploded/);
    const stored = await messagesOf(rig.port, id);
    assert.is(stored[0].role, 'user', 'the user message stays');
    assert.is(stored[0].content.text, 'try');
    // The session is usable again.
    rig.fake.enqueue(textReply('fine now'));
    const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
    assert.is(next.body.status, 'completed');
  });
}

test('a 429 with Retry-After is retried after the wait, and the turn completes', async () => {
  const id = await newChat(rig.port, { model_id: 'an' });
  const from = rig.fake.requests.length;
  rig.fake.enqueue(httpError(429, { retryAfter: 1 }), textReply('after ', 'the wait'));
  const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'busy provider?' });
  assert.is(res.body.status, 'completed', JSON.stringify(res.body));
  assert.is(res.body.reply, 'after the wait');
  const reqs = requestsSince(from);
  assert.is(reqs.length, 2, 'one refused request, one retry');
  assert.ok(
    reqs[1]!.at - reqs[0]!.at >= 950,
    `the retry waited for Retry-After (${Math.round(reqs[1]!.at - reqs[0]!.at)} ms)`,
  );
  assert.equal(reqs[1]!.body!.messages, reqs[0]!.body!.messages, 'the retry is the same request');
});

test.run();
