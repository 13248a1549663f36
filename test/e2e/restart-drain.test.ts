import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  connectWs,
  joined,
  messagesOf,
  newChat,
  ofTurn,
  sse,
  startRig,
  status,
  type TurnRig,
} from '../helpers/turns.js';

/*
 * A restart past restart.drain_seconds: the turns still streaming are stopped while their clients
 * watch, so the reply streamed so far is committed and every watcher (SSE, /ws, a waiting call)
 * sees the turn end as `restarted` before the old gateway goes.
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ config: 'restart:\n  drain_seconds: 1\n' });
});
test.after(async () => {
  await rig?.stop();
});

test('a restart past the drain bound commits the partial replies and ends the turns as restarted for SSE, /ws and waiting clients', async () => {
  const a = await newChat(rig.port);
  const b = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${a}`, `session:${b}`]);
  try {
    // Both replies stream some text, then stall: only the restart can end them.
    rig.fake.enqueue(
      { parts: [{ text: ['Half ', 'of it'] }, { stall: true }] },
      { parts: [{ text: ['Some ', 'words'] }, { stall: true }] },
    );
    const streamed = sse(rig.port, `/api/chat/${a}/turn`, { message: 'stream it' }, 60_000);
    await waitFor(
      () =>
        joined(
          ws.events.filter((e) => e.topic === `session:${a}`),
          'turn.text_delta',
        ) === 'Half of it',
      30_000,
      'the first reply to stream',
    );
    const waiting = api(rig.port, 'POST', `/api/chat/${b}/turn`, { message: 'wait for it' });
    await waitFor(
      () =>
        joined(
          ws.events.filter((e) => e.topic === `session:${b}`),
          'turn.text_delta',
        ) === 'Some words',
      30_000,
      'the second reply to stream',
    );

    assert.is((await api(rig.port, 'POST', '/api/restart', {})).status, 202);

    const stream = await streamed;
    const last = stream.events[stream.events.length - 1]!;
    assert.is(
      last.event,
      'turn.interrupted',
      `the SSE stream ends with its terminal event: ${JSON.stringify(stream.events.map((e) => e.event))}`,
    );
    assert.is(last.data.data.reason, 'restarted');
    const answer = await waiting;
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.is(answer.body.status, 'interrupted');
    assert.is(answer.body.reason, 'restarted');
    assert.equal(
      answer.body.messages.map((m: any) => [m.role, m.content.text]),
      [
        ['user', 'wait for it'],
        ['assistant', 'Some words'],
      ],
    );

    for (const [id, text] of [
      [a, 'Half of it'],
      [b, 'Some words'],
    ] as const) {
      // The end reaches /ws on its own connection: the SSE stream's or the waiting call's end may
      // arrive first, so wait for it (it must come before the old gateway closes that connection).
      const end = await waitFor(
        () => ws.events.find((e) => e.topic === `session:${id}` && e.type === 'turn.interrupted'),
        10_000,
        `/ws subscribers of ${id} to see the turn end`,
      );
      assert.is(end.data.reason, 'restarted');
      assert.ok(
        ofTurn(ws.events, end.data.turn_id).some(
          (e) => e.type === 'message.committed' && e.data.message.content.text === text,
        ),
        'the partial reply was committed before the end',
      );
      assert.equal(
        (await messagesOf(rig.port, id)).slice(-1).map((m) => [m.role, m.content.text]),
        [['assistant', text]],
        'the store keeps the partial reply',
      );
    }

    const after = await waitFor(
      async () => {
        const s = await status(rig.port);
        return s.restarts === 1 && s.state === 'running' ? s : undefined;
      },
      30_000,
      'the restart to finish',
    );
    assert.is(after.last_restart_error, null);
    const turn = await api(rig.port, 'GET', `/api/sessions/${a}/messages?limit=200`);
    assert.is(turn.status, 200);
  } finally {
    ws.close();
  }
});

test.run();
