import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import {
  connectWs,
  joined,
  messagesOf,
  ofTurn,
  startRig,
  status,
  type TurnRig,
  type WsClient,
} from '../helpers/turns.js';

/**
 * A busy session deleted: its turn ends first (interrupted, the streamed text kept, so a restore
 * right after gives it back), also while it waits for an approval; an approval nobody answers
 * expires (the turn is told "no answer"); an interrupt the worker cannot take (SIGSTOP) ends the
 * turn anyway.
 */

const APPROVAL_S = 5;
let rig: TurnRig;
let root = '';
const stopped: number[] = [];

test.before(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-faults-busy-'));
  // Liveness far away: the interrupt, not liveness, must end the stopped worker's turn.
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: `agent:\n  approval_timeout_seconds: ${APPROVAL_S}\nliveness:\n  timeout_seconds: 120\n`,
  });
});
test.after(async () => {
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone
    }
  }
  await rig?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});
test.before.each(() => rig.fake.reset());

let n = 0;
async function chat(): Promise<{ id: string; ws: WsClient }> {
  const res = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: root,
    permission_mode: 'interactive',
    title: `busy ${++n}`,
  });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.id, ws: await connectWs(rig.port, [`session:${res.body.id}`]) };
}

const ENDS = ['turn.completed', 'turn.failed', 'turn.interrupted'];
const endsOf = (ws: WsClient, turnId: string) =>
  ofTurn(ws.events, turnId).filter((e) => ENDS.includes(e.type));

async function startTurn(id: string): Promise<string> {
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, { message: 'go' });
  assert.is(r.status, 202, JSON.stringify(r.body));
  return r.body.turn_id as string;
}

async function restore(trashId: string, id: string): Promise<void> {
  const r = await api(rig.port, 'POST', `/api/trash/${trashId}/restore`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.is(r.body.restored_to, id);
}

/** A curl asks in interactive mode (a network tool). */
const curlCall = (id: string): FakeReply => ({
  parts: [
    {
      toolCall: {
        id,
        name: 'terminal',
        arguments: [JSON.stringify({ command: 'curl --version' })],
      },
    },
  ],
  stop: 'tool_use',
});

test('DELETE of a streaming session ends its turn first (interrupted, text kept); a restore right after gives the text back; the restored session takes a turn', async () => {
  const { id, ws } = await chat();
  try {
    rig.fake.enqueue({ parts: [{ text: ['So ', 'far'] }, { stall: true }] });
    const turnId = await startTurn(id);
    await waitFor(
      () => joined(ofTurn(ws.events, turnId), 'turn.text_delta') === 'So far',
      10_000,
      'the streamed text',
    );
    const del = await api(rig.port, 'DELETE', `/api/sessions/${id}`);
    assert.is(del.status, 200, JSON.stringify(del.body));
    // The turn ended before the session went: its end came first on the session's topic.
    const ended = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && ENDS.includes(e.type),
      'the turn end',
      5000,
    );
    assert.is(ended.type, 'turn.interrupted');
    const deleted = await ws.waitEvent(
      (e) => e.type === 'session.deleted',
      'session.deleted',
      5000,
    );
    assert.ok(ended.seq < deleted.seq, 'the turn ended before the session was deleted');
    await restore(del.body.trash_id, id);
    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.is(stored[1].content.text, 'So far');
    assert.is(stored[1].content.stop_reason, 'interrupted');
    assert.is(
      (await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`)).body.status,
      'interrupted',
    );
    assert.is(endsOf(ws, turnId).length, 1, 'one ending only');

    rig.fake.enqueue(textReply('fresh'));
    const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
    assert.is(next.body.reply, 'fresh', JSON.stringify(next.body));
  } finally {
    ws.close();
  }
});

test('DELETE of a session waiting for an approval ends the turn and withdraws the approval', async () => {
  const { id, ws } = await chat();
  try {
    rig.fake.enqueue(curlCall('d1'), textReply('never'));
    const turnId = await startTurn(id);
    const asked = await ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.turn_id === turnId,
      'approval.requested',
      10_000,
    );
    const del = await api(rig.port, 'DELETE', `/api/sessions/${id}`);
    assert.is(del.status, 200, JSON.stringify(del.body));
    const ended = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && ENDS.includes(e.type),
      'the turn end',
      5000,
    );
    assert.is(ended.type, 'turn.interrupted');
    assert.ok(
      ws.events.some(
        (e) => e.type === 'approval.withdrawn' && e.data.approval_id === asked.data.approval_id,
      ),
      'the approval was withdrawn',
    );
    assert.is(rig.fake.pending, 1, 'the model was not asked again');
    await restore(del.body.trash_id, id);
    assert.equal(
      (await api(rig.port, 'GET', `/api/sessions/${id}/approvals`)).body.items ?? [],
      [],
    );
  } finally {
    ws.close();
  }
});

test('an approval nobody answers expires after agent.approval_timeout_seconds: the turn is told "no answer" and finishes', async () => {
  const { id, ws } = await chat();
  try {
    rig.fake.enqueue(curlCall('e1'), textReply('ok, not run'));
    const turnId = await startTurn(id);
    const asked = await ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.turn_id === turnId,
      'approval.requested',
      10_000,
    );
    assert.type(asked.data.expires_at, 'string');
    const expired = await ws.waitEvent(
      (e) => e.type === 'approval.expired' && e.data.approval_id === asked.data.approval_id,
      'approval.expired',
      (APPROVAL_S + 10) * 1000,
    );
    assert.is(expired.data.timeout_seconds, APPROVAL_S);
    const result = await ws.waitEvent(
      (e) => e.type === 'turn.tool_result' && e.data.call_id === 'e1',
      'the tool result',
      10_000,
    );
    assert.match(result.data.output, /no answer/);
    const done = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && ENDS.includes(e.type),
      'the turn end',
      10_000,
    );
    assert.is(done.type, 'turn.completed');
    assert.is(done.data.reply, 'ok, not run');
  } finally {
    ws.close();
  }
});

test('an interrupt the agent worker cannot take (SIGSTOP) ends the turn anyway, keeping the streamed text; the session takes a new turn', async () => {
  const { id, ws } = await chat();
  try {
    rig.fake.enqueue({ parts: [{ text: ['Stuck ', 'here'] }, { stall: true }] });
    const turnId = await startTurn(id);
    await waitFor(
      () => joined(ofTurn(ws.events, turnId), 'turn.text_delta') === 'Stuck here',
      10_000,
      'the streamed text',
    );
    const agent = (await status(rig.port)).processes.find(
      (p: any) => p.role === 'agent' && p.inflight_turns > 0,
    );
    assert.ok(agent, 'an agent runs the turn');
    process.kill(agent.pid, 'SIGSTOP');
    stopped.push(agent.pid);
    const r = await api(rig.port, 'POST', `/api/chat/${id}/interrupt`, {});
    assert.is(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body, { interrupted: true, turn_id: turnId });
    const ended = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && ENDS.includes(e.type),
      'the turn end',
      10_000,
    );
    assert.is(ended.type, 'turn.interrupted');
    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.is(stored[1].content.text, 'Stuck here');
    assert.is(endsOf(ws, turnId).length, 1, 'one ending only');

    rig.fake.enqueue(textReply('unstuck'));
    const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
    assert.is(next.body.reply, 'unstuck', JSON.stringify(next.body));
  } finally {
    ws.close();
  }
});

test.run();
