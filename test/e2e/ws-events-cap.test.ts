import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'undici';
import { api } from '../helpers/api.js';
import { SLACK, waitFor } from '../helpers/server.js';
import { messagesOf, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Issue 22 (every /ws event ≤ 4 KB whatever the session's size, streamed deltas aside) against
 * the real server and the fake provider: a long user message, a tool output and a reply far over
 * 4 KB. Every frame a subscriber gets stays under the cap, the cut ones say so with the ids to
 * fetch, and REST answers every text whole.
 */

const CAP = 4096;
const DELTAS = new Set(['turn.text_delta', 'turn.reasoning_delta']);

let rig: TurnRig;
let root = '';
let work = '';

test.before(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-events-cap-'));
  work = join(root, 'work');
  mkdirSync(work);
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A /ws client that keeps each frame as the server sent it (its exact bytes). */
async function rawClient(
  port: number,
  topics: string[],
): Promise<{ raw: string[]; frames: () => any[]; close: () => void }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const raw: string[] = [];
  ws.addEventListener('message', (m) => {
    const text = String(m.data);
    raw.push(text);
    if ((JSON.parse(text) as { type?: string }).type === 'hello')
      ws.send(JSON.stringify({ type: 'subscribe', topics }));
  });
  await waitFor(
    () => raw.some((f) => (JSON.parse(f) as { type?: string }).type === 'subscribed'),
    5000,
    'the subscription',
  );
  return { raw, frames: () => raw.map((f) => JSON.parse(f)), close: () => ws.close() };
}

test('a long message, tool output and reply: every /ws frame but a delta is at most 4 KB, and REST has the whole', async () => {
  // Multi-byte text (é is 2 bytes, the emoji 4): the cap is on bytes, and a cut never splits a character.
  const line = (i: number) => `line ${String(i).padStart(5, '0')} café ☕ 🚀 ${'x'.repeat(40)}\n`;
  const file = Array.from({ length: 600 }, (_, i) => line(i)).join('') + 'END-OF-FILE-MARKER\n';
  writeFileSync(join(work, 'big.txt'), file);
  const question = `Read big.txt. ${'Please be thorough, ünd careful. '.repeat(300)}QUESTION-END`;
  const replyParts = Array.from(
    { length: 40 },
    (_, i) => `Part ${i}: the file has many lines — ${'ça va '.repeat(60)}\n\n`,
  );
  const reply = replyParts.join('') + 'REPLY-END';

  const s = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: 'interactive',
  });
  assert.is(s.status, 201, JSON.stringify(s.body));
  const id = s.body.id as string;
  const c = await rawClient(rig.port, [`session:${id}`, 'sessions']);
  try {
    rig.fake.enqueue(
      {
        parts: [
          { text: 'Reading it.' },
          {
            toolCall: {
              id: 'cap_read_1',
              name: 'read_file',
              arguments: [JSON.stringify({ path: join(work, 'big.txt') })],
            },
          },
        ],
        stop: 'tool_use',
      },
      { parts: [{ text: [...replyParts, 'REPLY-END'] }] },
    );
    const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: question });
    assert.is(res.status, 200, JSON.stringify(res.body).slice(0, 500));
    assert.is(res.body.status, 'completed');
    assert.is(res.body.reply, reply, 'the waiting call answers the whole reply');
    const turnId = res.body.turn_id as string;
    await waitFor(
      () => c.frames().some((f) => f.type === 'turn.completed' && f.data.turn_id === turnId),
      10_000,
      'turn.completed on /ws',
    );

    const events = c
      .frames()
      .filter((f) => typeof f.topic === 'string' && typeof f.seq === 'number');
    const over = c.raw.filter(
      (f) => !DELTAS.has((JSON.parse(f) as { type: string }).type) && Buffer.byteLength(f) > CAP,
    );
    assert.equal(
      over.map((f) => `${(JSON.parse(f) as { type: string }).type}: ${Buffer.byteLength(f)} bytes`),
      [],
      'no frame but a delta is over 4 KB',
    );
    assert.ok(
      events.length >= 6,
      `the turn's events arrived (${events.map((e) => e.type).join(', ')})`,
    );

    // The cut events say so and name what to fetch.
    const started = events.find((e) => e.type === 'turn.started');
    assert.is(started.data.message.truncated, true, 'turn.started carries the user message cut');
    assert.ok(
      question.startsWith(started.data.message.content.text.slice(0, -1)),
      'its text is the start of the message',
    );
    const result = events.find(
      (e) => e.type === 'turn.tool_result' && e.data.call_id === 'cap_read_1',
    );
    assert.ok(result, 'the tool result arrived');
    assert.is(result.data.truncated, true, 'the tool output is cut');
    assert.is(result.data.is_error, false);
    assert.ok(
      result.data.output.includes('line 00000 café ☕ 🚀'),
      `its start is there: ${result.data.output.slice(0, 300)}`,
    );
    assert.not.ok(result.data.output.includes('END-OF-FILE-MARKER'), 'its end is not');
    assert.is(result.data.message.truncated, true);
    const committed = events
      .filter((e) => e.type === 'message.committed')
      .map((e) => e.data.message);
    const last = committed.at(-1);
    assert.is(last.role, 'assistant');
    assert.is(last.truncated, true, 'the committed reply is cut');
    assert.ok(
      reply.startsWith(last.content.text.slice(0, -1)),
      'the cut reply is the start of the reply',
    );
    const done = events.find((e) => e.type === 'turn.completed');
    assert.is(done.data.truncated, true);
    assert.ok(reply.startsWith(done.data.reply.slice(0, -1)));
    // Streamed text is exempt from the cap, and it adds up to the whole reply.
    const streamed = events
      .filter((e) => e.type === 'turn.text_delta' && e.data.turn_id === turnId)
      .map((e) => e.data.delta)
      .join('');
    assert.is(streamed, `Reading it.${reply}`, 'the deltas carry every word');

    // REST has every text whole.
    const messages = await messagesOf(rig.port, id);
    assert.equal(
      messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.is(messages[0].content.text, question, 'the transcript has the whole question');
    assert.ok(
      messages[2].content.output.includes(file.trim().split('\n').at(-1)!) &&
        messages[2].content.output.includes('line 00599'),
      'and the whole tool output',
    );
    assert.is(messages[3].content.text, reply, 'and the whole reply');
    const one = await api(
      rig.port,
      'GET',
      `/api/sessions/${id}/messages/${result.data.message.id}`,
    );
    assert.is(one.status, 200, JSON.stringify(one.body));
    assert.equal(one.body, messages[2], 'a cut message is fetched whole by its id');
    const oneReply = await api(rig.port, 'GET', `/api/sessions/${id}/messages/${last.id}`);
    assert.is(oneReply.body.content.text, reply);
    const turn = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`);
    assert.is(turn.body.reply, reply, 'the turn has the whole reply');
    const missing = await api(rig.port, 'GET', `/api/sessions/${id}/messages/m_nope`);
    assert.is(missing.status, 404);
    assert.match(missing.body.error.message, /no message/);
  } finally {
    c.close();
  }
});

test('a long goal objective and a long task: their events are cut too, and REST has them whole', async () => {
  const s = await api(rig.port, 'POST', '/api/sessions', {});
  const id = s.body.id as string;
  const c = await rawClient(rig.port, [`session:${id}`, 'tasks']);
  try {
    const objective = `Ship it ${'über '.repeat(760)}GOAL-END`;
    const g = await api(rig.port, 'PUT', `/api/sessions/${id}/goal`, { objective });
    assert.ok(g.status < 300, JSON.stringify(g.body).slice(0, 300));
    const description = `${'étape '.repeat(1500)}TASK-END`;
    const t = await api(rig.port, 'POST', '/api/tasks', {
      subject: 'Long one',
      description,
      owner_session: id,
    });
    assert.is(t.status, 201, JSON.stringify(t.body).slice(0, 300));
    await waitFor(
      () =>
        c.frames().some((f) => f.type === 'task.created') &&
        c.frames().some((f) => f.type === 'goal.updated'),
      5000 * SLACK,
      'the goal and task events',
    );
    const over = c.raw.filter((f) => Buffer.byteLength(f) > CAP);
    assert.equal(
      over.map((f) => (JSON.parse(f) as { type: string }).type),
      [],
      'no frame over 4 KB',
    );
    const goal = c.frames().find((f) => f.type === 'goal.updated');
    assert.is(goal.data.truncated, true);
    const task = c.frames().find((f) => f.type === 'task.created');
    assert.is(task.data.truncated, true);
    assert.is(task.data.id, t.body.id, 'the cut task keeps its id');
    assert.is((await api(rig.port, 'GET', `/api/sessions/${id}/goal`)).body.objective, objective);
    assert.is(
      (await api(rig.port, 'GET', `/api/tasks/${t.body.id}`)).body.description,
      description,
    );
  } finally {
    c.close();
  }
});

test.run();
