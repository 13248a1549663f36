import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Full outputs of terminal calls ($SVC_HOME/tool-output): they go to the trash with their
 * session, come back with a restore, are gone once the trash is emptied, and all of them stay
 * under agent.tool_output_max_bytes, the oldest removed first.
 */

const MiB = 1024 * 1024;
let rig: TurnRig;
let work = '';

test.before(async () => {
  work = mkdtempSync(join(tmpdir(), 'svc-faults-toolout-'));
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    config: `sandbox:\n  enabled: false\nagent:\n  tool_output_max_bytes: ${MiB}\n`,
  });
});
test.after(async () => {
  await rig?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Every file under $SVC_HOME whose name is `<callId>.log`. */
function find(callId: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === `${callId}.log`) out.push(p);
    }
  };
  walk(rig.server.home);
  return out;
}

async function session(): Promise<string> {
  const r = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: 'auto',
  });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

/** A turn whose one terminal call prints `bytes` characters (more than a tool result holds, so it spills to a file). */
async function bigOutput(id: string, callId: string, bytes: number): Promise<void> {
  rig.fake.enqueue(
    {
      parts: [
        {
          toolCall: {
            id: callId,
            name: 'terminal',
            arguments: [JSON.stringify({ command: `head -c ${bytes} /dev/zero | tr '\\0' a` })],
          },
        },
      ],
      stop: 'tool_use',
    },
    textReply('printed'),
  );
  const r = await api(rig.port, 'POST', `/api/chat/${id}/turn`, { message: 'print' });
  assert.is(r.body.reply, 'printed', JSON.stringify(r.body).slice(0, 500));
}

test("a session's tool output files go to the trash with it, come back on restore, and are gone when the trash is emptied", async () => {
  const id = await session();
  await bigOutput(id, 'out1', 100_000);
  const [file] = find('out1');
  assert.ok(file, 'the full output was kept in a file');
  assert.ok(file!.startsWith(join(rig.server.home, 'tool-output', id)), file);

  const del = await api(rig.port, 'DELETE', `/api/sessions/${id}`);
  assert.is(del.status, 200);
  assert.not.ok(existsSync(file!), 'not left behind in tool-output');
  assert.is(find('out1').length, 1, 'kept in the trash');

  assert.is((await api(rig.port, 'POST', `/api/trash/${del.body.trash_id}/restore`)).status, 200);
  assert.ok(existsSync(file!), 'back where the transcript says');

  const again = await api(rig.port, 'DELETE', `/api/sessions/${id}`);
  assert.is(again.status, 200);
  assert.is((await api(rig.port, 'POST', '/api/trash/empty', {})).status, 200);
  assert.equal(find('out1'), [], 'gone for good');
});

test('all tool outputs together stay under agent.tool_output_max_bytes: the oldest go first', async () => {
  const id = await session();
  await bigOutput(id, 'cap1', 400_000);
  await bigOutput(id, 'cap2', 400_000);
  assert.is(find('cap1').length, 1);
  assert.is(find('cap2').length, 1);
  await bigOutput(id, 'cap3', 400_000);
  assert.equal(find('cap1'), [], 'the oldest was removed');
  assert.is(find('cap2').length, 1);
  assert.is(find('cap3').length, 1);
});

test.run();
