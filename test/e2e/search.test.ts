import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { runCli, tmpHome, waitFor } from '../helpers/server.js';
import { connectWs, messagesOf, startRig, type TurnRig } from '../helpers/turns.js';
import { openDb } from '../../src/shared/store/db.js';
import { appendMessage } from '../../src/shared/store/messages.js';
import { migrate, migrations } from '../../src/shared/store/migrations.js';
import { createSession } from '../../src/shared/store/sessions.js';
import { newMessagesWaiting } from '../../src/shared/store/search.js';

/**
 * Search over every chat (issue 36), through a real `svc serve`: the index follows each write,
 * trash, restore and purge, and a worker killed mid-turn; the query syntax and hostile queries
 * answer 200 or 400; a home from before the index is indexed in the background at start.
 */

let rig: TurnRig;
let oldSession = '';

test.before(async () => {
  // A home from the release before the index: its chat is indexed by the supervisor after start.
  const home = tmpHome('svc-search-');
  const db = openDb(join(home, 'svc.db'));
  migrate(
    db,
    migrations.filter((m) => m.version < 21),
  );
  oldSession = createSession(db, { title: 'Before the index' }).id;
  appendMessage(db, oldSession, { role: 'user', content: { text: 'the platypus lays eggs' } });
  db.close();
  rig = await startRig({ home, models: { oa: { protocol: 'openai' } } });
});
test.after(async () => {
  await rig?.stop();
});

const search = async (q: string, extra = '') => {
  const r = await api(rig.port, 'GET', `/api/search?q=${encodeURIComponent(q)}${extra}`);
  assert.is(r.status, 200, `${q}: ${JSON.stringify(r.body)}`);
  return r.body as { items: any[]; next_cursor: string | null; index: any; notice?: string };
};
const refs = async (q: string, extra = '') => (await search(q, extra)).items.map((h) => h.ref);

let chat = '';
let userMsg = '';

test('an upgraded home is indexed in the background; svc status says when it is ready', async () => {
  const hits = await waitFor(
    async () => {
      const r = await search('platypus');
      return r.items.length > 0 ? r.items : undefined;
    },
    10_000,
    'the earlier chat to be indexed',
  );
  assert.is(hits[0].session_id, oldSession);
  assert.is(hits[0].session_title, 'Before the index');
  const st = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  assert.equal(JSON.parse(st.stdout).search, { state: 'ready' });
});

test('the index follows a turn: messages, tool calls and outputs, the title; secrets are left out', async () => {
  rig.fake.enqueue(
    { parts: [{ toolCall: { id: 'c1', name: 'current_time', arguments: '{}' } }] },
    textReply('The quokka lives on Rottnest island.'),
  );
  const r = await api(rig.port, 'POST', '/api/chat', {
    message: 'Where does the quokka live? token ghp_abcdefghijklmnopqrstuvwxyz0123',
  });
  assert.is(r.status, 201, JSON.stringify(r.body));
  chat = r.body.session_id;
  const stored = await messagesOf(rig.port, chat);
  userMsg = stored[0].id;
  // Before any search: the supervisor takes the new messages into the index on its own.
  const db = openDb(join(rig.server.home, 'svc.db'), { readonly: true });
  try {
    await waitFor(() => !newMessagesWaiting(db), 5000, 'the supervisor to index the turn');
    assert.is(
      (
        db.prepare('SELECT count(*) AS n FROM search_docs WHERE session_id = ?').get(chat) as {
          n: number;
        }
      ).n,
      5,
      'four messages (one with a tool call) and the title',
    );
  } finally {
    db.close();
  }

  // (The title, made from the first line when the turn ends, is checked below.)
  const hits = (await search('quokka', '&kind=message')).items;
  assert.equal(hits.map((h) => h.role).sort(), ['assistant', 'user']);
  const user = hits.find((h) => h.ref === userMsg);
  assert.ok(user, JSON.stringify(hits));
  assert.is(user.session_id, chat);
  assert.is(user.role, 'user');
  assert.is(user.seq, 1);
  assert.is(user.origin, 'http');
  const [a, b] = user.highlights[0];
  assert.is(user.snippet.slice(a, b).toLowerCase(), 'quokka');
  const every = JSON.stringify((await search('quokka')).items);
  assert.not.ok(every.includes('abcdefghijklmnopqrstuvwxyz0123'), 'no secret, titles included');
  assert.equal(await refs('abcdefghijklmnopqrstuvwxyz0123'), [], 'the token is not indexed');

  assert.equal(await refs('rottnest', '&role=assistant'), [stored[3].id]);
  assert.equal(await refs('rottnest', '&role=user'), []);
  assert.equal(
    (await refs('current_time', '&kind=tool')).sort(),
    [stored[1].id, stored[2].id].sort(),
    'the call and its output',
  );
  assert.equal(await refs('current_time', '&kind=message'), []);
  assert.equal(await refs('quokka', `&session=${oldSession}`), []);
  assert.equal(await refs('quokka', '&origin=cron'), []);
  assert.equal(await refs('quokka', '&to=2000-01-01'), []);
  assert.is((await refs('quokka', '&kind=message&from=2000-01-01')).length, 2);
  assert.equal(await refs('"lives on rottnest"'), [stored[3].id], 'a phrase');
  assert.equal(await refs('"on lives rottnest"'), [], 'a phrase keeps its order');
  assert.equal(await refs('quokk* -rottnest', '&kind=message'), [userMsg], 'prefix and exclude');

  const renamed = await api(rig.port, 'PATCH', `/api/sessions/${chat}`, { title: 'Marsupials' });
  assert.is(renamed.status, 200);
  assert.equal(await refs('marsupials'), [chat]);
  assert.equal(await refs('quokka', '&kind=session'), [], 'the old title is gone');
});

test('pages by cursor, each result once', async () => {
  const all = await refs('quokka OR rottnest');
  assert.is(all.length, 0, 'OR is a plain word here');
  const whole = await refs('current_time');
  const seen: string[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const page = await search('current_time', `&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...page.items.map((h) => h.ref));
    cursor = page.next_cursor;
  }
  assert.equal(seen, whole);
});

test('trash hides a chat from search, restore brings it back, emptying removes it', async () => {
  const del = await api(rig.port, 'DELETE', `/api/sessions/${chat}`);
  assert.is(del.status, 200);
  assert.equal(await refs('quokka'), []);
  const back = await api(rig.port, 'POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(back.status, 200, JSON.stringify(back.body));
  assert.ok((await refs('quokka')).includes(userMsg));

  // Restored beside as a new session: its results follow it there.
  const del2 = await api(rig.port, 'DELETE', `/api/sessions/${chat}`);
  const copy = await api(rig.port, 'POST', `/api/trash/${del2.body.trash_id}/restore`, {
    as_new: true,
  });
  assert.is(copy.status, 200, JSON.stringify(copy.body));
  const moved = (await search('quokka')).items;
  assert.ok(moved.length >= 2);
  assert.ok(
    moved.every((h) => h.session_id === copy.body.restored_to),
    JSON.stringify(moved),
  );
  chat = copy.body.restored_to;

  const del3 = await api(rig.port, 'DELETE', `/api/sessions/${chat}`);
  assert.is((await api(rig.port, 'DELETE', `/api/trash/${del3.body.trash_id}`)).status, 200);
  assert.equal(await refs('rottnest'), []);
  assert.equal(await refs('marsupials'), []);
});

test('kill -9 of the agent worker: what it committed is found, what it only streamed is not', async () => {
  const id = (await api(rig.port, 'POST', '/api/chat', {})).body.session_id as string;
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue(
      { parts: [{ toolCall: { id: 'k1', name: 'current_time', arguments: '{}' } }] },
      { parts: [{ text: 'the wombat ' }, { stall: true }] },
    );
    const waiting = api(rig.port, 'POST', `/api/chat/${id}/turn`, {
      message: 'remember the capybara',
    });
    waiting.catch(() => undefined); // awaited below; a failing assertion first must not crash the file
    await ws.waitEvent(
      (e) => e.type === 'turn.text_delta' && String(e.data.delta).includes('wombat'),
      'the streamed text',
    );
    const st = JSON.parse(
      (await runCli(['status', '--json'], { SVC_HOME: rig.server.home })).stdout,
    );
    const busy = st.processes.find((p: any) => p.role === 'agent' && p.inflight_turns > 0);
    assert.ok(busy, JSON.stringify(st.processes));
    process.kill(busy.pid, 'SIGKILL');
    assert.is((await waiting).body.status, 'failed');
    const stored = await messagesOf(rig.port, id);
    assert.equal(await refs('capybara'), [stored[0].id]);
    assert.equal(
      (await refs('current_time', `&session=${id}`)).sort(),
      [stored[1].id, stored[2].id].sort(),
    );
    assert.equal(
      stored.filter((m) => JSON.stringify(m.content).includes('wombat')),
      [],
      'never committed',
    );
    assert.equal(await refs('wombat'), [], 'so never indexed');

    // The next worker indexes as the first did.
    rig.fake.enqueue(textReply('The capybara is the largest rodent.'));
    const next = await waitFor(
      async () => {
        const t = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'and?' });
        return t.body?.status === 'completed' ? t : undefined;
      },
      5000,
      'a turn after the kill',
    );
    assert.is(next.body.reply, 'The capybara is the largest rodent.');
    assert.is((await refs('capybara', '&role=assistant')).length, 1);
  } finally {
    ws.close();
  }
});

test('the agent finds a fact from another chat with search_history, cited, allowed without asking', async () => {
  rig.fake.enqueue(textReply('Noted.'));
  const told = await api(rig.port, 'POST', '/api/chat', {
    message: 'For later: the code of my gym locker is 4817.',
  });
  assert.is(told.status, 201, JSON.stringify(told.body));
  const source = told.body.session_id as string;
  const sourceMsg = (await messagesOf(rig.port, source))[0].id as string;

  // A new chat (interactive mode: a tool that asked would stop the turn for an approval).
  rig.fake.reset();
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 'h1',
            name: 'search_history',
            arguments: JSON.stringify({ query: 'gym locker' }),
          },
        },
      ],
    },
    textReply('Your gym locker code is 4817.'),
  );
  const asked = await api(rig.port, 'POST', '/api/chat', {
    message: 'What was my gym locker code again?',
  });
  assert.is(asked.status, 201, JSON.stringify(asked.body));
  assert.is(asked.body.reply, 'Your gym locker code is 4817.');
  const [first, second] = rig.fake.requests.filter((r) => r.answer === 'script');
  assert.ok(first && second, `two model calls: ${rig.fake.requests.length}`);
  // The model is told the tool exists and when to use it, and sees no other chat in its prompt.
  const firstBody = JSON.stringify(first.body);
  assert.ok(firstBody.includes('"search_history"'));
  assert.match(firstBody, /call search_history before answering/);
  assert.not.ok(firstBody.includes('4817'), 'the other chat is not in the prompt');
  // What the tool gave back: the excerpt, cited with the session, the date and the message.
  const msgs = (second.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const result = String(msgs.find((m) => m.role === 'tool')?.content ?? '');
  assert.match(result, /\*\*gym\*\* \*\*locker\*\* is 4817/);
  assert.ok(result.includes(`session ${source}`), result);
  assert.ok(result.includes(`message ${sourceMsg} (user)`), result);
  assert.ok(result.includes(new Date().toISOString().slice(0, 10)), result);
  assert.not.ok(result.includes(asked.body.session_id), 'its own session is left out');
});

/** Inputs that break naive FTS5 use. */
const HOSTILE = [
  'AND',
  'OR OR',
  'NOT x',
  'NEAR(',
  'NEAR(a b, 2)',
  'a NEAR/3 b',
  '"',
  '"""',
  '-"',
  '*',
  '"*"*',
  '^a',
  'title:x',
  '{title body}:x',
  '(a',
  "'; DROP TABLE messages; --",
  'nul\u0000byte',
  '\u0000',
  '\u0300',
  '東京タワー',
  '🎉🔥',
  'emoji🎉inside',
  'x'.repeat(600),
  `${'a '.repeat(40)}`,
];

test('hostile queries answer 200 or 400, never 500', async () => {
  for (const q of HOSTILE) {
    const r = await api(rig.port, 'GET', `/api/search?q=${encodeURIComponent(q)}`);
    assert.ok(r.status === 200 || r.status === 400, `${JSON.stringify(q)}: ${r.status}`);
    if (r.status === 400) assert.is(r.body.error.code, 'invalid_request');
    const p = await api(rig.port, 'POST', '/api/search', { q });
    assert.is(p.status, r.status, `POST ${JSON.stringify(q)}`);
  }
  const long = await api(rig.port, 'POST', '/api/search', { q: 'word '.repeat(2000) });
  assert.is(long.status, 400);
  assert.match(long.body.error.message, /at most 500/);
  for (const bad of [
    '',
    '?q=',
    '?q=a&kind=bogus',
    '?q=a&limit=0',
    '?q=a&limit=51',
    '?q=a&cursor=nope',
    '?q=a&from=yesterday',
    '?q=a&origin=mars',
    '?q=a&role=system',
    '?q=a&from=2026-02-01&to=2026-01-01',
  ]) {
    const r = await api(rig.port, 'GET', `/api/search${bad}`);
    assert.is(r.status, 400, `${bad}: ${JSON.stringify(r.body)}`);
    assert.type(r.body.error.message, 'string');
  }
  assert.is((await api(rig.port, 'POST', '/api/search', { q: 1 })).status, 400);
  assert.is((await api(rig.port, 'POST', '/api/search', '{"q":')).status, 400);
});

test('the OpenAPI document describes the search', async () => {
  const doc = (await api(rig.port, 'GET', '/api/openapi.json')).body;
  const op = doc.paths['/api/search'].get;
  assert.match(op.summary, /BM25/);
  assert.equal(
    op.parameters.map((p: any) => p.name),
    ['q', 'session', 'origin', 'role', 'kind', 'from', 'to', 'limit', 'cursor'],
  );
  assert.ok(doc.paths['/api/search'].post.requestBody);
});

// ---- search by meaning (issue 36.5), against a stand-in /v1/embeddings served here ----

/** Words the stand-in model takes for the same thing: "automobile" lands where "car" does. */
const SAME: Record<string, string> = { automobile: 'car', automobiles: 'car' };
const DIMS = 256;
const embedded: string[] = [];
let embedServer: Server | undefined;

/** A deterministic vector: one axis per word (by a hash of it), so texts sharing no word are orthogonal. */
function hashVector(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const w = SAME[raw] ?? raw;
    let h = 2166136261;
    for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    v[h % DIMS]! += 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

async function startEmbeddings(): Promise<number> {
  embedServer = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = (JSON.parse(body) as { input: string[] }).input;
      embedded.push(...input);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          data: input.map((t, index) => ({ index, embedding: hashVector(t) })),
          usage: { prompt_tokens: input.join(' ').split(/\s+/).length },
        }),
      );
    });
  });
  await new Promise<void>((r) => embedServer!.listen(0, '127.0.0.1', r));
  return (embedServer.address() as AddressInfo).port;
}
test.after(() => {
  embedServer?.close();
});

const say = async (words: string) => {
  rig.fake.enqueue(textReply('Noted.'));
  const r = await api(rig.port, 'POST', '/api/chat', { message: words });
  assert.is(r.status, 201, JSON.stringify(r.body));
  await waitFor(async () => (await messagesOf(rig.port, r.body.session_id)).length >= 2, 10_000);
  return (await messagesOf(rig.port, r.body.session_id))[0].id as string;
};
let automobileMsg = '';
let bicycleMsg = '';

test('without an embeddings model, search ranks by words and nothing is sent anywhere', async () => {
  const port = await startEmbeddings();
  automobileMsg = await say('I washed the automobile on Sunday');
  bicycleMsg = await say('I oiled the bicycle chain on Sunday');
  const r = await search('car');
  assert.is((r as any).ranking, 'text');
  assert.equal(r.items, []);
  assert.is((r as any).ranking, 'text');
  // The stand-in is up, but no model entry names it: nothing may reach it, no vector table exists.
  const db = openDb(join(rig.server.home, 'svc.db'), { readonly: true });
  try {
    const vec = db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'search_vec%'").all();
    assert.equal(vec, []);
  } finally {
    db.close();
  }
  assert.equal(embedded, []);
  const m = await api(rig.port, 'POST', '/api/config/models', {
    id: 'emb',
    provider: 'custom',
    protocol: 'openai',
    base_url: `http://127.0.0.1:${port}/v1`,
    model: 'hash-embed',
  });
  assert.is(m.status, 201, JSON.stringify(m.body));
  assert.equal(embedded, [], 'a model entry alone sends nothing: only the slot does');
});

test('with slots.embeddings, messages are embedded in the background and "car" finds the automobile', async () => {
  const slot = await api(rig.port, 'PUT', '/api/config/models/embeddings', { model_id: 'emb' });
  assert.is(slot.status, 200, JSON.stringify(slot.body));
  await waitFor(
    () => embedded.includes('I oiled the bicycle chain on Sunday'),
    10_000,
    'the supervisor to embed the chats',
  );
  const r = await waitFor(
    async () => {
      const a = await search('car');
      return a.items.length > 0 ? a : undefined;
    },
    10_000,
    'a search by meaning to find the automobile',
  );
  assert.is((r as any).ranking, 'text+semantic');
  const found = r.items.map((h) => h.ref);
  assert.ok(found.includes(automobileMsg), JSON.stringify(r.items));
  assert.not.ok(found.includes(bicycleMsg), 'a message sharing no meaning is not found');
  assert.is(r.items[0].kind, 'message');
  // Both lists fused: the word match and the meaning match of "Sunday automobile" come first.
  const both = await search('Sunday');
  assert.is((both as any).ranking, 'text+semantic');
  assert.ok(both.items.some((h) => h.ref === bicycleMsg));
  // svc status names the model and what waits for it.
  const st = await waitFor(
    async () => {
      const s = JSON.parse(
        (await runCli(['status', '--json'], { SVC_HOME: rig.server.home })).stdout,
      );
      return s.semantic?.waiting === 0 ? s : undefined;
    },
    10_000,
    'svc status to show every message embedded',
  );
  assert.equal(st.semantic, { model_id: 'emb', waiting: 0 });
  // The embedding calls are model calls: recorded in usage, where budgets count them.
  const db = openDb(join(rig.server.home, 'svc.db'), { readonly: true });
  try {
    const n = db
      .prepare(
        "SELECT count(*) AS n FROM usage_records WHERE origin = 'embedding' AND status = 'ok'",
      )
      .get() as { n: number };
    assert.ok(n.n >= 2, `usage records of embedding calls: ${n.n}`);
  } finally {
    db.close();
  }
});

test('search_history finds by meaning too while the embeddings slot is set', async () => {
  rig.fake.reset();
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: 's1',
            name: 'search_history',
            arguments: JSON.stringify({ query: 'car' }),
          },
        },
      ],
    },
    textReply('You washed it on Sunday.'),
  );
  const asked = await api(rig.port, 'POST', '/api/chat', { message: 'When did I clean my car?' });
  assert.is(asked.status, 201, JSON.stringify(asked.body));
  const second = rig.fake.requests.filter((r) => r.answer === 'script')[1];
  const msgs = (second?.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const result = String(msgs.find((m) => m.role === 'tool')?.content ?? '');
  assert.ok(result.includes(`message ${automobileMsg} (user)`), result);
  assert.not.ok(result.includes(bicycleMsg), result);
});

test('a budget the embeddings would cross stops them; search answers by words and says why', async () => {
  // The last chat embedded first, so no batch is under way when the limit comes.
  await waitFor(() => embedded.includes('You washed it on Sunday.'), 10_000, 'the fill');
  const b = await api(rig.port, 'PUT', '/api/budgets', { daily: { tokens: 1 } });
  assert.is(b.status, 200, JSON.stringify(b.body));
  const before = embedded.length;
  const r = await search('car');
  assert.is((r as any).ranking, 'text');
  assert.match(r.notice ?? '', /Ranked by words only/);
  assert.is(
    embedded.length,
    before,
    `no embedding request past the budget: ${JSON.stringify(embedded.slice(before))}`,
  );
  const c = await api(rig.port, 'PUT', '/api/budgets', {});
  assert.is(c.status, 200, JSON.stringify(c.body));
  const off = await api(rig.port, 'PUT', '/api/config/models/embeddings', { model_id: null });
  assert.is(off.status, 200, JSON.stringify(off.body));
  // Cleared: by words again ("car" is now in the question asked above, not in the automobile chat).
  const after = await search('car');
  assert.is((after as any).ranking, 'text');
  assert.not.ok(after.items.some((h) => h.ref === automobileMsg));
});

test.run();
