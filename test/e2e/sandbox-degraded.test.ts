import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { browserUnavailable, finishOnboarding, launch, newPage } from '../helpers/browser.js';
import { runCli } from '../helpers/server.js';
import { connectWs, startRig, status, type TurnRig } from '../helpers/turns.js';

/**
 * Where no sandbox can start (here: SVC_SANDBOX_BWRAP names a program that is not there), svc
 * says so loudly: /api/health, /api/status, `svc status`, the Web UI's Status page, and the first
 * approval of each session, each with the fix. Commands still run, under the permission engine.
 */

let rig: TurnRig;
let root = '';
const missing = '/nonexistent/svc-test/bwrap';
const browserMissing = browserUnavailable();

test.before(async () => {
  root = mkdtempSync('/var/tmp/svc-sandbox-degraded-');
  rig = await startRig({
    models: { oa: { protocol: 'openai' } },
    env: { SVC_SANDBOX_BWRAP: missing },
  });
});

test.after(async () => {
  await rig?.stop();
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
    await api(rig.port, 'POST', `/api/sessions/${id}/approvals/${first.data.approval_id}`, {
      decision: 'allow_once',
    });
    const second = await ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === 'deg2',
      'the second approval',
      15_000,
    );
    assert.is(second.data.sandbox_notice, undefined, 'said once per session');
    await api(rig.port, 'POST', `/api/sessions/${id}/approvals/${second.data.approval_id}`, {
      decision: 'allow_once',
    });
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

if (browserMissing) {
  console.log(`skipped: ${browserMissing}`);
  test('the Web UI check is skipped, with a reason', () => assert.ok(browserMissing.length > 0));
} else {
  test('the Web UI: the Status page and the first approval dialog say the sandbox is unavailable, with the fix', async () => {
    await finishOnboarding(rig.port, 'oa');
    const browser = await launch();
    const p = await newPage(browser);
    try {
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
