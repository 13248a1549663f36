import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { startFakeTelegram, type FakeTelegram, type TgUser } from '../fixtures/fake-telegram.js';
import { api } from '../helpers/api.js';
import {
  browserUnavailable,
  finishOnboarding,
  launch,
  newPage,
  signIn,
} from '../helpers/browser.js';
import { runCli, waitFor } from '../helpers/server.js';
import { connectWs, messagesOf, startRig, status, type TurnRig } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/**
 * Where no sandbox can start (here: SVC_SANDBOX_BWRAP names a program that is not there), svc
 * says so loudly: /api/health, /api/status, `svc status`, the Web UI's Status page, and the first
 * approval of each session, each with the fix. Commands still run, under the permission engine,
 * except in cron and channel turns (a real cron run, a real Telegram chat), which refuse them.
 */

let rig: TurnRig;
let root = '';
const missing = '/nonexistent/svc-test/bwrap';
const browserMissing = browserUnavailable();
const TOKEN = '123456789:AAHsvcFakeTokenForDegraded_abcdefXYZ';
const ALICE: TgUser = { id: 4243, first_name: 'Alice' };
let tg: FakeTelegram;

test.before(async () => {
  root = mkdtempSync('/var/tmp/svc-sandbox-degraded-');
  tg = await startFakeTelegram(TOKEN);
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    env: { SVC_SANDBOX_BWRAP: missing },
  });
});

test.after(async () => {
  await rig?.stop();
  await tg?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const UNAVAILABLE = new RegExp(
  `^sandbox unavailable: ${missing} is missing or not executable; fix: install bubblewrap \\(Debian/Ubuntu: sudo apt-get install bubblewrap`,
);

test('health, /api/status and `svc status` say the sandbox is unavailable, why, and the fix', async () => {
  const health = await api(rig.port, 'GET', '/api/health');
  assert.is(health.status, 200);
  assert.is(health.body.status, 'ok');
  assert.is(health.body.sandbox.state, 'unavailable');
  assert.match(health.body.sandbox.message, UNAVAILABLE);
  const st = await status(rig.port);
  assert.is(st.sandbox.state, 'unavailable');
  assert.match(st.sandbox.fix, /apt-get install bubblewrap/);
  const cli = await runCli(['status'], { SVC_HOME: rig.server.home });
  assert.is(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, new RegExp(UNAVAILABLE.source.slice(1), 'm'));
  // svc doctor runs the server's own probe (the same program, the flags commands run with): it
  // agrees, where a bwrap found on PATH would have passed.
  const doc = await runCli(['doctor', '--json'], {
    SVC_HOME: rig.server.home,
    SVC_SANDBOX_BWRAP: missing,
  });
  const check = (
    JSON.parse(doc.stdout) as {
      checks: { id: string; status: string; message: string; fix?: string }[];
    }
  ).checks.find((c) => c.id === 'sandbox');
  assert.is(check?.status, 'warn', doc.stdout);
  assert.match(check?.message ?? '', `${missing} is missing or not executable`);
  assert.match(check?.fix ?? '', /apt-get install bubblewrap/);
});

test('the first approval of a session carries the notice, the next one does not; commands still run', async () => {
  const work = join(root, 'work');
  mkdirSync(work);
  const id = (
    await api(rig.port, 'POST', '/api/sessions', {
      working_dir: work,
      permission_mode: 'interactive',
    })
  ).body.id as string;
  const ws = await connectWs(rig.port, [`session:${id}`]);
  try {
    const file = join(root, 'ran.txt');
    // curl asks (a network tool); the `touch` outside the working folder shows it ran unsandboxed.
    const command = `curl --version >/dev/null 2>&1; touch ${file}`;
    const call = (n: number) => ({
      parts: [
        { toolCall: { id: `deg${n}`, name: 'terminal', arguments: [JSON.stringify({ command })] } },
      ],
      stop: 'tool_use' as const,
    });
    rig.fake.enqueue(call(1), call(2), textReply('done'));
    const started = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
      message: 'go',
      attachments: [],
    });
    assert.is(started.status, 202);
    const first = await ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === 'deg1',
      'the first approval',
      15_000,
    );
    assert.match(first.data.sandbox_notice, UNAVAILABLE);
    const pending = await api(rig.port, 'GET', `/api/sessions/${id}/approvals`);
    assert.match(pending.body.items[0].sandbox_notice, UNAVAILABLE);
    await api(
      rig.port,
      'POST',
      `/api/sessions/${id}/approvals/${first.data.approval_id}`,
      {
        decision: 'allow_once',
      },
      { key: rig.server.key() },
    );
    const second = await ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === 'deg2',
      'the second approval',
      15_000,
    );
    assert.is(second.data.sandbox_notice, undefined, 'said once per session');
    await api(
      rig.port,
      'POST',
      `/api/sessions/${id}/approvals/${second.data.approval_id}`,
      {
        decision: 'allow_once',
      },
      { key: rig.server.key() },
    );
    const end = await ws.waitEvent(
      (e) => e.type === 'turn.completed' || e.type === 'turn.failed',
      'the end of the turn',
      15_000,
    );
    assert.is(end.type, 'turn.completed');
    assert.ok(existsSync(file), 'without a sandbox the command ran as before');
  } finally {
    ws.close();
  }
});

/** A model step that runs `touch file` in the terminal, then a closing text. */
function touchThenSay(id: string, file: string, said: string): FakeReply[] {
  const args = JSON.stringify({ command: `touch ${file}` });
  rig.fake.reset(); // what an earlier failed test left queued is not this turn's
  return [
    { parts: [{ toolCall: { id, name: 'terminal', arguments: [args] } }], stop: 'tool_use' },
    textReply(said),
  ];
}

/** The terminal result the model got for call `id` in a session, from its stored messages. */
async function toolResult(sessionId: string, id: string): Promise<any> {
  const msgs = await messagesOf(rig.port, sessionId);
  const found = msgs.find((m) => m.role === 'tool' && m.content.tool_call_id === id);
  assert.ok(found, `the result of ${id} is stored: ${JSON.stringify(msgs)}`);
  return found.content;
}

const REFUSED = (origin: string) =>
  new RegExp(
    `^Refused: sandbox unavailable: ${missing} is missing or not executable; fix: .*\\. ${origin} turns run commands only inside the sandbox\\.$`,
  );

test('without a sandbox an unknown command asks, and what the check cannot see through asks even in auto (issue 38)', async () => {
  const work = join(root, 'work-auto');
  mkdirSync(work);
  const ask = async (mode: 'interactive' | 'auto', command: string, callId: string) => {
    const id = (
      await api(rig.port, 'POST', '/api/sessions', { working_dir: work, permission_mode: mode })
    ).body.id as string;
    const ws = await connectWs(rig.port, [`session:${id}`]);
    try {
      rig.fake.enqueue(
        {
          parts: [
            {
              toolCall: { id: callId, name: 'terminal', arguments: [JSON.stringify({ command })] },
            },
          ],
          stop: 'tool_use',
        },
        textReply('done'),
      );
      const started = await api(rig.port, 'POST', `/api/chat/${id}/turn?wait=false`, {
        message: 'go',
        attachments: [],
      });
      assert.is(started.status, 202);
      const first = await ws.waitEvent(
        (e) =>
          (e.type === 'approval.requested' && e.data.call_id === callId) ||
          e.type === 'turn.completed' ||
          e.type === 'turn.failed',
        `an approval or the end of the turn for ${command}`,
        15_000,
      );
      if (first.type === 'approval.requested') {
        const answered = await api(
          rig.port,
          'POST',
          `/api/sessions/${id}/approvals/${first.data.approval_id}`,
          { decision: 'deny' },
          { key: rig.server.key() },
        );
        assert.is(answered.status, 200, JSON.stringify(answered.body));
        await ws.waitEvent((e) => e.type === 'turn.completed', 'the end of the turn', 15_000);
        return first.data.reason as string;
      }
      return null;
    } finally {
      ws.close();
    }
  };
  // An unknown program: an ordinary ask in interactive (with a sandbox it would just run).
  const unknown = await ask('interactive', 'frobnicate --all', 'u1');
  assert.match(unknown ?? 'ran unasked', /not a command svc knows/);
  // The same in auto runs: auto lets ordinary asks through.
  assert.is(await ask('auto', 'frobnicate --all', 'u2'), null);
  // A shell fed text the check cannot see: in auto it still asks, because no sandbox bounds it.
  const blind = await ask('auto', 'cat notes.txt | bash', 'u3');
  assert.match(blind ?? 'ran unasked in auto', /cannot see through.*without a sandbox/s);
  // The known build and read commands run unasked.
  assert.is(await ask('interactive', 'ls -la && git status --short || true', 'u4'), null);
});

test('a real cron run refuses to run a command without the sandbox, and its session says why', async () => {
  const work = join(root, 'cron-work');
  mkdirSync(work);
  const file = join(root, 'cron-ran.txt');
  rig.fake.enqueue(...touchThenSay('cron1', file, 'could not run it'));
  const task = await api(rig.port, 'POST', '/api/tasks', {
    kind: 'cron',
    name: 'Nightly touch',
    schedule: '0 0 1 1 *',
    prompt: 'touch the file',
    enabled: false,
    working_dir: work,
  });
  assert.is(task.status, 201, JSON.stringify(task.body));
  const started = await api(rig.port, 'POST', `/api/tasks/${task.body.id}/run`);
  assert.is(started.status, 202, JSON.stringify(started.body));
  const run = await waitFor(
    async () =>
      ((await api(rig.port, 'GET', `/api/tasks/${task.body.id}/runs`)).body.items as any[]).find(
        (r) => r.status !== 'running',
      ),
    20_000,
    'the cron run to end',
  );
  assert.is(run.status, 'completed', JSON.stringify(run));
  const result = await toolResult(run.session_id, 'cron1');
  assert.match(String(result.output), REFUSED('cron'));
  assert.is(result.is_error, true);
  assert.not.ok(existsSync(file), 'the command did not run');
});

test('a real Telegram turn refuses to run a command without the sandbox, and says why', async () => {
  const saved = await api(rig.port, 'POST', '/api/channels/telegram', {
    bot_token: TOKEN,
    base_url: tg.url,
    allowed_users: String(ALICE.id),
  });
  assert.is(saved.status, 200, JSON.stringify(saved.body));
  await waitFor(
    async () => (await api(rig.port, 'GET', '/api/channels/telegram')).body.state === 'running',
    20_000,
    'telegram running',
  );
  const file = join(root, 'channel-ran.txt');
  rig.fake.enqueue(...touchThenSay('tg1', file, 'could not run it'));
  tg.userSays(ALICE, 'touch the file');
  await waitFor(
    () => tg.chat(ALICE.id).find((m) => m.text === 'could not run it'),
    20_000,
    'the bot to answer',
  );
  const session = ((await api(rig.port, 'GET', '/api/sessions')).body.items as any[]).find(
    (x) => x.channel === 'telegram',
  );
  assert.ok(session, 'the chat has a session');
  const result = await toolResult(session.id, 'tg1');
  assert.match(String(result.output), REFUSED('channel'));
  assert.is(result.is_error, true);
  assert.not.ok(existsSync(file), 'the command did not run');
});

if (browserMissing) {
  skipFile(browserMissing);
} else {
  test('the Web UI: the Status page and the first approval dialog say the sandbox is unavailable, with the fix', async () => {
    await finishOnboarding(rig.port, 'oa');
    const browser = await launch();
    const p = await newPage(browser);
    try {
      await signIn(p.page, rig.server.base, rig.server.key());
      await p.page.goto(`${rig.server.base}/#/status`);
      const msg = p.page.getByTestId('sandbox-message');
      await msg.waitFor();
      assert.match(await msg.innerText(), UNAVAILABLE);
      assert.is(await p.page.getByTestId('sandbox-state').innerText(), 'unavailable');

      const id = (
        await api(rig.port, 'POST', '/api/sessions', {
          title: 'Degraded',
          permission_mode: 'interactive',
        })
      ).body.id as string;
      await p.page.goto(`${rig.server.base}/#/chat/${id}`);
      const input = p.page.getByTestId('composer-input');
      await input.waitFor();
      rig.fake.enqueue(
        {
          parts: [
            {
              toolCall: {
                name: 'write_file',
                arguments: [JSON.stringify({ path: join(root, 'ui.txt'), content: 'x' })],
              },
            },
          ],
          stop: 'tool_use',
        },
        textReply('ok'),
      );
      await input.fill('write it');
      await input.press('Enter');
      const notice = p.page.getByTestId('approval-dialog').getByTestId('sandbox-notice');
      await notice.waitFor();
      assert.match(await notice.innerText(), UNAVAILABLE);
      await p.page.getByTestId('approval-dialog').getByRole('button', { name: 'Deny' }).click();
      await p.page.getByTestId('assistant-message').filter({ hasText: 'ok' }).waitFor();
      assert.equal(p.errors, []);
    } finally {
      await p.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
    }
  });
}

test.run();
