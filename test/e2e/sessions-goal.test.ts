import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { addGoalUsage } from '../../src/shared/store/goals.js';
import { api } from '../helpers/api.js';
import { subscribe } from '../helpers/events.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let db: Db;
let port: number;

test.before(async () => {
  server = await startServer();
  port = server.port;
  db = openDb(join(server.home, 'svc.db'));
});
test.after(async () => {
  db.close();
  await server.stop();
  removeHome(server.home);
});

const newSession = async () => (await api(port, 'POST', '/api/sessions', {})).body.id as string;

test('goal lifecycle: none, set, edit, pause, usage, clear', async () => {
  const id = await newSession();
  const goalPath = `/api/sessions/${id}/goal`;
  const none = await api(port, 'GET', goalPath);
  assert.is(none.status, 404);
  assert.is(none.body.error.code, 'not_found');
  assert.match(none.body.error.message, /has no goal/);

  const set = await api(port, 'PUT', goalPath, {
    objective: 'Ship the parser',
    token_budget: 1000,
  });
  assert.is(set.status, 201);
  assert.equal(
    { ...set.body, created_at: 0, updated_at: 0 },
    {
      session_id: id,
      objective: 'Ship the parser',
      status: 'active',
      token_budget: 1000,
      usage: { input_tokens: 0, output_tokens: 0, turns: 0 },
      created_at: 0,
      updated_at: 0,
    },
  );
  assert.equal((await api(port, 'GET', goalPath)).body, set.body);

  const paused = await api(port, 'PUT', goalPath, { status: 'paused' });
  assert.is(paused.status, 200);
  assert.equal(
    [paused.body.objective, paused.body.status, paused.body.created_at],
    ['Ship the parser', 'paused', set.body.created_at],
  );

  // The server keeps usage; an edit of the objective keeps it, a replace starts over.
  addGoalUsage(db, id, { input_tokens: 300, output_tokens: 50, turns: 1 });
  const edited = await api(port, 'PUT', goalPath, {
    objective: 'Ship the parser and its docs',
    status: 'active',
  });
  assert.equal(edited.body.usage, { input_tokens: 300, output_tokens: 50, turns: 1 });
  assert.is(edited.body.status, 'active');
  const over = addGoalUsage(db, id, { input_tokens: 500, output_tokens: 200, turns: 1 });
  assert.is(over?.status, 'budget_limited', 'crossing the budget stops an active goal');
  assert.is((await api(port, 'GET', goalPath)).body.status, 'budget_limited');
  const noBudget = await api(port, 'PUT', goalPath, { token_budget: null, status: 'active' });
  assert.equal(
    [noBudget.body.token_budget, noBudget.body.status, noBudget.body.usage.turns],
    [null, 'active', 2],
  );
  const replaced = await api(port, 'PUT', goalPath, { objective: 'Something else', replace: true });
  assert.is(replaced.status, 201);
  assert.equal(replaced.body.usage, { input_tokens: 0, output_tokens: 0, turns: 0 });

  const cleared = await api(port, 'DELETE', goalPath);
  assert.is(cleared.status, 200);
  assert.is(cleared.body.cleared, true);
  assert.is((await api(port, 'GET', goalPath)).status, 404);
  assert.is((await api(port, 'DELETE', goalPath)).status, 404, 'nothing left to clear');
  assert.is(
    addGoalUsage(db, id, { input_tokens: 1 }),
    undefined,
    'usage without a goal is dropped',
  );
});

test('every status can be set; a bad goal is a 400 naming the field', async () => {
  const id = await newSession();
  const goalPath = `/api/sessions/${id}/goal`;
  const needsObjective = await api(port, 'PUT', goalPath, { status: 'active' });
  assert.is(needsObjective.status, 400);
  assert.match(needsObjective.body.error.message, /objective/);
  assert.is((await api(port, 'GET', goalPath)).status, 404, 'a refused PUT creates nothing');

  assert.is(
    (await api(port, 'PUT', goalPath, { objective: 'x'.repeat(4000) })).status,
    201,
    '4000 characters is the limit',
  );
  assert.is(
    (await api(port, 'PUT', goalPath, { objective: '🎯'.repeat(4000) })).status,
    200,
    'characters, not UTF-16 units',
  );
  for (const status of ['paused', 'complete', 'blocked', 'budget_limited', 'active']) {
    const r = await api(port, 'PUT', goalPath, { status });
    assert.is(r.body.status, status);
  }
  const before = (await api(port, 'GET', goalPath)).body;
  const cases: Array<[string, unknown]> = [
    ['objective', ''],
    ['objective', '   '],
    ['objective', 'x'.repeat(4001)],
    ['objective', 42],
    ['objective', null],
    ['status', 'done'],
    ['status', 'usage_limited'],
    ['status', null],
    ['token_budget', 0],
    ['token_budget', -5],
    ['token_budget', 1.5],
    ['token_budget', '100'],
    ['replace', 'yes'],
  ];
  for (const [field, value] of cases) {
    const r = await api(port, 'PUT', goalPath, { objective: 'fine', [field]: value });
    const label = `${field}=${JSON.stringify(value).slice(0, 20)}`;
    assert.is(r.status, 400, label);
    assert.is(r.body.error.code, 'invalid_request');
    assert.ok(r.body.error.message.includes(field), `${label}: ${r.body.error.message}`);
  }
  const usage = await api(port, 'PUT', goalPath, { usage: { input_tokens: 5 } });
  assert.is(usage.status, 400, 'usage is kept by the server, not set by PUT');
  assert.match(usage.body.error.message, /usage/);
  assert.is((await api(port, 'PUT', goalPath, {})).status, 400, 'an empty PUT is refused');
  assert.equal((await api(port, 'GET', goalPath)).body, before, 'refused PUTs change nothing');
  const missing = await api(port, 'PUT', '/api/sessions/s_0000000000000000000000/goal', {
    objective: 'x',
  });
  assert.is(missing.status, 404);
  assert.match(missing.body.error.message, /no session/);
});

test('goal changes are events on session:<id>', async () => {
  const id = await newSession();
  const c = await subscribe(port, [`session:${id}`]);
  try {
    await api(port, 'PUT', `/api/sessions/${id}/goal`, { objective: 'Watch me' });
    const up = await c.next((e) => e.type === 'goal.updated', 'goal.updated');
    assert.is(up.topic, `session:${id}`);
    assert.is(up.data.objective, 'Watch me');
    await api(port, 'DELETE', `/api/sessions/${id}/goal`);
    const cl = await c.next((e) => e.type === 'goal.cleared', 'goal.cleared');
    assert.equal(cl.data, { session_id: id });
    assert.ok(cl.seq > up.seq);
  } finally {
    c.close();
  }
});

test.run();
