import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeRequest } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { connectWs, messagesOf, newChat, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Compaction: when a session's history nears the model's context window, the messages before the
 * current user message are summarised (by the lite slot's model, else the session's own) with a
 * non-streamed request, the originals are written to disk, and the turn goes on.
 */

let rig: TurnRig;
test.before(async () => {
  // 'small' has a small context window; 'summarizer' (another protocol, in the lite slot) does the summaries.
  rig = await startRig({
    models: {
      small: { protocol: 'openai', context_window: 4096 },
      summarizer: { protocol: 'anthropic' },
    },
    lite: 'summarizer',
  });
});
test.after(async () => {
  await rig?.stop();
});
// A test that failed half-way leaves no scripts behind for the next one.
test.before.each(() => rig.fake.reset());

/**
 * About 6,000 characters (≈ 1,500 estimated tokens). With the system prompt (≈ 650 tokens, and it
 * grows as svc learns tools), one of these stays under 75% of 4,096 tokens and two pass it; the
 * margin on each side is a whole message, so a longer prompt does not move the point of compaction.
 */
const long = (tag: string) =>
  `${tag}: ${'the quick brown fox jumps over the lazy dog; '.repeat(133)}`;

const sentText = (r: FakeRequest) => JSON.stringify(r.body);

async function compactingTurn(id: string, summary: string) {
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue({ parts: [{ text: 'Noted the first part.' }] });
    const first = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: long('FIRST') });
    assert.is(first.body.status, 'completed');
    assert.not.ok(
      ws.events.some((e) => e.type === 'turn.compacted'),
      'no compaction while the history is small',
    );

    const from = rig.fake.requests.length;
    rig.fake.enqueue(
      { parts: [{ text: summary }], match: { stream: false } },
      { parts: [{ text: ['Second ', 'part ', 'noted.'] }], match: { stream: true } },
    );
    const second = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: long('SECOND') });
    assert.is(second.status, 200);
    assert.is(second.body.status, 'completed', JSON.stringify(second.body.error));
    assert.is(second.body.reply, 'Second part noted.', 'the turn goes on after compacting');

    const turnId = second.body.turn_id as string;
    const events = ws.events.filter((e) => e.data?.turn_id === turnId);
    const types = events.map((e) => e.type);
    assert.ok(
      types.indexOf('turn.compacted') > types.indexOf('turn.started') &&
        types.indexOf('turn.compacted') < types.indexOf('turn.text_delta'),
      `compacted before the reply: ${types}`,
    );
    const compacted = events.find((e) => e.type === 'turn.compacted')!.data;
    assert.equal(
      [compacted.from_seq, compacted.to_seq],
      [1, 2],
      'the first exchange, not the current user message',
    );
    return {
      reqs: rig.fake.requests.slice(from),
      compacted,
      stored: await messagesOf(rig.port, id),
    };
  } finally {
    ws.close();
  }
}

test('a history past 75% of the context window is summarised by the lite model; the turn completes', async () => {
  // Titled: an untitled chat would be named by the lite model after its first turn, one more request.
  const id = await newChat(rig.port, { title: 'Compaction' });
  const { reqs, compacted, stored } = await compactingTurn(
    id,
    'SUMMARY: the user sent a long first part.',
  );

  // The summary request reached the lite model, not streamed, with the older messages in it.
  assert.is(reqs.length, 2);
  const [summaryReq, turnReq] = reqs as [FakeRequest, FakeRequest];
  assert.is(summaryReq.protocol, 'anthropic', 'the lite slot model summarised');
  assert.is(summaryReq.stream, false);
  assert.match(sentText(summaryReq), /FIRST: the quick brown fox/);
  assert.match(sentText(summaryReq), /Noted the first part\./);
  assert.not.match(sentText(summaryReq), /SECOND:/, 'the current user message is not summarised');

  // The turn's own request carries the summary instead of the originals.
  assert.is(turnReq.protocol, 'openai');
  assert.is(turnReq.stream, true);
  assert.match(sentText(turnReq), /SUMMARY: the user sent a long first part\./);
  assert.match(sentText(turnReq), /SECOND: the quick brown fox/);
  assert.not.match(sentText(turnReq), /FIRST:/);

  // The originals are kept: in the store, and in the compacted file.
  const file = join(rig.server.home, 'sessions', id, 'compacted-1-2.jsonl');
  assert.is(compacted.file, file);
  assert.ok(existsSync(file));
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines, stored.slice(0, 2), 'the file holds the two original messages as stored');
  assert.equal(
    stored.map((m) => m.role),
    ['user', 'assistant', 'user', 'system', 'assistant'],
  );
  assert.match(stored[0].content.text, /^FIRST:/);
  assert.equal(stored[3].content, {
    text: 'SUMMARY: the user sent a long first part.',
    summary_of: { from_seq: 1, to_seq: 2, file },
  });

  // The next turn builds on the summary too, without compacting again.
  rig.fake.enqueue({ parts: [{ text: 'Third.' }] });
  const third = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'short' });
  assert.is(third.body.status, 'completed');
  const last = rig.fake.requests.at(-1)!;
  assert.is(last.stream, true);
  assert.match(sentText(last), /SUMMARY: the user sent a long first part\./);
  assert.not.match(sentText(last), /FIRST:/);
});

test('without a lite model, the session model summarises', async () => {
  const slot = await api(rig.port, 'PUT', '/api/config/models/lite', { model_id: null });
  assert.is(slot.status, 200, JSON.stringify(slot.body));
  // Titled: an untitled chat would be named by the lite model after its first turn, one more request.
  const id = await newChat(rig.port, { title: 'Compaction' });
  const { reqs } = await compactingTurn(id, 'SUMMARY by the default model.');
  assert.equal(
    reqs.map((r) => [r.protocol, r.stream]),
    [
      ['openai', false],
      ['openai', true],
    ],
  );
  assert.match(sentText(reqs[0]!), /FIRST:/);
  assert.match(sentText(reqs[1]!), /SUMMARY by the default model\./);
  assert.ok(existsSync(join(rig.server.home, 'sessions', id, 'compacted-1-2.jsonl')));
});

test.run();
