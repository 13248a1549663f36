import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Issue 31, defect 6: a chat's /ws history does not stay in the gateway for as long as it runs.
 * A real `svc serve` with a one-second idle time (limits.ws_idle_topic_seconds): after a turn,
 * the session's topic, followed by no one, lets its history go (the gateway's counters in
 * /api/status say so), and a client resuming from before gets resync, never a gap.
 */

let rig: TurnRig;

test.before(async () => {
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: 'limits:\n  ws_idle_topic_seconds: 1\n',
  });
});
test.after(async () => {
  await rig?.stop();
});

const gatewayRow = async () =>
  (await api(rig.port, 'GET', '/api/status')).body.processes.find((p: any) => p.role === 'gateway');

test('an idle topic nobody follows is forgotten; a client resuming from before it is told to resync', async () => {
  const chat = await api(rig.port, 'POST', '/api/sessions', {});
  assert.is(chat.status, 201, JSON.stringify(chat.body));
  const id = chat.body.id as string;
  const topic = `session:${id}`;

  // A client that followed a turn, then went away having missed its last event.
  const first = await connectWs(rig.port, [topic]);
  rig.fake.enqueue(textReply('hello there'));
  const turn = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' });
  assert.is(turn.status, 200, JSON.stringify(turn.body));
  const end = await first.waitEvent((e) => e.type === 'turn.completed', 'the end of the turn');
  first.close();
  const last = Math.max(...first.events.filter((e) => e.topic === topic).map((e) => e.seq));
  assert.ok(last >= end.seq && first.events.length > 1, `the turn made events (${last})`);

  const forgotten = await waitFor(
    async () => {
      const gw = await gatewayRow();
      return gw?.counters?.ws_topics_forgotten >= 1 && gw.counters.ws_kept_events === 0
        ? gw
        : undefined;
    },
    30_000,
    'the gateway to forget the idle topics',
  );
  assert.is(forgotten.counters.ws_kept_bytes, 0, 'no history kept');
  assert.ok(forgotten.heap_used_bytes > 0, 'the gateway reports its heap');

  const back = await connectWs(rig.port, [topic], { [topic]: last - 1 });
  try {
    const resync = await back.waitFrame(
      (f) => f.type === 'resync' && f.topic === topic,
      'a resync for the forgotten topic',
    );
    assert.match(resync.reason, /reload/);
    assert.not.ok(
      back.events.some((e) => e.topic === topic),
      'nothing replayed from a numbering the server no longer keeps',
    );
    // The next turn's events are numbered after anything the client saw.
    rig.fake.enqueue(textReply('again'));
    const again = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
    assert.is(again.status, 200, JSON.stringify(again.body));
    const next = await back.waitEvent((e) => e.topic === topic && e.type === 'turn.started');
    assert.ok(next.seq > last, `${next.seq} > ${last}`);
  } finally {
    back.close();
  }
});

test.run();
