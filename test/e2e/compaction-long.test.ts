import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { newId } from '../../src/shared/store/util.js';
import type { FakeRequest } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { messagesOf, newChat, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Issue 22, items 1 and 5, through a real server and agent worker:
 * - a turn reads the live window (the latest summary and what follows), never the messages the
 *   summary covers: rows before it that no longer parse cannot fail it (they failed every step);
 * - a history far larger than the summariser's context window is summarised in pieces that each
 *   fit it, then a summary of those summaries.
 */

let rig: TurnRig;
let db: Db;
test.before(async () => {
  // 'big' answers the turns; 'tiny' (lite slot, the smallest window allowed) summarises.
  rig = await startRig({
    models: {
      big: { protocol: 'openai', context_window: 16_384 },
      tiny: { protocol: 'anthropic', context_window: 1024 },
    },
    lite: 'tiny',
  });
  db = openDb(join(rig.server.home, 'svc.db'));
});
test.after(async () => {
  db.close();
  await rig?.stop();
});
test.before.each(() => rig.fake.reset());

const sent = (r: FakeRequest) => JSON.stringify(r.body);

/** Writes rows straight into svc.db, as a long life would have left them. */
function insertRows(sessionId: string, rows: Array<{ role: string; content: string }>): void {
  const ins = db.prepare(
    'INSERT INTO messages (id, session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // IMMEDIATE, as svc's own writers do: svc (its search index fill) writes beside this, and a
  // deferred transaction that read first cannot take the write lock after another commit.
  db.transaction(() => {
    let seq = (
      db
        .prepare('SELECT coalesce(max(seq), 0) AS n FROM messages WHERE session_id = ?')
        .get(sessionId) as { n: number }
    ).n;
    for (const r of rows)
      ins.run(newId('m'), sessionId, ++seq, r.role, r.content, new Date().toISOString());
    db.prepare('UPDATE sessions SET message_count = ? WHERE id = ?').run(seq, sessionId);
  }).immediate();
}

test('a turn in a 20,000-message session reads only the live window: the summary and what follows it', async () => {
  const id = await newChat(rig.port, { title: 'Long life' });
  // 20,000 covered rows that would not even parse: a turn that read them would fail.
  insertRows(
    id,
    Array.from({ length: 20_000 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `{not json ${i}`,
    })),
  );
  insertRows(id, [
    {
      role: 'system',
      content: JSON.stringify({
        text: 'SUMMARY-OF-20000: the user and agent planned a trip.',
        summary_of: { from_seq: 1, to_seq: 20_000, file: '/nowhere.jsonl' },
      }),
    },
    { role: 'user', content: JSON.stringify({ text: 'LIVE-USER: where were we?' }) },
    {
      role: 'assistant',
      content: JSON.stringify({
        text: 'LIVE-ASSISTANT: the trip.',
        stop_reason: 'end_turn',
        model: 'fake',
      }),
    },
  ]);
  rig.fake.enqueue({ parts: [{ text: 'We were planning the trip.' }] });
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'NEW: go on' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.status, 'completed', JSON.stringify(r.body.error));
  assert.is(r.body.reply, 'We were planning the trip.');
  const req = rig.fake.requests.at(-1)!;
  assert.match(sent(req), /SUMMARY-OF-20000/);
  assert.match(sent(req), /LIVE-USER: where were we\?/);
  assert.match(sent(req), /LIVE-ASSISTANT: the trip\./);
  assert.match(sent(req), /NEW: go on/);
  assert.not.match(sent(req), /not json/);
  const session = (await api(rig.port, 'GET', `/api/sessions/${id}`)).body;
  assert.is(session.message_count, 20_005, 'the turn appended its user message and the reply');
});

test("a history 30× the summariser's window is summarised in pieces that each fit it, then a summary of the summaries", async () => {
  const id = await newChat(rig.port, { title: 'Summary of summaries' });
  const filler = (tag: string, i: number) =>
    `${tag}-${i}: ${'the quick brown fox jumps over the lazy dog; '.repeat(33)}`;
  insertRows(
    id,
    Array.from({ length: 40 }, (_, i) =>
      i % 2
        ? {
            role: 'assistant',
            content: JSON.stringify({
              text: filler('ANSWER', i),
              stop_reason: 'end_turn',
              model: 'fake',
            }),
          }
        : { role: 'user', content: JSON.stringify({ text: filler('ASK', i) }) },
    ),
  );
  const historyChars = 40 * 1500;
  rig.fake.enqueue({ parts: [{ text: 'Carrying on.' }], match: { stream: true } });
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'CURRENT: carry on' });
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.status, 'completed', JSON.stringify(r.body.error));

  const summaries = rig.fake.requests.filter((q) => q.stream === false);
  assert.ok(
    summaries.length >= 20,
    `${summaries.length} summarising requests for ${historyChars} characters`,
  );
  for (const q of summaries) {
    assert.is(q.protocol, 'anthropic', 'the lite model summarises');
    const b = q.body as { max_tokens: number };
    const tokens = Math.ceil(sent(q).length / 4) + b.max_tokens;
    assert.ok(tokens <= 1024, `a request of ~${tokens} tokens fits the summariser's 1,024`);
  }
  // Every piece of the history went to the summariser once, in order, and the last request combines the pieces.
  for (const i of [0, 1, 19, 38, 39])
    assert.ok(
      summaries.some((q) => sent(q).includes(i % 2 ? `ANSWER-${i}:` : `ASK-${i}:`)),
      `message ${i} was summarised`,
    );
  assert.not.ok(
    summaries.some((q) => sent(q).includes('CURRENT: carry on')),
    'the current message is not summarised',
  );
  const last = summaries.at(-1)!;
  assert.match(sent(last), /SUMMARY OF PART 1 OF \d+/);
  assert.not.match(
    sent(last),
    /quick brown fox/,
    'the last request holds summaries, not the transcript',
  );

  const turnReq = rig.fake.requests.filter((q) => q.stream === true).at(-1)!;
  assert.match(sent(turnReq), /Summary of the earlier conversation/);
  assert.match(sent(turnReq), /CURRENT: carry on/);
  assert.not.match(sent(turnReq), /ASK-0:/);
  const stored = await messagesOf(rig.port, id);
  assert.ok(
    stored.some(
      (m) =>
        m.role === 'system' &&
        m.content.summary_of?.from_seq === 1 &&
        m.content.summary_of?.to_seq === 40,
    ),
  );
});

test.run();
