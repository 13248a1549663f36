import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { ipcMessage } from '../../src/shared/protocol/ipc.js';
import { wsEventProblem } from '../../src/shared/protocol/events.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { listMessages } from '../../src/shared/store/messages.js';
import { createSession } from '../../src/shared/store/sessions.js';
import { getTurnRow, startTurnRow } from '../../src/shared/store/turns.js';
import { endTurn } from '../../src/shared/turn-end.js';
import type { TurnPublish } from '../../src/shared/ws-publish.js';

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
