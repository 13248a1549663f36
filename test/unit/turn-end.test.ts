import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { ipcMessage } from '../../src/shared/protocol/ipc.js';
import { wsEventProblem } from '../../src/shared/protocol/events.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { appendMessage, listMessages } from '../../src/shared/store/messages.js';
import { createSession } from '../../src/shared/store/sessions.js';
import {
  failOrphanTurns,
  getTurnRow,
  setTurnFirstSeq,
  startTurnRow,
} from '../../src/shared/store/turns.js';
import { endTurn } from '../../src/shared/turn-end.js';
import type { TurnPublish } from '../../src/shared/ws-publish.js';
import { historyToMessages } from '../../src/workers/agent/prompt.js';

/**
 * The one way a turn ends, whoever ends it (the agent worker that ran it, or the supervisor when
 * that worker died): the cut reply and the row's end in one write, then one end event; a second
 * end finds the turn over and says nothing. Real SQLite in a temp home.
 */

const home = mkdtempSync(join(tmpdir(), 'svc-turn-end-'));
const paths = resolvePaths({ SVC_HOME: home });
mkdirSync(paths.home, { recursive: true });
const db: Db = openAndMigrate(paths.db).db;
test.after(() => {
  db.close();
  rmSync(home, { recursive: true, force: true });
});

function recorder(): { told: Array<{ type: string; data: any }>; publish: TurnPublish } {
  const told: Array<{ type: string; data: any }> = [];
  return { told, publish: (type, data) => void told.push({ type, data }) };
}

test('the first end wins: its cut reply is kept, its event told; a later end changes and tells nothing', () => {
  const s = createSession(db);
  const turn = { id: 'turn_first_wins', session_id: s.id, origin: 'http' };
  startTurnRow(db, turn);
  const a = recorder();
  assert.ok(
    endTurn(db, a.publish, turn, { status: 'interrupted' }, { text: 'half a rep', model: 'm' }),
  );
  assert.equal(
    a.told.map((e) => e.type),
    ['message.committed', 'turn.interrupted'],
  );
  const kept = listMessages(db, s.id, { limit: 10 }).items;
  assert.is(kept.length, 1);
  assert.equal(kept[0]!.content, { text: 'half a rep', stop_reason: 'interrupted', model: 'm' });
  assert.is(getTurnRow(db, turn.id)?.status, 'interrupted');

  // The supervisor, late (the worker died right after): nothing written, nothing told.
  const b = recorder();
  assert.not.ok(
    endTurn(
      db,
      b.publish,
      turn,
      { status: 'failed', reason: 'worker_crashed', message: 'gone' },
      { text: 'half a rep' },
    ),
  );
  assert.equal(b.told, []);
  assert.is(listMessages(db, s.id, { limit: 10 }).items.length, 1);
  assert.is(getTurnRow(db, turn.id)?.status, 'interrupted');
});

test('a turn whose worker died before writing its row is on record all the same, and a late start is refused', () => {
  const s = createSession(db);
  const turn = { id: 'turn_never_taken', session_id: s.id, origin: 'cron' };
  const a = recorder();
  endTurn(db, a.publish, turn, {
    status: 'failed',
    reason: 'worker_crashed',
    message: 'the agent worker did not take the turn',
  });
  const row = getTurnRow(db, turn.id);
  assert.is(row?.status, 'failed');
  assert.is(row?.reason, 'worker_crashed');
  assert.is(row?.origin, 'cron');
  assert.equal(
    a.told.map((e) => e.type),
    ['turn.failed'],
  );
  // The worker that takes it late finds it ended: it does not run it.
  assert.throws(() => startTurnRow(db, turn));
});

test('a completed turn keeps its whole reply on record; the event carries its start', () => {
  const s = createSession(db);
  const turn = { id: 'turn_long_reply', session_id: s.id, origin: 'http' };
  startTurnRow(db, turn);
  const a = recorder();
  const reply = 'word '.repeat(2000);
  endTurn(db, a.publish, turn, {
    status: 'completed',
    stop_reason: 'end_turn',
    reply,
    usage: { input: 1, output: 2, cachedInput: 0, cacheWrite: 0 },
    steps: 1,
  });
  assert.is(getTurnRow(db, turn.id)?.reply, reply);
  const told = a.told[0]!;
  assert.is(told.type, 'turn.completed');
  assert.is(told.data.truncated, true);
  assert.ok(told.data.reply.length < reply.length);
  assert.is(wsEventProblem(`session:${s.id}`, told.type, { turn_id: turn.id, ...told.data }), null);
});

/** A turn that asked for two tools (ids as some providers reuse them) and got one result. */
function turnWithOpenCall(id: string) {
  const s = createSession(db);
  const turn = { id, session_id: s.id, origin: 'http' };
  startTurnRow(db, turn);
  const user = appendMessage(db, s.id, { role: 'user', content: { text: 'go' } });
  setTurnFirstSeq(db, id, user.seq);
  const calls = [
    { id: 'call_1', name: 'current_time', arguments: '{}' },
    { id: 'call_2', name: 'mcp__local__slow', arguments: '{"seconds":120}' },
  ];
  appendMessage(db, s.id, {
    role: 'assistant',
    content: { text: '', tool_calls: calls, stop_reason: 'tool_use' },
  });
  appendMessage(db, s.id, {
    role: 'tool',
    content: { tool_call_id: 'call_1', name: 'current_time', output: 'noon' },
  });
  return { s, turn };
}

test('a call left without a result when the turn is stopped gets one, stored before the end is told', () => {
  const { s, turn } = turnWithOpenCall('turn_open_call');
  const a = recorder();
  assert.ok(endTurn(db, a.publish, turn, { status: 'interrupted' }));
  const stored = listMessages(db, s.id, { limit: 10 }).items;
  assert.is(stored.length, 4);
  assert.equal(stored[3]!.content, {
    tool_call_id: 'call_2',
    name: 'mcp__local__slow',
    output: 'Stopped before it finished.',
    is_error: true,
    unfinished: 'interrupted',
  });
  assert.equal(
    a.told.map((e) => e.type),
    ['turn.tool_result', 'turn.interrupted'],
  );
  const result = a.told[0]!.data;
  assert.is(result.call_id, 'call_2');
  assert.is(result.is_error, true);
  assert.is(result.message.id, stored[3]!.id);
  assert.is(
    wsEventProblem(`session:${s.id}`, 'turn.tool_result', { turn_id: turn.id, ...result }),
    null,
  );

  // The next turn's provider context: every call answered, by what is on record.
  const context = historyToMessages(stored, { vision: false });
  const answer = context.find((m) => m.role === 'tool' && m.toolCallId === 'call_2');
  assert.is(answer?.content, 'Stopped before it finished.');
  assert.is(context.filter((m) => m.role === 'tool').length, 2);

  // A later end (the supervisor, late) adds nothing.
  endTurn(db, recorder().publish, turn, {
    status: 'failed',
    reason: 'worker_crashed',
    message: 'x',
  });
  assert.is(listMessages(db, s.id, { limit: 10 }).items.length, 4);
});

test('a failed turn says its call did not finish; a completed one is left as it is', () => {
  const { s, turn } = turnWithOpenCall('turn_open_failed');
  endTurn(db, recorder().publish, turn, {
    status: 'failed',
    reason: 'worker_crashed',
    message: 'the agent worker stopped unexpectedly',
  });
  const last = listMessages(db, s.id, { limit: 10 }).items.at(-1)!;
  assert.equal(last.content, {
    tool_call_id: 'call_2',
    name: 'mcp__local__slow',
    output: 'Did not finish: the turn failed before this call returned.',
    is_error: true,
    unfinished: 'failed',
  });

  // A call answered (the terminal answers when stopped) gets no second result.
  const done = turnWithOpenCall('turn_all_answered');
  appendMessage(db, done.s.id, {
    role: 'tool',
    content: { tool_call_id: 'call_2', name: 'mcp__local__slow', output: 'slept' },
  });
  const b = recorder();
  endTurn(db, b.publish, done.turn, { status: 'interrupted' });
  assert.is(listMessages(db, done.s.id, { limit: 10 }).items.length, 4);
  assert.equal(
    b.told.map((e) => e.type),
    ['turn.interrupted'],
  );
});

test("a workflow run's turn (no first message noted) closes the calls written since it started", () => {
  const s = createSession(db);
  const old = appendMessage(db, s.id, {
    role: 'assistant',
    content: { text: '', tool_calls: [{ id: 'old', name: 'clock', arguments: '{}' }] },
  });
  const turn = { id: 'turn_workflow', session_id: s.id, origin: 'workflow' };
  startTurnRow(db, turn);
  appendMessage(db, s.id, {
    role: 'assistant',
    content: { text: 'Step a', tool_calls: [{ id: 'wf_a', name: 'terminal', arguments: '{}' }] },
  });
  endTurn(db, recorder().publish, turn, { status: 'interrupted' });
  const after = listMessages(db, s.id, { limit: 10 }).items.filter((m) => m.seq > old.seq);
  assert.equal(
    after.map((m) => (m.content as { tool_call_id?: string }).tool_call_id),
    [undefined, 'wf_a'],
    'only the call of this turn is answered',
  );
});

test('a turn left running by an svc that died has its open calls answered at the next start', () => {
  const { s } = turnWithOpenCall('turn_orphan');
  assert.ok(failOrphanTurns(db, 'svc stopped while this turn ran') >= 1);
  assert.is(getTurnRow(db, 'turn_orphan')?.status, 'failed');
  const last = listMessages(db, s.id, { limit: 10 }).items.at(-1)!;
  assert.is(last.role, 'tool');
  assert.is((last.content as { unfinished?: string }).unfinished, 'failed');
});

test('a streamed delta crosses IPC as its own event whose parse is the catalogue check', () => {
  const event = (payload: unknown) =>
    ipcMessage.safeParse({ kind: 'event', type: 'ws.delta', payload });
  const good = { topic: 'session:s1', type: 'turn.text_delta', turn_id: 't1', delta: 'Hel' };
  assert.ok(event(good).success);
  assert.is(wsEventProblem(good.topic, good.type, { turn_id: 't1', delta: 'Hel' }), null);
  for (const bad of [
    { ...good, topic: 'tasks' },
    { ...good, type: 'turn.completed' },
    { ...good, delta: 3 },
    { ...good, turn_id: '' },
  ])
    assert.not.ok(event(bad).success, JSON.stringify(bad));
});

test.run();
