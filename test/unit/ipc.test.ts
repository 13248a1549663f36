import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiErrorOf } from '../../src/gateway/error-map.js';
import { configSchema } from '../../src/shared/config/schema.js';
import { ApiError, StoreError } from '../../src/shared/errors.js';
import { Endpoint, IpcCallError } from '../../src/shared/protocol/endpoint.js';
import { deadlineMs, innerWaits } from '../../src/shared/protocol/routes.js';
import { ipcMessage } from '../../src/shared/protocol/ipc.js';
import { Child } from '../../src/supervisor/child-process.js';
import { IpcRouter } from '../../src/supervisor/ipc-router.js';
import { forkEntry } from '../../src/supervisor/spawn-child.js';
import { waitFor } from '../helpers/server.js';
import { rejection } from '../helpers/rejects.js';

const peer = fileURLToPath(new URL('../fixtures/ipc-peer.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-ipc-'));
const outFile = join(dir, 'out.jsonl');
const config = configSchema.parse({});

function lines(): Array<Record<string, any>> {
  try {
    return readFileSync(outFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

// The test plays the supervisor with the real Child and Router; the children are real processes.
const children = new Map<string, Child>();
const router = new IpcRouter((role) => children.get(role));
function spawn(role: 'gateway' | 'agent'): Child {
  const child = new Child(
    role,
    forkEntry(peer, { ...process.env, SVC_ROLE: role, IPC_TEST_OUT: outFile }),
  );
  router.attach(child);
  children.set(role, child);
  return child;
}

test('the protocol schema accepts well-formed messages and rejects malformed ones', () => {
  const ok = ipcMessage.safeParse({
    kind: 'req',
    id: 'a',
    type: 'worker.echo',
    to: 'agent',
    deadline: Date.now() + 1000,
    payload: { text: 'hi' },
  });
  assert.ok(ok.success);
  const badPayload = ipcMessage.safeParse({
    kind: 'req',
    id: 'a',
    type: 'worker.echo',
    to: 'agent',
    deadline: Date.now() + 1000,
    payload: { text: 5 },
  });
  assert.not.ok(badPayload.success);
  // The payload is checked by its type's schema, and the problem named by where it is.
  assert.equal(badPayload.error?.issues[0]?.path, ['payload', 'text']);
  const badType = ipcMessage.safeParse({
    kind: 'req',
    id: 'a',
    type: 'worker.nope',
    to: 'agent',
    deadline: 1,
    payload: {},
  });
  assert.not.ok(badType.success);
  const badRole = ipcMessage.safeParse({
    kind: 'req',
    id: 'a',
    type: 'worker.echo',
    to: 'kernel',
    deadline: 1,
    payload: { text: '' },
  });
  assert.not.ok(badRole.success);
  assert.ok(ipcMessage.safeParse({ kind: 'res', re: 'a', ok: true, result: {} }).success);
  assert.ok(
    ipcMessage.safeParse({ kind: 'event', type: 'server.draining', payload: { retry_after_s: 5 } })
      .success,
  );
  assert.not.ok(
    ipcMessage.safeParse({ kind: 'event', type: 'server.draining', payload: {} }).success,
  );
  // What the payload's schema adds (a default here) is in what the receiver gets.
  const start = ipcMessage.parse({
    kind: 'req',
    id: 'a',
    type: 'turn.start',
    to: 'supervisor',
    deadline: Date.now() + 1000,
    payload: { session_id: 's', message: { text: 'hi' }, origin: 'http' },
  });
  assert.ok(start.kind === 'req');
  assert.equal(start.payload, {
    session_id: 's',
    message: { text: 'hi', attachments: [] },
    origin: 'http',
  });
});

test("a turn's trace context crosses IPC only as a well-formed W3C traceparent", () => {
  const turn = (traceparent: unknown) =>
    ipcMessage.safeParse({
      kind: 'req',
      id: 'a',
      type: 'agent.turn',
      to: 'agent',
      deadline: Date.now() + 1000,
      payload: {
        turn_id: 't',
        session_id: 's',
        message: { text: 'hi' },
        origin: 'http',
        ...(traceparent === undefined ? {} : { traceparent }),
      },
    });
  assert.ok(turn(undefined).success, 'optional: traces may be off');
  assert.ok(turn('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01').success);
  for (const bad of [
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7', // no flags
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // unknown version
    `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, // all-zero trace id
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', // upper case
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nx',
    42,
  ]) {
    const r = turn(bad);
    assert.not.ok(r.success, String(bad));
    assert.equal(r.error?.issues[0]?.path, ['payload', 'traceparent']);
  }
});

test('a request from one child reaches another through the supervisor and the answer comes back', async () => {
  const agent = spawn('agent');
  const gateway = spawn('gateway');
  await agent.endpoint.request('child.start', { config }, { to: 'agent' });
  await gateway.endpoint.request('child.start', { config }, { to: 'gateway' });
  const echo = await waitFor(
    () => lines().find((l) => l.role === 'gateway' && l.echo),
    5000,
    'the echo',
  );
  assert.equal(echo.echo, { text: 'across the supervisor', role: 'agent', pid: agent.pid });
  const unreachable = await waitFor(
    () => lines().find((l) => l.unreachable),
    5000,
    'the unreachable answer',
  );
  assert.match(unreachable.unreachable, /no cron process is running/);
});

test('malformed messages from a child are dropped, counted, and the link keeps working', async () => {
  const agent = children.get('agent')!;
  await waitFor(() => agent.endpoint.dropped >= 4, 5000, 'four dropped messages');
  assert.is(agent.endpoint.dropped, 4);
  const echo = await agent.endpoint.request('worker.echo', { text: 'still here' }, { to: 'agent' });
  assert.is(echo.text, 'still here');
});

test('the routing table decides who may send what: an agent cannot write config, read the status or message a channel', async () => {
  const { refused } = await waitFor(
    () => lines().find((l) => l.role === 'agent' && l.refused),
    10_000,
    'the agent peer to try its forbidden requests',
  );
  assert.equal(
    refused.map((r: { type: string; code: string }) => [r.type, r.code]),
    [
      ['config.slots.set', 'forbidden'],
      ['supervisor.status', 'forbidden'],
      ['channels.send', 'forbidden'],
    ],
  );
  assert.match(refused[0].message, /the agent process may not send config\.slots\.set/);
});

test('malformed messages to a child are dropped by the child, which keeps answering', async () => {
  const gateway = children.get('gateway')!;
  gateway.proc.send({
    kind: 'req',
    id: 'y',
    type: 'worker.echo',
    to: 'gateway',
    deadline: Date.now() + 1000,
    payload: { text: 7 },
  });
  gateway.proc.send('plain text');
  const echo = await gateway.endpoint.request('worker.echo', { text: 'ok' }, { to: 'gateway' });
  assert.equal(echo, { text: 'ok', role: 'gateway', pid: gateway.pid });
});

test('a request past its deadline fails with a timeout instead of waiting forever', async () => {
  const gateway = children.get('gateway')!;
  const err = await rejection(
    gateway.endpoint.request('gateway.handover', {}, { timeoutMs: 300 }),
    'a request nobody answers times out',
  );
  assert.instance(err, IpcCallError);
  assert.is((err as IpcCallError).code, 'timeout');
});

test('when a child dies, requests to it fail at once with unavailable', async () => {
  const agent = children.get('agent')!;
  agent.proc.kill('SIGKILL');
  await agent.exited;
  const err = await rejection(
    agent.endpoint.request('worker.echo', { text: 'x' }, { to: 'agent' }),
    'a request to a dead child fails',
  );
  assert.instance(err, IpcCallError);
  assert.is((err as IpcCallError).code, 'unavailable');
});

test('deadlines come from the routing table, and a wait that covers another is derived from it', () => {
  // A request sent with no options carries the table's deadline.
  const sent: Array<{ type?: string; deadline?: number }> = [];
  const ep = new Endpoint(
    { send: (m) => void sent.push(m as { deadline?: number }), onMessage: () => undefined },
    'gateway',
    'supervisor',
  );
  // A clock that stands still while each request is sent: the deadline is exactly now + the table's.
  const now = Date.now;
  Date.now = () => 1_000_000;
  try {
    for (const type of ['turn.start', 'supervisor.status', 'config.models.delete'] as const) {
      void ep.request(type, {} as never).catch(() => undefined);
      assert.is(sent.at(-1)!.deadline, 1_000_000 + deadlineMs(type), type);
    }
  } finally {
    Date.now = now;
  }
  ep.close('test over');
  // The gateway's wait covers everything the supervisor's handler waits for.
  assert.ok(deadlineMs('turn.start') > deadlineMs('agent.turn'));
  assert.ok(deadlineMs('turn.interrupt') > innerWaits.interruptAck + innerWaits.turnEnds);
  assert.ok(deadlineMs('approval.answer') > deadlineMs('agent.approval'));
  assert.ok(deadlineMs('approval.list') > deadlineMs('agent.approvals'));
  assert.ok(deadlineMs('agent.probe_model') > innerWaits.modelProbe);
  assert.is(deadlineMs('agent.interrupt'), innerWaits.interruptAck);
});

test('no caller writes a fixed deadline of its own (only waits that depend on the call)', () => {
  const src = fileURLToPath(new URL('../../../src/', import.meta.url));
  const offenders: string[] = [];
  for (const f of readdirSync(src, { recursive: true }) as string[]) {
    if (!f.endsWith('.ts') || f.startsWith('shared/protocol')) continue;
    const text = readFileSync(join(src, f), 'utf8');
    // A request call whose options hold a number literal as its timeout.
    for (const m of text.matchAll(/\.request\(([^;]|\n)*?timeoutMs: \d[\d_]*/g))
      if (!m[0].includes('\n\n')) offenders.push(`${f}: ${m[0].split('\n')[0]}`);
  }
  assert.equal(offenders, []);
});

test('a child that said it was ready before the supervisor adopted it still answers (a slow start)', async () => {
  // `svc serve` forks the gateway before its own start; when that start is slow (a relaunch
  // waiting for its port, a long migration) the gateway is ready first, and its child.ready
  // waits in the fork's buffer until the Child exists.
  const forked = forkEntry(peer, { ...process.env, SVC_ROLE: 'agent', IPC_TEST_OUT: outFile });
  let ready = false;
  forked.proc.on('message', (m: { type?: string }) => {
    if (m?.type === 'child.ready') ready = true;
  });
  try {
    await waitFor(() => ready, 10_000, 'the child to say it is ready, before anyone adopts it');
    const late = new Child('agent', forked);
    const echo = await late.endpoint.request(
      'worker.echo',
      { text: 'adopted late' },
      { to: 'agent', timeoutMs: 5000 },
    );
    assert.is(echo.text, 'adopted late');
    assert.is(echo.pid, forked.proc.pid);
  } finally {
    forked.proc.kill('SIGKILL');
  }
});

/** A gateway and a supervisor endpoint over an in-memory link that copies like process IPC (JSON). */
function linkedPair(): { gateway: Endpoint; supervisor: Endpoint } {
  type Listener = (raw: unknown) => void;
  const ears: { gateway?: Listener; supervisor?: Listener } = {};
  const link = (from: 'gateway' | 'supervisor', to: 'gateway' | 'supervisor') => ({
    send: (m: unknown) => queueMicrotask(() => ears[to]?.(JSON.parse(JSON.stringify(m)))),
    onMessage: (l: Listener) => {
      ears[from] = l;
    },
  });
  return {
    gateway: new Endpoint(link('gateway', 'supervisor'), 'gateway', 'supervisor'),
    supervisor: new Endpoint(link('supervisor', 'gateway'), 'supervisor', 'gateway', 'gateway'),
  };
}

test('a request whose payload does not parse is refused at once, not left to its deadline', async () => {
  const { gateway, supervisor } = linkedPair();
  let handled = false;
  supervisor.handle('config.models.delete', () => {
    handled = true;
    return {};
  });
  const err = await rejection(
    gateway.request('config.models.delete', { id: '__proto__' }),
    'the request is refused',
  );
  // Answered with the refusal (not left to run into its deadline: that would be code 'timeout').
  assert.instance(err, IpcCallError);
  assert.is((err as IpcCallError).code, 'invalid_request');
  assert.match((err as Error).message, /payload\.id/);
  assert.not.ok(handled, 'the handler never saw it');
  assert.is(supervisor.dropped, 1);
});

test("a handler's refusal crosses with its code and details; any other throw is internal", async () => {
  const { gateway, supervisor } = linkedPair();
  supervisor.handle('config.models.delete', ({ id }) => {
    if (id === 'taken')
      throw new StoreError('conflict', 'The name is taken.', { reason: 'original_taken' });
    if (id === 'api') throw new ApiError('not_found', 'No such model.');
    throw new Error('a bug');
  });
  const call = (id: string) =>
    rejection(gateway.request('config.models.delete', { id }), `deleting ${id} is refused`);
  const taken = (await call('taken')) as IpcCallError;
  assert.is(taken.code, 'conflict');
  assert.equal(taken.details, { reason: 'original_taken' });
  // At the edge the client reads the same refusal as if the gateway's own store had said it.
  const seen = apiErrorOf(taken);
  assert.equal(
    [seen.status, seen.message, seen.details],
    [409, 'The name is taken.', { reason: 'original_taken' }],
  );
  assert.is(((await call('api')) as IpcCallError).code, 'not_found');
  assert.is(((await call('other')) as IpcCallError).code, 'internal');
});

test.after(async () => {
  await Promise.all([...children.values()].map((c) => c.stop(2000)));
  rmSync(dir, { recursive: true, force: true });
});

test.run();
