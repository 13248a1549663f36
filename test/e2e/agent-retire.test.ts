import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { runCli, waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Idle agent workers retire (issue 11): after `agent.idle_retire_seconds` with nothing to do the
 * worker exits and svc is back to supervisor + gateway; the next turn starts a worker again. A
 * worker with a background command still running is kept, and the command with it.
 */

async function roles(rig: TurnRig): Promise<Array<{ role: string; pid: number }>> {
  const r = await runCli(['status', '--json'], { SVC_HOME: rig.server.home });
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).processes;
}
const agentsOf = async (rig: TurnRig) => (await roles(rig)).filter((p) => p.role === 'agent');

/** Live processes whose command line is exactly `argv`. */
function running(argv: string[]): boolean {
  const want = `${argv.join('\0')}\0`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === want) return true;
    } catch {
      // Gone while we looked.
    }
  }
  return false;
}

test('an idle agent worker retires; svc is back to two processes; the next turn starts one again', async () => {
  const rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: 'agent:\n  idle_retire_seconds: 1\n',
  });
  try {
    rig.fake.enqueue(textReply('first'));
    const id = (await api(rig.port, 'POST', '/api/sessions', {})).body.id as string;
    assert.is(
      (await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'hi' })).body.reply,
      'first',
    );
    await waitFor(
      () => /agent worker retired after being idle/.test(rig.server.output()),
      30_000,
      'the idle agent worker to retire',
    );
    const retired = Number(
      /agent worker retired after being idle.*?pid[=":]+\s*(\d+)/.exec(rig.server.output())?.[1],
    );
    assert.ok(retired > 0, 'the log names the worker that retired');
    await waitFor(() => !existsSync(`/proc/${retired}`), 10_000, 'the retired worker to be gone');
    assert.equal(
      (await roles(rig)).map((p) => p.role).sort(),
      ['gateway', 'supervisor'],
      'idle svc is supervisor and gateway',
    );
    // A retirement is not a crash: the restart count stays 0 and the next turn just works.
    rig.fake.enqueue(textReply('second'));
    assert.is(
      (await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'again' })).body.reply,
      'second',
    );
    // That turn's worker was a new one, and it retires in turn.
    const pids = () =>
      [
        ...rig.server
          .output()
          .matchAll(/agent worker retired after being idle.*?pid[=":]+\s*(\d+)/g),
      ].map((m) => Number(m[1]));
    await waitFor(() => pids().length >= 2, 30_000, 'the second worker to retire too');
    assert.is.not(pids()[1], retired, 'the second turn ran in a new worker');
    assert.not.match(
      rig.server.output(),
      /agent process exited unexpectedly/,
      'a retirement is not a crash',
    );
  } finally {
    await rig.stop();
  }
});

test('a worker with a background command running is kept, and so is the command', async () => {
  const work = mkdtempSync('/var/tmp/svc-agent-retire-');
  const rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: 'agent:\n  idle_retire_seconds: 1\n',
  });
  const bg = ['sleep', `60.${randomInt(1e8)}3`];
  try {
    const id = (await api(rig.port, 'POST', '/api/sessions', { working_dir: work })).body
      .id as string;
    rig.fake.enqueue(
      {
        parts: [
          {
            toolCall: {
              id: 'b1',
              name: 'terminal',
              arguments: [JSON.stringify({ command: bg.join(' '), background: true })],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('started'),
    );
    const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, {
      message: 'sleep in the background',
    });
    assert.is(r.body.reply, 'started', JSON.stringify(r.body));
    await waitFor(() => running(bg), 20_000, 'the background sleep to run');
    const pid = (await agentsOf(rig))[0]!.pid;
    await waitFor(
      () => /agent worker kept although idle.*background command/.test(rig.server.output()),
      30_000,
      'the supervisor to try to retire the worker and be told no',
    );
    assert.equal(
      (await agentsOf(rig)).map((a) => a.pid),
      [pid],
      'the same worker is still there',
    );
    assert.ok(running(bg), 'the background command still runs');
  } finally {
    await rig.stop();
    rmSync(work, { recursive: true, force: true });
  }
});

test.run();
