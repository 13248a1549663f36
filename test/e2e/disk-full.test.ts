import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, ofTurn, startRig, status, type TurnRig } from '../helpers/turns.js';
import { testUnless } from '../helpers/skip.js';
import { mountTmpfs, tmpfsUnavailable, unmount } from '../helpers/tmpfs.js';

/**
 * $SVC_HOME on a small tmpfs that fills mid-turn (a command the turn runs fills it): the turn
 * ends for its clients with the reason disk_full, the agent worker lives, a new chat gets 507
 * with a message saying so, and once space is freed the same server works again.
 */

let mnt = '';
let rig: TurnRig | undefined;

test.after(async () => {
  await rig?.stop();
  if (mnt) unmount(mnt);
});

const filling =
  'the disk fills mid-turn: the turn ends as disk_full for its clients, the worker lives, new chats get 507, freeing space recovers';
testUnless(tmpfsUnavailable(), filling, async () => {
  mnt = mountTmpfs('size=48m,mode=0700');
  const home = join(mnt, 'home');
  const work = join(mnt, 'work');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(work, { mode: 0o700 });
  rig = await startRig({
    home,
    models: { oa: { protocol: 'openai' } },
    config: 'sandbox:\n  enabled: false\n',
  });
  const s = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: 'auto',
  });
  assert.is(s.status, 201, JSON.stringify(s.body));
  const id = s.body.id as string;
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    rig.fake.enqueue(
      {
        parts: [
          { text: 'Filling the disk. ' },
          {
            toolCall: {
              id: 'f1',
              name: 'terminal',
              arguments: [
                JSON.stringify({ command: 'head -c 100000000 /dev/zero > fill; echo done' }),
              ],
            },
          },
        ],
        stop: 'tool_use',
      },
      textReply('never said'),
    );
    // The waiting call is what an HTTP client holds open: it must be answered.
    const res = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'fill it' });
    assert.is(res.body.status, 'failed', JSON.stringify(res.body));
    assert.is(res.body.error.reason, 'disk_full');
    assert.match(res.body.error.message, /^The disk is full: svc could not save to /);
    const turnId = res.body.turn_id as string;
    const ended = await ws.waitEvent(
      (e) => e.data?.turn_id === turnId && e.type === 'turn.failed',
      'turn.failed',
      10_000,
    );
    assert.is(ended.data.reason, 'disk_full');
    assert.is(
      ofTurn(ws.events, turnId).filter((e) =>
        ['turn.completed', 'turn.failed', 'turn.interrupted'].includes(e.type),
      ).length,
      1,
    );

    // The worker lived through it.
    const agentsAfter = (await status(rig.port)).processes.filter((p: any) => p.role === 'agent');
    assert.ok(
      agentsAfter.length > 0 &&
        agentsAfter.every(
          (p: any) => p.restarts === 0 && p.last_exit === null && p.state === 'running',
        ),
      JSON.stringify(agentsAfter),
    );

    // A new chat on the full disk: a clear 507, not a generic 500.
    const full = await api(rig.port, 'POST', '/api/chat', {});
    assert.is(full.status, 507, JSON.stringify(full.body));
    assert.is(full.body.error.code, 'insufficient_storage');
    assert.match(full.body.error.message, /The disk is full/);

    // Space freed: the same server works again, no restart.
    rmSync(join(work, 'fill'));
    const again = await waitFor(
      async () => {
        const r = await api(rig!.port, 'POST', '/api/chat', {});
        return r.status === 201 ? r : undefined;
      },
      10_000,
      'a new chat after freeing space',
    );
    rig.fake.reset();
    rig.fake.enqueue(textReply('room again'));
    const next = await api(rig.port, 'POST', `/api/chat/${again.body.session_id}/turn`, {
      message: 'hello',
    });
    assert.is(next.body.reply, 'room again', JSON.stringify(next.body));
  } finally {
    ws.close();
  }
});

test.run();
