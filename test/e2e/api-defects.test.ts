import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { httpError, textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { http, waitFor } from '../helpers/server.js';
import { connectWs, startRig, status, type TurnRig } from '../helpers/turns.js';

/**
 * The API's small defects (issue 9, item 6) as a client meets them: the session POST /api/chat
 * embeds, /api/health's uptime across a restart, no header naming the server software, chats
 * started through the API titled by the lite model, and a turn's outcome after ?wait=false.
 * (The SSE turn.accepted event's id and shape are asserted in turns.test.ts.)
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({
    models: { oa: { protocol: 'openai' }, lt: { protocol: 'anthropic' } },
    lite: 'lt',
  });
});
test.after(async () => {
  await rig?.stop();
});
test.before.each(() => rig.fake.reset());

/** A turn's reply on the session's model (streamed) and a title from the lite one (not streamed). */
function script(reply: string, title: string | ReturnType<typeof httpError>): void {
  rig.fake.enqueue(
    { ...textReply(reply), match: { stream: true } },
    typeof title === 'string'
      ? { ...textReply(title), match: { stream: false, protocol: 'anthropic' } }
      : { ...title, match: { stream: false } },
  );
}

const titleOf = async (id: string) =>
  (await api(rig.port, 'GET', `/api/sessions/${id}`)).body.title as string;

test('POST /api/chat embeds the session as it is after the turn (its messages counted), waiting or not', async () => {
  script('Hello there.', 'Greeting');
  const waited = await api(rig.port, 'POST', '/api/chat', { message: 'Hi' });
  assert.is(waited.status, 201, JSON.stringify(waited.body));
  assert.is(waited.body.status, 'completed');
  assert.is(waited.body.session.message_count, 2);
  assert.is(
    waited.body.session.message_count,
    (await api(rig.port, 'GET', `/api/sessions/${waited.body.session_id}`)).body.message_count,
  );

  rig.fake.enqueue({ parts: [{ text: 'thinking…' }, { stall: true }], match: { stream: true } });
  const early = await api(rig.port, 'POST', '/api/chat?wait=false', { message: 'Take your time' });
  assert.is(early.status, 202);
  assert.ok(
    early.body.session.message_count >= 1,
    `the first message is counted: ${JSON.stringify(early.body.session)}`,
  );
  await api(rig.port, 'POST', `/api/chat/${early.body.session_id}/interrupt`, {});
});

test('a chat started through the API is titled by the lite model for every client; a title the user gave is kept', async () => {
  const ws = await connectWs(rig.port, ['sessions']);
  try {
    script('Paris.', '"Capital of France."');
    const chat = await api(rig.port, 'POST', '/api/chat', {
      message: 'What is the capital of France?\nJust the name.',
    });
    assert.is(chat.body.reply, 'Paris.');
    const id = chat.body.session_id as string;
    await waitFor(
      async () => (await titleOf(id)) === 'Capital of France',
      10_000,
      'the title from the lite model',
    );
    const updated = await ws.waitEvent(
      (e) => e.type === 'session.updated' && e.data.id === id,
      'session.updated on the sessions topic',
    );
    assert.is(updated.data.title, 'Capital of France');
    const asked = rig.fake.requests.find((r) => r.protocol === 'anthropic' && !r.stream);
    assert.ok(asked, 'the lite model (anthropic here) was asked, without streaming');
    assert.match(JSON.stringify(asked!.body), /What is the capital of France\?/);

    // A title the user gave stays; no title request is made for it.
    const before = rig.fake.requests.length;
    rig.fake.enqueue({ ...textReply('Sure.'), match: { stream: true } });
    const named = await api(rig.port, 'POST', '/api/chat', {
      title: 'Mine',
      message: 'Name it yourself?',
    });
    assert.is(named.body.status, 'completed');
    assert.is(await titleOf(named.body.session_id), 'Mine');
    assert.is(rig.fake.requests.length, before + 1, 'only the turn itself reached a model');
  } finally {
    ws.close();
  }
});

test('when the lite model cannot title a chat, it takes the first line of the first message', async () => {
  script('Done.', httpError(400, { message: 'no titles today' }));
  const chat = await api(rig.port, 'POST', '/api/chat', {
    message: 'Plan the garden for spring\nwith tomatoes',
  });
  assert.is(chat.body.status, 'completed');
  await waitFor(
    async () => (await titleOf(chat.body.session_id)) === 'Plan the garden for spring',
    10_000,
    'the first-line title',
  );
});

test('GET /api/sessions/{id}/turns/{turn_id} answers a turn started with ?wait=false: running, then its outcome', async () => {
  const id = (await api(rig.port, 'POST', '/api/sessions', { title: 'Async' })).body.id as string;
  rig.fake.enqueue({
    parts: [{ text: ['Slow ', 'and '] }, { stall: true }],
    match: { stream: true },
  });
  const ws = await connectWs(rig.port, [`session:${id}`]);
  const started = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
    message: 'Go slowly',
  });
  assert.is(started.status, 202);
  const turnId = started.body.turn_id as string;
  // The interrupt below must come after the streamed text, or there is no partial reply to keep.
  await waitFor(
    () =>
      ws.events
        .filter((e) => e.type === 'turn.text_delta' && e.data?.turn_id === turnId)
        .map((e) => e.data.delta)
        .join('') === 'Slow and ',
    10_000,
    'the text before the stall',
  );
  ws.close();
  const running = await waitFor(
    async () => {
      const r = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`);
      return r.body.messages?.length === 1 ? r : undefined;
    },
    10_000,
    'the running turn with its user message',
  );
  assert.is(running.status, 200);
  assert.is(running.body.status, 'running');
  assert.is(running.body.reply, null);
  assert.is(running.body.messages[0].content.text, 'Go slowly');
  await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {});
  const interrupted = await waitFor(
    async () => {
      const r = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`);
      return r.body.status === 'interrupted' ? r : undefined;
    },
    10_000,
    'the interrupted turn',
  );
  assert.equal(
    interrupted.body.messages.map((m: { role: string }) => m.role),
    ['user', 'assistant'],
  );

  rig.fake.enqueue({
    ...textReply('All ', 'done.'),
    match: { stream: true },
    usage: { input: 21, output: 3 },
  });
  const next = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
    message: 'Now quickly',
  });
  const nextId = next.body.turn_id as string;
  const done = await waitFor(
    async () => {
      const r = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${nextId}`);
      return r.body.status === 'completed' ? r : undefined;
    },
    10_000,
    'the completed turn',
  );
  assert.is(done.body.reply, 'All done.');
  assert.is(done.body.stop_reason, 'end_turn');
  assert.is(done.body.usage.input, 21);
  assert.equal(
    done.body.messages.map((m: { content: { text: string } }) => m.content.text),
    ['Now quickly', 'All done.'],
    "only this turn's messages",
  );
  // The first turn's messages stop where the second begins.
  assert.is(
    (await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`)).body.messages.length,
    2,
  );

  // The same answer a waiting call gives.
  rig.fake.enqueue({ ...textReply('Same.'), match: { stream: true } });
  const waited = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'And waiting?' });
  assert.equal(
    (await api(rig.port, 'GET', `/api/sessions/${id}/turns/${waited.body.turn_id}`)).body,
    waited.body,
  );

  const unknown = await api(rig.port, 'GET', `/api/sessions/${id}/turns/turn_nope`);
  assert.is(unknown.status, 404);
  assert.match(unknown.body.error.message, /turn_id/);
  const other = (await api(rig.port, 'POST', '/api/sessions', { title: 'Other' })).body
    .id as string;
  assert.is(
    (await api(rig.port, 'GET', `/api/sessions/${other}/turns/${nextId}`)).status,
    404,
    'a turn belongs to its own session',
  );
});

test('no response names the server software (no uWebSockets header)', async () => {
  for (const path of ['/api/health', '/', '/api/nope', '/ws']) {
    const r = await http({ port: rig.port, path });
    const named = Object.keys(r.headers).filter((h) =>
      /uwebsockets|^server$|x-powered-by/i.test(h),
    );
    assert.equal(named, [], `${path} (${r.status}): ${JSON.stringify(r.headers)}`);
  }
});

test('/api/health uptime counts from when svc started, not from the current gateway', async () => {
  // Let svc be a few seconds old, so a new gateway's age is plainly different.
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/health')).body.uptime_s >= 3,
    20_000,
    'svc to be 3 s old',
  );
  const before = (await api(rig.port, 'GET', '/api/health')).body.uptime_s as number;
  const restarts = (await status(rig.port)).restarts as number;
  assert.is((await api(rig.port, 'POST', '/api/restart', {})).status, 202);
  await waitFor(
    async () => (await status(rig.port)).restarts === restarts + 1,
    30_000,
    'the restart to finish',
  );
  const after = (await api(rig.port, 'GET', '/api/health')).body.uptime_s as number;
  assert.ok(after >= before, `uptime went on (${before} s, then ${after} s)`);
  const supervisor = (await status(rig.port)).processes.find(
    (p: { role: string }) => p.role === 'supervisor',
  );
  assert.ok(
    Math.abs(supervisor.uptime_s - after) <= 2,
    `the same as svc's own (${supervisor.uptime_s} s)`,
  );
});

test.run();
