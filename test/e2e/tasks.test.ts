import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { ToolRegistry, type ToolContext } from '../../src/workers/agent/tools/registry.js';
import { taskTools } from '../../src/workers/agent/tools/session/tasks.js';
import { api } from '../helpers/api.js';
import { subscribe, type EventClient } from '../helpers/events.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let db: Db;
let port: number;
let events: EventClient;

test.before(async () => {
  server = await startServer();
  port = server.port;
  db = openDb(join(server.home, 'svc.db'));
  events = await subscribe(port, ['tasks']);
});
test.after(async () => {
  events.close();
  db.close();
  await server.stop();
  removeHome(server.home);
});

const create = async (body: Record<string, unknown>) => {
  const r = await api(port, 'POST', '/api/tasks', body);
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body;
};
const list = async (query = '') =>
  (await api(port, 'GET', `/api/tasks${query}`)).body.items as Array<{
    id: string;
    subject: string;
    status: string;
    blocked_by: string[];
  }>;

test('POST creates a graph task with defaults, GET lists it, an event goes out on topic tasks', async () => {
  const t = await create({ subject: '  Write the plan  ' });
  assert.match(t.id, /^task_[a-z0-9]+$/);
  assert.equal(
    {
      kind: t.kind,
      subject: t.subject,
      description: t.description,
      status: t.status,
      blocked_by: t.blocked_by,
      owner_session: t.owner_session,
      data: t.data,
    },
    {
      kind: 'graph',
      subject: 'Write the plan',
      description: '',
      status: 'pending',
      blocked_by: [],
      owner_session: null,
      data: {},
    },
  );
  assert.is(t.created_at, t.updated_at);
  assert.ok((await list()).some((x) => x.id === t.id));
  const e = await events.next(
    (x) => x.type === 'task.created' && x.data.id === t.id,
    'task.created',
  );
  assert.is(e.topic, 'tasks');
  assert.equal(e.data, t);
});

test('an unknown blocked_by id is a 400 naming it, and nothing is created', async () => {
  const a = await create({ subject: 'a' });
  const before = (await list()).length;
  const r = await api(port, 'POST', '/api/tasks', {
    subject: 'b',
    blocked_by: [a.id, 'task_nope', 'task_gone'],
  });
  assert.is(r.status, 400);
  assert.is(r.body.error.code, 'invalid_request');
  assert.match(r.body.error.message, 'task_nope, task_gone');
  assert.not.match(r.body.error.message, a.id);
  assert.is((await list()).length, before);
  const p = await api(port, 'PATCH', `/api/tasks/${a.id}`, { blocked_by: ['task_nope'] });
  assert.is(p.status, 400);
  assert.match(p.body.error.message, 'task_nope');
});

test('a cycle is a 400, a task cannot block itself, duplicates collapse', async () => {
  const a = await create({ subject: 'a' });
  const b = await create({ subject: 'b', blocked_by: [a.id, a.id] });
  assert.equal(b.blocked_by, [a.id]);
  const c = await create({ subject: 'c', blocked_by: [b.id] });
  const cycle = await api(port, 'PATCH', `/api/tasks/${a.id}`, { blocked_by: [c.id] });
  assert.is(cycle.status, 400, JSON.stringify(cycle.body));
  assert.match(cycle.body.error.message, 'cycle');
  const self = await api(port, 'PATCH', `/api/tasks/${a.id}`, { blocked_by: [a.id] });
  assert.is(self.status, 400);
  assert.match(self.body.error.message, 'itself');
  assert.equal(
    (await api(port, 'PATCH', `/api/tasks/${c.id}`, { blocked_by: [a.id, b.id] })).body.blocked_by,
    [a.id, b.id],
  );
});

test('bad fields are 400s: status, empty subject, unknown field, empty patch, bad filters', async () => {
  const a = await create({ subject: 'a' });
  const bad: Array<[string, string, unknown]> = [
    ['POST', '/api/tasks', { subject: 'x', status: 'done' }],
    ['POST', '/api/tasks', { subject: '   ' }],
    ['POST', '/api/tasks', { subject: 'x', priority: 1 }],
    ['POST', '/api/tasks', { subject: 'x', kind: 'cron' }],
    ['POST', '/api/tasks', { subject: 'x', owner_session: 's_missing' }],
    ['PATCH', `/api/tasks/${a.id}`, { status: 'deleted' }],
    ['PATCH', `/api/tasks/${a.id}`, {}],
    ['PATCH', `/api/tasks/${a.id}`, { kind: 'graph' }],
  ];
  for (const [method, path, body] of bad) {
    const r = await api(port, method, path, body);
    assert.is(r.status, 400, `${method} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
  }
  for (const q of ['?status=done', '?kind=nope']) {
    const r = await api(port, 'GET', `/api/tasks${q}`);
    assert.is(r.status, 400, q);
    assert.match(r.body.error.message, q.slice(1, q.indexOf('=')));
  }
  assert.is(
    (await api(port, 'PATCH', '/api/tasks/task_missing', { status: 'completed' })).status,
    404,
  );
});

test('a blocked task cannot start or complete until its blockers are completed (409)', async () => {
  const a = await create({ subject: 'first' });
  const b = await create({ subject: 'second', blocked_by: [a.id] });
  const early = await api(port, 'PATCH', `/api/tasks/${b.id}`, { status: 'in_progress' });
  assert.is(early.status, 409);
  assert.match(early.body.error.message, `${a.id} (pending)`);
  assert.is(
    (
      await api(port, 'POST', '/api/tasks', {
        subject: 'x',
        status: 'completed',
        blocked_by: [a.id],
      })
    ).status,
    409,
  );
  assert.is(
    (await api(port, 'PATCH', `/api/tasks/${a.id}`, { status: 'completed' })).body.status,
    'completed',
  );
  const started = await api(port, 'PATCH', `/api/tasks/${b.id}`, {
    status: 'in_progress',
    description: 'now',
  });
  assert.is(started.status, 200);
  assert.equal(
    [started.body.status, started.body.description, started.body.subject],
    ['in_progress', 'now', 'second'],
  );
  assert.ok(started.body.updated_at >= b.updated_at);
  const e = await events.next(
    (x) => x.type === 'task.updated' && x.data.id === b.id,
    'task.updated',
  );
  assert.is(e.data.status, 'in_progress');
});

test('filters: session, status, kind', async () => {
  const s = (await api(port, 'POST', '/api/sessions', {})).body;
  const mine = await create({ subject: 'mine', owner_session: s.id });
  const done = await create({ subject: 'mine, done', owner_session: s.id, status: 'completed' });
  await create({ subject: 'not mine' });
  assert.equal(
    (await list(`?session=${s.id}`)).map((t) => t.id),
    [mine.id, done.id],
  );
  assert.equal(
    (await list(`?session=${s.id}&status=completed`)).map((t) => t.id),
    [done.id],
  );
  assert.ok((await list('?kind=graph')).length >= 3);
  assert.equal(await list('?session=s_nobody'), []);
});

test('DELETE removes a task and unblocks its dependents, with events', async () => {
  const a = await create({ subject: 'a' });
  const b = await create({ subject: 'b', blocked_by: [a.id] });
  const r = await api(port, 'DELETE', `/api/tasks/${a.id}`);
  assert.is(r.status, 200);
  assert.equal(r.body, { deleted: a.id });
  assert.ok(!(await list()).some((t) => t.id === a.id));
  assert.equal((await list()).find((t) => t.id === b.id)!.blocked_by, []);
  const del = await events.next(
    (x) => x.type === 'task.deleted' && x.data.id === a.id,
    'task.deleted',
  );
  assert.equal(del.data, { id: a.id, kind: 'graph', owner_session: null });
  await events.next(
    (x) => x.type === 'task.updated' && x.data.id === b.id && x.data.blocked_by.length === 0,
    'task.updated for the dependent',
  );
  assert.is((await api(port, 'DELETE', `/api/tasks/${a.id}`)).status, 404);
});

test("the task tools keep the session's plan in the same store, scoped to the session", async () => {
  const published: Array<{ topic: string; type: string; data: unknown }> = [];
  const tools = new ToolRegistry(
    taskTools({ publish: (topic, type, data) => published.push({ topic, type, data }) }),
  );
  const ctxFor = (sessionId: string): ToolContext => ({
    sessionId,
    turnId: 'turn_1',
    callId: 'call_1',
    workingDir: null,
    signal: new AbortController().signal,
    db,
    paths: resolvePaths({ SVC_HOME: server.home }),
    emit: () => {},
  });
  const ctx = ctxFor('s_plan');
  const a = await tools.call('task_create', JSON.stringify({ subject: 'Read the code' }), ctx);
  const aId = /(task_[a-z0-9]+)/.exec(a.output)![1]!;
  const b = await tools.call(
    'task_create',
    JSON.stringify({ subject: 'Fix the bug', description: 'in the parser', blocked_by: [aId] }),
    ctx,
  );
  const bId = /(task_[a-z0-9]+)/.exec(b.output)![1]!;
  assert.match(b.output, `blocked by ${aId}`);
  const early = await tools.call(
    'task_update',
    JSON.stringify({ id: bId, status: 'in_progress' }),
    ctx,
  );
  assert.ok(early.isError);
  assert.match(early.output, 'blocked by');
  await tools.call('task_update', JSON.stringify({ id: aId, status: 'completed' }), ctx);
  assert.not.ok(
    (await tools.call('task_update', JSON.stringify({ id: bId, status: 'in_progress' }), ctx))
      .isError,
  );
  const listed = await tools.call('task_list', '{}', ctx);
  assert.equal(listed.output.split('\n'), [
    'Tasks: 1 in progress, 0 pending, 1 completed',
    `✓ ${aId} Read the code`,
    `▶ ${bId} Fix the bug`,
    '    in the parser',
  ]);
  assert.match(
    (await tools.call('task_list', JSON.stringify({ status: 'pending' }), ctx)).output,
    '(no pending tasks)',
  );
  const nothing = await tools.call('task_update', JSON.stringify({ id: bId }), ctx);
  assert.ok(nothing.isError);
  // Another session sees none of it and cannot use its ids.
  const other = ctxFor('s_other');
  assert.match((await tools.call('task_list', '{}', other)).output, '(no tasks)');
  assert.ok(
    (await tools.call('task_update', JSON.stringify({ id: aId, status: 'pending' }), other))
      .isError,
  );
  const foreign = await tools.call(
    'task_create',
    JSON.stringify({ subject: 'x', blocked_by: [aId] }),
    other,
  );
  assert.ok(foreign.isError);
  assert.match(foreign.output, `unknown task id: ${aId}`);
  // Same rows on the API, and every change was published on `tasks`.
  assert.equal(
    (await list('?session=s_plan')).map((t) => [t.id, t.status]),
    [
      [aId, 'completed'],
      [bId, 'in_progress'],
    ],
  );
  assert.equal(
    published.map((p) => `${p.topic} ${p.type}`),
    ['tasks task.created', 'tasks task.created', 'tasks task.updated', 'tasks task.updated'],
  );
});

test.run();
