import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'undici';
import { chooseEngine, createEngine } from '../../src/gateway/engine/pick.js';
import type { HttpEngine } from '../../src/gateway/engine/types.js';
import { WsHub } from '../../src/gateway/ws/hub.js';
import { IDLE_TOPIC_MS, RING_BYTES } from '../../src/gateway/ws/history.js';
import type { MessageSummary, SessionView } from '../../src/shared/protocol/events.js';
import { waitFor } from '../helpers/server.js';

/**
 * Issue 22, item 3: the /ws hub keeps a bounded history (bytes as well as count), forgets a
 * deleted session's topic and idle topics, and a client resuming past what is kept gets resync.
 * The real hub on the real HTTP engine, a real WebSocket client.
 */
const engineName = chooseEngine();

interface Frame {
  topic?: string;
  type: string;
  seq?: number;
  data?: unknown;
}

async function client(
  port: number,
): Promise<{ frames: Frame[]; send: (f: unknown) => void; close: () => void }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const frames: Frame[] = [];
  ws.addEventListener('message', (m) => frames.push(JSON.parse(String(m.data)) as Frame));
  await waitFor(() => frames.some((f) => f.type === 'hello'), 5000, 'hello');
  return { frames, send: (f) => ws.send(JSON.stringify(f)), close: () => ws.close() };
}

/** A topic of big streamed events. */
const BIG = 'session:s_big';

function session(id: string): SessionView {
  const at = new Date().toISOString();
  return {
    id,
    title: 'T',
    model_id: null,
    reasoning_effort: 'medium',
    show_reasoning: false,
    permission_mode: 'interactive',
    working_dir: null,
    network: null,
    channel: null,
    created_at: at,
    updated_at: at,
    message_count: 0,
  };
}

function message(sessionId: string, text: string): MessageSummary {
  return {
    id: 'm_1',
    session_id: sessionId,
    seq: 1,
    role: 'user',
    content: { text },
    created_at: new Date().toISOString(),
  };
}

let engine: HttpEngine;
let hub: WsHub;
let port: number;

test.before(async () => {
  engine = await createEngine(engineName);
  hub = new WsHub(engine, {
    frameLimit: 1 << 20,
    authorize: () => ({ ok: true, via: 'local', local: true }),
  });
  port = await engine.listen('127.0.0.1', 0);
});
test.after(() => {
  hub.closeAll(1001, 'test over');
  engine.stopListening();
});

test(`a topic's history is bounded by bytes; resuming past it gets resync, within it gets the missed events (${engineName})`, async () => {
  // Streamed text is the one kind of event above 4 KB; a new turn id each time keeps each its own frame.
  const big = 'x'.repeat(16 * 1024);
  for (let i = 0; i < 200; i++)
    hub.publish(BIG, 'turn.text_delta', { turn_id: `t${i}`, delta: big });
  const kept = hub.stats();
  assert.ok(
    kept.bytes <= RING_BYTES,
    `kept ${kept.bytes} bytes for 200 events of 16 KB (bound ${RING_BYTES})`,
  );
  assert.ok(
    kept.events < 200 && kept.events >= Math.floor(RING_BYTES / (17 * 1024)),
    `kept ${kept.events} events`,
  );

  const c = await client(port);
  try {
    c.send({ type: 'subscribe', topics: [BIG], since: { [BIG]: 1 } });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    assert.ok(
      c.frames.some((f) => f.type === 'resync' && f.topic === BIG),
      'resuming before the history: resync',
    );
    c.send({ type: 'unsubscribe', topics: [BIG] });
    await waitFor(() => c.frames.some((f) => f.type === 'unsubscribed'), 5000, 'unsubscribed');
    c.send({ type: 'subscribe', topics: [BIG], since: { [BIG]: 195 } });
    await waitFor(
      () => c.frames.filter((f) => f.type === 'subscribed').length === 2,
      5000,
      'subscribed again',
    );
    assert.equal(
      c.frames.filter((f) => f.topic === BIG && f.type === 'turn.text_delta').map((f) => f.seq),
      [196, 197, 198, 199, 200],
      'the missed events, in order',
    );
  } finally {
    c.close();
  }
});

test('a deleted session leaves nothing behind: 100 session topics, each deleted, keep no history or numbering', async () => {
  const kept = () => {
    const { forgotten: _, ...rest } = hub.stats();
    return rest;
  };
  const before = kept();
  const forgotten = hub.stats().forgotten;
  for (let i = 0; i < 100; i++) {
    const topic = `session:s_gone${i}` as const;
    hub.publish(topic, 'turn.started', {
      turn_id: 'u_1',
      session_id: topic.slice(8),
      origin: 'http',
      message: message(topic.slice(8), 'y'.repeat(2000)),
    });
    hub.publish(topic, 'message.committed', {
      turn_id: 'u_1',
      message: message(topic.slice(8), 'z'.repeat(2000)),
    });
    hub.publish(topic, 'session.deleted', { id: topic.slice(8), trash_id: 't_x' });
  }
  assert.equal(kept(), before, 'back where it was');
  assert.is(hub.stats().forgotten, forgotten + 100, 'each counted as forgotten');

  const c = await client(port);
  try {
    c.send({ type: 'subscribe', topics: ['session:s_gone7'], since: { 'session:s_gone7': 2 } });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    assert.ok(
      c.frames.some((f) => f.type === 'resync' && f.topic === 'session:s_gone7'),
      'a client resuming a forgotten topic reloads it',
    );
  } finally {
    c.close();
  }
});

test('a subscriber of a deleted session keeps the numbering: the restore that follows is not taken for a seen event', async () => {
  const c = await client(port);
  try {
    c.send({ type: 'subscribe', topics: ['session:s_kept'] });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    const base = hub.seqOf('session:s_kept'); // a new topic numbers on from the hub's floor
    hub.publish('session:s_kept', 'session.updated', session('s_kept'));
    hub.publish('session:s_kept', 'session.deleted', { id: 's_kept', trash_id: 't_x' });
    hub.publish('session:s_kept', 'session.restored', session('s_kept'));
    await waitFor(
      () => c.frames.some((f) => f.type === 'session.restored'),
      5000,
      'session.restored',
    );
    assert.equal(
      c.frames.filter((f) => f.topic === 'session:s_kept').map((f) => [f.type, f.seq]),
      [
        ['session.updated', base + 1],
        ['session.deleted', base + 2],
        ['session.restored', base + 3],
      ],
    );
  } finally {
    c.close();
  }
});

test('idle topics nobody is on are evicted; a subscribed or listened topic stays', async () => {
  const c = await client(port);
  const stop = hub.listen('workflows', () => undefined);
  try {
    c.send({ type: 'subscribe', topics: ['skills'] });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    const skills = hub.seqOf('skills');
    const workflows = hub.seqOf('workflows');
    hub.publish('skills', 'skill.deleted', { name: 'x', trash_id: 't_x' });
    hub.publish('workflows', 'workflow.step_started', {
      turn_id: 'u_1',
      run_id: 'wr_1',
      workflow: 'w',
      session_id: 's_1',
      step: 'a',
      kind: 'run',
    });
    hub.publish('mcp', 'mcp.config', { names: ['x'] });
    hub.publish('session:s_idle', 'goal.cleared', { session_id: 's_idle' });
    const evicted = hub.evictIdle(Date.now() + IDLE_TOPIC_MS + 1);
    assert.ok(evicted >= 2, `evicted ${evicted}`);
    const fresh = hub.seqOf('session:s_never');
    assert.is(
      hub.seqOf('mcp'),
      fresh,
      'an idle unwatched topic is forgotten (it stands where a new one starts)',
    );
    assert.is(hub.seqOf('session:s_idle'), fresh);
    assert.is(hub.seqOf('skills'), skills + 1, 'a subscribed topic stays');
    assert.is(hub.seqOf('workflows'), workflows + 1, 'a listened topic stays');
    assert.is(hub.evictIdle(Date.now()), 0, 'nothing is idle right after an event');
  } finally {
    stop();
    c.close();
  }
});

test('a topic forgotten while idle and then busy again: a client resuming from before it was forgotten gets every new event or a resync, never a gap', async () => {
  const topic = 'session:s_again';
  const goal = (i: number) => hub.publish(topic, 'goal.cleared', { session_id: `s_${i}` });
  for (let i = 0; i < 3; i++) goal(i);
  const seen = hub.seqOf(topic); // where a client that then went away stood
  assert.ok(hub.evictIdle(Date.now() + 24 * 3600_000) >= 1, 'forgotten while nobody followed it');
  assert.is(
    hub.seqOf(topic),
    hub.seqOf('session:s_never_used'),
    'an idle topic nobody follows is forgotten (history and numbering)',
  );
  for (let i = 0; i < 5; i++) goal(10 + i); // the chat is used again while the client is away
  const c = await client(port);
  try {
    c.send({ type: 'subscribe', topics: [topic], since: { [topic]: seen } });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    const resync = c.frames.some((f) => f.type === 'resync' && f.topic === topic);
    const replayed = c.frames.filter((f) => f.topic === topic && f.type === 'goal.cleared');
    assert.ok(
      resync || replayed.length === 5,
      `resync, or all 5 new events (got ${replayed.length}: ${JSON.stringify(replayed.map((f) => f.seq))})`,
    );
    assert.ok(
      replayed.every((f) => (f.seq ?? 0) > seen),
      'the new numbering is above the old',
    );
  } finally {
    c.close();
  }
});

test('a hub with a short idle time forgets an unfollowed topic on its own timer; a followed one stays', async () => {
  const e2 = await createEngine(engineName);
  const h2 = new WsHub(e2, {
    frameLimit: 1 << 20,
    authorize: () => ({ ok: true, via: 'local', local: true }),
    idleTopicMs: () => 300,
  });
  const p2 = await e2.listen('127.0.0.1', 0);
  const c = await client(p2);
  try {
    c.send({ type: 'subscribe', topics: ['session:s_watched'] });
    await waitFor(() => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
    h2.publish('session:s_watched', 'goal.cleared', { session_id: 's_watched' });
    h2.publish('session:s_alone', 'goal.cleared', { session_id: 's_alone' });
    await waitFor(() => h2.stats().forgotten === 1, 10_000, 'the sweep to forget the idle topic');
    assert.is(h2.stats().topics, 1, 'the followed topic stays');
    assert.is(h2.seqOf('session:s_watched'), 1);
  } finally {
    c.close();
    h2.closeAll(1001, 'test over');
    e2.stopListening();
  }
});

test.run();
