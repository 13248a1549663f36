import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { askControl } from '../../src/supervisor/control-socket.js';
import { resolvePaths } from '../../src/shared/paths.js';
import { runCli, SLACK, waitFor } from '../helpers/server.js';
import {
  connectWs,
  joined,
  messagesOf,
  newChat,
  ofTurn,
  startRig,
  status,
  type TurnRig,
} from '../helpers/turns.js';

/**
 * Liveness: a child that stops answering (SIGSTOP, as a hung process) is noticed within
 * liveness.timeout_seconds, shown as `unresponsive` meanwhile, killed and replaced. A hung agent
 * worker's turn ends as `worker_unresponsive` keeping the text it had streamed, and the session
 * takes a new turn; a hung gateway is replaced and serves again.
 */

const TIMEOUT_S = 6;
let rig: TurnRig;
const stopped: number[] = [];

test.before(async () => {
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: `liveness:\n  timeout_seconds: ${TIMEOUT_S}\n`,
  });
});
test.after(async () => {
  // A test that failed before its process was killed must not leave it stopped.
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone
    }
  }
  await rig?.stop();
});

/**
 * What `svc status` shows, asked over the control socket from this process: a hung process is
 * `unresponsive` only between half the timeout and the kill, a window a `svc status` process
 * started per poll can miss on a loaded machine.
 */
async function controlStatus(): Promise<any> {
  return askControl(
    resolvePaths({ SVC_HOME: rig.server.home }).controlSocket,
    { cmd: 'status' },
    10_000,
  );
}

async function cliStatus(): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Whether `pid` is gone (or only a zombie waiting to be reaped). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

test('SIGSTOP of the agent worker mid-turn: unresponsive in status, the turn ends as worker_unresponsive with its streamed text kept, the session takes a new turn', async () => {
  const id = await newChat(rig.port);
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue({ parts: [{ text: ['Half ', 'way'] }, { stall: true }] });
    const started = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
      message: 'talk',
    });
    assert.is(started.status, 202, JSON.stringify(started.body));
    const turnId = started.body.turn_id as string;
    await waitFor(
      () => joined(ofTurn(ws.events, turnId), 'turn.text_delta') === 'Half way',
      10_000,
      'the streamed text',
    );
    const agent = (await status(rig.port)).processes.find(
      (p: any) => p.role === 'agent' && p.inflight_turns > 0,
    );
    assert.ok(agent, 'an agent runs the turn');
    process.kill(agent.pid, 'SIGSTOP');
    stopped.push(agent.pid);
    const t0 = Date.now();

    // While it lasts, status says so (the gateway still answers).
    await waitFor(
      async () =>
        (await status(rig.port)).processes.some(
          (p: any) => p.pid === agent.pid && p.state === 'unresponsive',
        ),
      TIMEOUT_S * 1000,
      'status to show the agent unresponsive',
    );
    const failed = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && e.type === 'turn.failed',
      'turn.failed',
      (TIMEOUT_S + 10) * 1000,
    );
    assert.is(failed.data.reason, 'worker_unresponsive', JSON.stringify(failed.data));
    const healedMs = Date.now() - t0;
    assert.ok(healedMs < (TIMEOUT_S + 10) * 1000 * SLACK, `healed in ${healedMs} ms`);
    await waitFor(() => gone(agent.pid), 10_000, 'the hung worker to be killed');
    assert.is(
      ofTurn(ws.events, turnId).filter((e) =>
        ['turn.completed', 'turn.failed', 'turn.interrupted'].includes(e.type),
      ).length,
      1,
      'one ending only',
    );

    // The text the user saw is kept.
    const stored = await messagesOf(rig.port, id);
    assert.equal(
      stored.map((m) => m.role),
      ['user', 'assistant'],
    );
    assert.is(stored[1].content.text, 'Half way');
    const turn = await api(rig.port, 'GET', `/api/sessions/${id}/turns/${turnId}`);
    assert.is(turn.body.status, 'failed', JSON.stringify(turn.body));
    assert.is(turn.body.error.reason, 'worker_unresponsive');

    const after = (await cliStatus()).processes.filter((p: any) => p.role === 'agent');
    assert.ok(
      after.every((p: any) => p.pid !== agent.pid && p.state !== 'unresponsive'),
      JSON.stringify(after),
    );

    // The session takes a new turn, on a new worker.
    rig.fake.enqueue(textReply('back again'));
    const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' });
    assert.is(next.status, 200, JSON.stringify(next.body));
    assert.is(next.body.reply, 'back again');
    const agents = (await cliStatus()).processes.filter((p: any) => p.role === 'agent');
    assert.ok(agents.length >= 1 && agents.every((p: any) => p.pid !== agent.pid));
    assert.ok(
      agents.some((p: any) => /unresponsive/.test(p.last_exit ?? '')),
      JSON.stringify(agents),
    );
  } finally {
    ws.close();
  }
});

test('SIGSTOP of the gateway: unresponsive in svc status, replaced within the bound, serving again; a healthy agent is left alone', async () => {
  const before = await cliStatus();
  const gw = before.processes.find((p: any) => p.role === 'gateway');
  const agentsBefore = before.processes
    .filter((p: any) => p.role === 'agent')
    .map((p: any) => p.pid);
  process.kill(gw.pid, 'SIGSTOP');
  stopped.push(gw.pid);
  const t0 = Date.now();

  await waitFor(
    async () =>
      (await controlStatus()).processes.some(
        (p: any) => p.pid === gw.pid && p.state === 'unresponsive',
      ),
    TIMEOUT_S * 1000,
    'svc status to show the gateway unresponsive',
  );
  const now = await waitFor(
    async () => {
      const s = await cliStatus();
      const g = s.processes.find(
        (p: any) => p.role === 'gateway' && p.pid !== gw.pid && p.state === 'running',
      );
      return g ? s : undefined;
    },
    (TIMEOUT_S + 10) * 1000,
    'a new gateway',
  );
  const health = await waitFor(
    async () => {
      const r = await api(rig.port, 'GET', '/api/health');
      return r.status === 200 ? r : undefined;
    },
    10_000,
    'health from the new gateway',
  );
  assert.is(health.status, 200);
  assert.ok(Date.now() - t0 < (TIMEOUT_S + 15) * 1000 * SLACK, `healed in ${Date.now() - t0} ms`);
  assert.ok(gone(gw.pid), 'the hung gateway was killed');
  assert.match(now.processes.find((p: any) => p.role === 'gateway').last_exit, /unresponsive/);
  // The agents were not touched.
  const agentsNow = now.processes.filter((p: any) => p.role === 'agent').map((p: any) => p.pid);
  assert.equal(agentsNow, agentsBefore);

  const id = await newChat(rig.port);
  rig.fake.enqueue(textReply('still here'));
  const next = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hello' });
  assert.is(next.body.reply, 'still here', JSON.stringify(next.body));
});

test.run();
