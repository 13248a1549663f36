import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { runCli, waitFor } from '../helpers/server.js';
import { connectWs, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * kill -9 of the agent worker (as the out-of-memory killer would) while `terminal` runs a command
 * and another runs in the background: neither command outlives the worker, with the sandbox on
 * (bubblewrap), off in config, and unavailable (no bwrap), and `svc status` counts the restart.
 */

/** Live (not zombie) processes whose command line is exactly `argv`. */
function processesRunning(argv: string[]): number[] {
  const want = `${argv.join('\0')}\0`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') !== want) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state !== 'Z' && state !== 'X') found.push(Number(name));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function cliStatus(rig: TurnRig): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const cases: Array<{ name: string; config?: string; env?: NodeJS.ProcessEnv; sandbox: string }> = [
  { name: 'sandbox on (bubblewrap)', sandbox: 'on' },
  { name: 'sandbox off in config', config: 'sandbox:\n  enabled: false\n', sandbox: 'off' },
  {
    name: 'sandbox unavailable (no bwrap)',
    env: { SVC_SANDBOX_BWRAP: '/nonexistent/svc-test/bwrap' },
    sandbox: 'unavailable',
  },
];

for (const c of cases) {
  test(`${c.name}: kill -9 of the agent stops its foreground and background commands; svc status counts the restart`, async () => {
    // Outside /tmp: the sandbox gives commands a private /tmp.
    const work = mkdtempSync('/var/tmp/svc-agent-kill-');
    const rig = await startRig({
      models: { oa: { protocol: 'openai' } },
      ...(c.config ? { config: c.config } : {}),
      ...(c.env ? { env: c.env } : {}),
    });
    try {
      assert.is((await api(rig.port, 'GET', '/api/health')).body.sandbox.state, c.sandbox);
      // Durations no other process on the machine uses, so the scan finds only these two.
      const bg = ['sleep', `60.${randomInt(1e8)}1`];
      const fg = ['sleep', `60.${randomInt(1e8)}2`];
      const session = (await api(rig.port, 'POST', '/api/sessions', { working_dir: work })).body
        .id as string;
      const ws = await connectWs(rig.port, [`session:${session}`]);
      try {
        rig.fake.enqueue(
          {
            parts: [
              {
                toolCall: {
                  id: 'k1',
                  name: 'terminal',
                  arguments: [JSON.stringify({ command: bg.join(' '), background: true })],
                },
              },
            ],
            stop: 'tool_use',
          },
          {
            parts: [
              {
                toolCall: {
                  id: 'k2',
                  name: 'terminal',
                  arguments: [JSON.stringify({ command: fg.join(' ') })],
                },
              },
            ],
            stop: 'tool_use',
          },
        );
        const started = await api(rig.port, 'POST', `/api/chat/${session}/turn?wait=false`, {
          message: 'sleep on it',
        });
        assert.is(started.status, 202, JSON.stringify(started.body));
        const turnId = started.body.turn_id as string;
        const started1 = await ws.waitEvent(
          (e) => e.type === 'turn.tool_result' && e.data.call_id === 'k1',
          'the background start',
          20_000,
        );
        assert.match(JSON.stringify(started1.data), /Started in the background/);
        await waitFor(
          () => processesRunning(bg).length === 1 && processesRunning(fg).length === 1,
          20_000,
          'both sleeps to run',
        );

        const agents = (await cliStatus(rig)).processes.filter((p: any) => p.role === 'agent');
        assert.is(agents.length, 1, JSON.stringify(agents));
        assert.is(agents[0].restarts, 0);
        process.kill(agents[0].pid, 'SIGKILL');

        const failed = await ws.waitEvent(
          (e) => e.data?.turn_id === turnId && e.type === 'turn.failed',
          'turn.failed',
          10_000,
        );
        assert.is(failed.data.reason, 'worker_crashed');
        await waitFor(
          () => processesRunning(bg).length === 0 && processesRunning(fg).length === 0,
          10_000,
          'no sleep left running',
        );

        // The next turn starts a new worker, and svc status says this is its first restart.
        rig.fake.enqueue(textReply('back'));
        const next = await api(rig.port, 'POST', `/api/chat/${session}/turn`, { message: 'again' });
        assert.is(next.body.reply, 'back', JSON.stringify(next.body));
        const after = (await cliStatus(rig)).processes.filter((p: any) => p.role === 'agent');
        assert.is(after.length, 1);
        assert.is.not(after[0].pid, agents[0].pid);
        assert.is(after[0].restarts, 1);
        assert.match(after[0].last_exit, /^killed by SIGKILL/);
      } finally {
        ws.close();
      }
    } finally {
      await rig.stop();
      rmSync(work, { recursive: true, force: true });
    }
  });
}

test.run();
