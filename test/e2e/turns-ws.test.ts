import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  assertIncreasing,
  connectWs,
  joined,
  messagesOf,
  newChat,
  ofTurn,
  startRig,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * /ws as a client sees it: turns sent as commands, two subscribers getting the same complete,
 * ordered stream, resume with `since` after a dropped connection, resync, interrupt. The chats
 * have titles, so their topics carry the turns' events alone (no session.updated naming them).
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

const END = new Set(['turn.completed', 'turn.failed', 'turn.interrupted']);
const endOf = (ws: WsClient, turnId: string, timeoutMs = 10_000) =>
  ws.waitEvent(
    (e) => e.data?.turn_id === turnId && END.has(e.type),
    `the end of ${turnId}`,
    timeoutMs,
  );

test('a turn sent over /ws reaches two subscribers complete, identical and in order', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const topic = `session:${id}`;
  const [a, b] = await Promise.all([connectWs(rig.port, [topic]), connectWs(rig.port, [topic])]);
  try {
    const words = Array.from({ length: 120 }, (_, i) => `w${i} `);
    rig.fake.enqueue(
      {
        parts: [
          { reasoning: ['think ', 'first'] },
          { text: words.slice(0, 60) },
          { toolCall: { id: 'c1', name: 'current_time', arguments: ['{"time_zone"', ':"UTC"}'] } },
        ],
      },
      { parts: [{ text: words.slice(60) }], usage: { input: 40, output: 60 } },
    );
    a.send({
      type: 'turn',
      session_id: id,
      message: { text: 'stream a lot', attachments: [] },
      request_id: 'go',
    });
    const accepted = await a.waitFrame((f) => f.request_id === 'go', 'turn.accepted');
    assert.is(accepted.type, 'turn.accepted', JSON.stringify(accepted));
    const turnId = accepted.turn_id as string;
    assert.match(turnId, /^turn_/);
    await Promise.all([endOf(a, turnId), endOf(b, turnId)]);

    const ea = ofTurn(a.events, turnId);
    const eb = ofTurn(b.events, turnId);
    assert.equal(ea, eb, 'both subscribers saw exactly the same events');
    assertIncreasing(ea, 'subscriber events');
    assert.is(
      ea.length,
      a.events.filter((e) => e.topic === topic).length,
      'every event on the topic belongs to the turn',
    );
    const types = ea.map((e) => e.type);
    assert.is(types[0], 'turn.started');
    assert.is(ea[0]!.data.origin, 'ws');
    assert.is(types.at(-1), 'turn.completed');
    const order = [
      'turn.started',
      'turn.tool_call_started',
      'turn.tool_call',
      'turn.tool_result',
      'turn.completed',
    ].map((t) => types.indexOf(t));
    assert.ok(
      order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!)),
      `events in order: ${types.join(',')}`,
    );
    const call = ea.find((e) => e.type === 'turn.tool_call')!;
    assert.equal(
      [call.data.call_id, call.data.name, JSON.parse(call.data.arguments)],
      ['c1', 'current_time', { time_zone: 'UTC' }],
    );
    const result = ea.find((e) => e.type === 'turn.tool_result')!;
    assert.is(result.data.is_error, false);
    assert.is(JSON.parse(result.data.output).time_zone, 'UTC');
    assert.is(result.data.message.role, 'tool');
    assert.is(joined(ea, 'turn.reasoning_delta'), 'think first');
    const done = ea.at(-1)!;
    assert.is(
      joined(ea, 'turn.text_delta'),
      words.join(''),
      'concatenated text is everything the model said',
    );
    assert.is(done.data.reply, words.slice(60).join(''), 'the reply is the last step’s text');
    const committed = ea.filter((e) => e.type === 'message.committed').map((e) => e.data.message);
    assert.equal(
      committed.map((m) => m.role),
      ['assistant', 'assistant'],
    );
    assert.is(committed[0].content.text + committed[1].content.text, words.join(''));
  } finally {
    a.close();
    b.close();
  }
});

test('resume with since after a dropped connection loses nothing and repeats nothing', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const topic = `session:${id}`;
  const full = await connectWs(rig.port, [topic]);
  const first = await connectWs(rig.port, [topic]);
  let second: WsClient | undefined;
  try {
    const words = Array.from({ length: 40 }, (_, i) => `d${i} `);
    rig.fake.enqueue({ parts: [{ text: words }], delayMs: 25 });
    full.send({ type: 'turn', session_id: id, message: { text: 'slow stream', attachments: [] } });
    const turnId = (await full.waitFrame((f) => f.type === 'turn.accepted', 'turn.accepted'))
      .turn_id as string;

    // Drop mid-turn, after some text arrived.
    await waitFor(
      () => first.events.filter((e) => e.type === 'turn.text_delta').length >= 3,
      10_000,
      'some text on the first connection',
    );
    first.drop();
    const lastSeen = first.events.at(-1)!.seq;
    // Events go on while it is away.
    await waitFor(
      () => full.events.filter((e) => e.seq > lastSeen).length >= 3,
      10_000,
      'events while disconnected',
    );
    assert.not.ok(
      full.events.some((e) => e.type === 'turn.completed'),
      'the turn is still running when the client comes back',
    );

    second = await connectWs(rig.port, [topic], { [topic]: lastSeen });
    await Promise.all([endOf(full, turnId), endOf(second, turnId)]);
    assert.is(
      second.events[0]!.seq,
      lastSeen + 1,
      'the replay starts right after the last event seen',
    );
    const union = [...first.events, ...second.events];
    assertIncreasing(union, 'union of both connections');
    assert.equal(
      union,
      full.events,
      'the two connections together saw exactly what an unbroken one saw',
    );
    assert.is(joined(union, 'turn.text_delta'), words.join(''));
    assert.is(union.at(-1)!.type, 'turn.completed');
  } finally {
    full.close();
    first.close();
    second?.close();
  }
});

test('subscribe: seq and epoch in the answer; a since from the future is told to resync', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const topic = `session:${id}`;
  rig.fake.enqueue({ parts: [{ text: 'one' }] });
  const watcher = await connectWs(rig.port, [topic]);
  let late: WsClient | undefined;
  let stale: WsClient | undefined;
  try {
    assert.equal(watcher.subscribed.seq, { [topic]: 0 });
    assert.type(watcher.subscribed.epoch, 'string');
    watcher.send({ type: 'turn', session_id: id, message: { text: 'hi', attachments: [] } });
    const turnId = (await watcher.waitFrame((f) => f.type === 'turn.accepted')).turn_id as string;
    const end = await endOf(watcher, turnId);

    late = await connectWs(rig.port, [topic], { [topic]: 0 });
    assert.is(late.subscribed.seq[topic], end.seq, 'subscribed tells the current seq');
    assert.equal(late.events, watcher.events, 'since 0 replays the whole topic');

    stale = await connectWs(rig.port, [topic], { [topic]: end.seq + 50 });
    const resync = await stale.waitFrame((f) => f.type === 'resync', 'a resync');
    assert.equal([resync.topic, resync.seq], [topic, end.seq]);
    assert.type(resync.reason, 'string');
    assert.equal(stale.events, [], 'nothing is replayed from an unknown point');
  } finally {
    watcher.close();
    late?.close();
    stale?.close();
  }
});

test('a since older than the kept events is told to resync', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const topic = `session:${id}`;
  // Each goal edit is one event on the session's topic; more than the server keeps (1,024).
  const put = (i: number) =>
    api(rig.port, 'PUT', `/api/sessions/${id}/goal`, { objective: `step ${i}` });
  for (let i = 0; i < 1100; i += 20)
    await Promise.all(Array.from({ length: 20 }, (_, k) => put(i + k)));
  const ws = await connectWs(rig.port, [topic], { [topic]: 1 });
  try {
    const resync = await ws.waitFrame((f) => f.type === 'resync', 'a resync');
    assert.equal([resync.topic, resync.seq], [topic, 1100]);
    assert.match(resync.reason, /no longer kept/);
    assert.equal(ws.events, [], 'no partial replay');
    assert.is(ws.subscribed.seq[topic], 1100, 'still subscribed from now on');
    await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, { objective: 'one more' });
    assert.is((await ws.waitEvent((e) => e.type === 'goal.updated')).seq, 1101);
  } finally {
    ws.close();
  }
});

test('interrupt over /ws: interrupt.result, turn.interrupted, the partial text kept', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue({ parts: [{ text: ['Partial ', 'thought'] }, { stall: true }] });
    ws.send({
      type: 'turn',
      session_id: id,
      message: { text: 'long answer please', attachments: [] },
    });
    const turnId = (await ws.waitFrame((f) => f.type === 'turn.accepted')).turn_id as string;
    await waitFor(
      () => joined(ofTurn(ws.events, turnId), 'turn.text_delta') === 'Partial thought',
      5000,
      'the text before the stall',
    );

    ws.send({ type: 'interrupt', session_id: id, request_id: 'stop' });
    const result = await ws.waitFrame((f) => f.request_id === 'stop', 'interrupt.result');
    assert.equal(
      [result.type, result.interrupted, result.turn_id],
      ['interrupt.result', true, turnId],
    );
    const end = await endOf(ws, turnId);
    assert.is(end.type, 'turn.interrupted');
    const committed = ofTurn(ws.events, turnId).filter(
      (e: WsEvent) => e.type === 'message.committed',
    );
    assert.is(committed.length, 1);
    assert.is(committed[0]!.data.message.content.text, 'Partial thought');
    assert.is(committed[0]!.data.message.content.stop_reason, 'interrupted');
    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => [m.role, m.content.text, m.content.stop_reason]),
      [
        ['user', 'long answer please', undefined],
        ['assistant', 'Partial thought', 'interrupted'],
      ],
    );

    ws.send({ type: 'interrupt', session_id: id, request_id: 'again' });
    const idle = await ws.waitFrame((f) => f.request_id === 'again', 'the second interrupt.result');
    assert.equal([idle.interrupted, idle.turn_id], [false, null], 'nothing left to interrupt');
  } finally {
    ws.close();
  }
});

test('an interrupt before any text keeps no empty reply', async () => {
  const id = await newChat(rig.port, { title: 'Over /ws' });
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue({ parts: [{ stall: true }] });
    const from = rig.fake.requests.length;
    ws.send({ type: 'turn', session_id: id, message: { text: 'wait for it', attachments: [] } });
    const turnId = (await ws.waitFrame((f) => f.type === 'turn.accepted')).turn_id as string;
    await rig.fake.waitForRequests(from + 1);
    ws.send({ type: 'interrupt', session_id: id });
    assert.is((await endOf(ws, turnId)).type, 'turn.interrupted');
    assert.equal(
      (await messagesOf(rig.port, id)).map((m) => m.role),
      ['user'],
    );
  } finally {
    ws.close();
  }
});

test('/ws commands on a session that does not exist answer an error', async () => {
  const ws = await connectWs(rig.port, ['sessions']);
  try {
    ws.send({
      type: 'turn',
      session_id: 's_ghost',
      message: { text: 'x', attachments: [] },
      request_id: 'g',
    });
    const err = await ws.waitFrame((f) => f.request_id === 'g');
    assert.equal([err.type, err.error.code], ['error', 'not_found']);
  } finally {
    ws.close();
  }
});

test.run();
