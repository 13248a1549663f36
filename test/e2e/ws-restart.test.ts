import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  connectWs,
  newChat,
  startRig,
  status,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * /ws numbering across POST /api/restart: the new gateway goes on where the old one stopped (same
 * epoch, same seqs), so a client that missed nothing resumes with `since` and gets no resync, and
 * one that missed events gets them, with the numbers everyone else saw. After a crash of the
 * gateway nothing is known of what it sent: a new epoch, and `since` is answered with resync.
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});
test.after(async () => {
  await rig?.stop();
});

/** Where a client is on each topic: the last event it got, or where it subscribed. */
const lastSeqs = (c: WsClient, topics: string[]) =>
  Object.fromEntries(
    topics.map((t) => [
      t,
      Math.max(
        c.subscribed.seq[t] as number,
        ...c.events.filter((e) => e.topic === t).map((e) => e.seq),
      ),
    ]),
  );
const strip = (events: WsEvent[]) =>
  events.map((e) => ({ topic: e.topic, type: e.type, seq: e.seq, data: e.data }));

async function turn(session: string, text: string): Promise<void> {
  rig.fake.enqueue(textReply(text));
  const r = await api(rig.port, 'POST', `/api/chat/${session}/turn`, { message: 'say it' });
  assert.is(r.body.status, 'completed', JSON.stringify(r.body));
}

test('after POST /api/restart a client that missed nothing resumes without resync; one that missed events gets them with the same seqs', async () => {
  const session = await newChat(rig.port);
  const topics = ['server', 'sessions', `session:${session}`];
  const watcher = await connectWs(rig.port, topics);
  const dropper = await connectWs(rig.port, topics);
  const clients: WsClient[] = [watcher, dropper];
  try {
    const epoch = watcher.subscribed.epoch as string;
    await turn(session, 'first');
    await waitFor(
      () => dropper.events.some((e) => e.type === 'turn.completed'),
      5000,
      'the dropper to see the first turn end',
    );
    dropper.drop();
    const dropperSeen = lastSeqs(dropper, topics);

    // What the dropper misses: a second turn and a new chat in the list.
    await turn(session, 'second');
    await newChat(rig.port);
    await waitFor(
      () =>
        watcher.events.filter((e) => e.type === 'turn.completed').length === 2 &&
        watcher.events.some((e) => e.topic === 'sessions' && e.seq > dropperSeen.sessions!),
      5000,
      'the watcher to see it all',
    );

    assert.is((await api(rig.port, 'POST', '/api/restart', {})).status, 202);
    await watcher.waitEvent((e) => e.topic === 'server' && e.type === 'draining', 'draining');
    await waitFor(
      async () => (await status(rig.port)).restarts === 1,
      30_000,
      'the restart to finish',
    );
    const watcherSeen = lastSeqs(watcher, topics);

    // Resuming from where the watcher was: same epoch, nothing to reload, nothing replayed but
    // the server's news that the restart is over.
    const resumed = await connectWs(rig.port, topics, watcherSeen);
    clients.push(resumed);
    assert.is(resumed.subscribed.epoch, epoch, 'the numbering is the same as before the restart');
    assert.is(resumed.frames.find((f) => f.type === 'hello').data.epoch, epoch);
    const back = await resumed.waitEvent(
      (e) => e.topic === 'server' && e.type === 'resumed',
      'the server saying it runs again',
    );
    assert.ok(back.seq > watcherSeen.server!);
    assert.equal(
      resumed.frames.filter((f) => f.type === 'resync'),
      [],
      'no resync',
    );
    assert.equal(
      resumed.subscribed.seq[`session:${session}`],
      watcherSeen[`session:${session}`],
      'nothing new on the chat',
    );
    assert.equal(
      resumed.events.filter((e) => e.topic !== 'server'),
      [],
    );

    // Resuming from where the dropper was: the events it missed, numbered as the watcher saw them.
    const caughtUp = await connectWs(rig.port, topics, dropperSeen);
    clients.push(caughtUp);
    assert.equal(
      caughtUp.frames.filter((f) => f.type === 'resync'),
      [],
      'no resync',
    );
    for (const t of ['sessions', `session:${session}`]) {
      const missed = watcher.events.filter((e) => e.topic === t && e.seq > dropperSeen[t]!);
      assert.ok(missed.length > 0, `the dropper missed something on ${t}`);
      assert.equal(
        strip(caughtUp.events.filter((e) => e.topic === t)),
        strip(missed),
        `the missed events of ${t}, as they were`,
      );
    }
    assert.ok(
      caughtUp.events.some((e) => e.type === 'turn.completed'),
      'the second turn is among them',
    );

    // The next events go on from there.
    await turn(session, 'third');
    const next = await resumed.waitEvent(
      (e) => e.topic === `session:${session}`,
      'the next event on the chat',
    );
    assert.is(next.seq, watcherSeen[`session:${session}`]! + 1);
    const same = await caughtUp.waitEvent(
      (e) => e.topic === `session:${session}` && e.seq === next.seq,
      'the same event for the other client',
    );
    assert.equal(strip([same]), strip([next]));
  } finally {
    for (const c of clients) c.close();
  }
});

test('after the gateway is killed, the numbering is new: another epoch, and since is answered with resync', async () => {
  const session = await newChat(rig.port);
  const topic = `session:${session}`;
  const ws = await connectWs(rig.port, [topic]);
  let after: WsClient | undefined;
  try {
    await turn(session, 'before the crash');
    await waitFor(
      () => ws.events.some((e) => e.type === 'turn.completed'),
      5000,
      'the turn to end',
    );
    const epoch = ws.subscribed.epoch as string;
    const seen = lastSeqs(ws, [topic]);
    const gateway = (await status(rig.port)).processes.find(
      (p: { role: string }) => p.role === 'gateway',
    );
    process.kill(gateway.pid, 'SIGKILL');
    after = await waitFor(
      async () => {
        const s = await status(rig.port).catch(() => undefined);
        const g = s?.processes.find(
          (p: { role: string; state: string }) => p.role === 'gateway' && p.state === 'running',
        );
        return g && g.pid !== gateway.pid ? connectWs(rig.port, [topic], seen) : undefined;
      },
      20_000,
      'a new gateway',
    );
    assert.is.not(after.subscribed.epoch, epoch);
    const resync = await after.waitFrame(
      (f) => f.type === 'resync' && f.topic === topic,
      'a resync',
    );
    assert.type(resync.reason, 'string');
  } finally {
    ws.close();
    after?.close();
  }
});

test.run();
