import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { api as rawApi, type ApiResult } from '../helpers/api.js';
import { browserUnavailable } from '../helpers/browser.js';
import { startDebugChromium, startTestSite, type DebugChromium } from '../helpers/cdp-chromium.js';
import { waitFor } from '../helpers/server.js';
import { connectWs, startRig, type TurnRig, type WsClient } from '../helpers/turns.js';
import { skipFile } from '../helpers/skip.js';

/**
 * The agent's browser tools against Debian's Chromium (started by the test with
 * --remote-debugging-port, as a user starts theirs): the fake model drives navigate → snapshot →
 * type → click → wait → screenshot on a local test page, using the refs the snapshot answered;
 * the screenshot is an artifact of the chat. Every call passes the permission engine (a private
 * address asks, rules by host allow or deny, file: URLs ask); an interrupt stops a waiting
 * action; a recording is replayed with a param, and a failing step says where and what the page showed.
 */

const browserMissing = browserUnavailable();

if (browserMissing) {
  skipFile(browserMissing);
} else {
  let rig: TurnRig;
  let chrome: DebugChromium;
  let site: Awaited<ReturnType<typeof startTestSite>>;
  let n = 0;

  const api = (
    method: string,
    path: string,
    body?: unknown,
    opts: { key?: string } = {},
  ): Promise<ApiResult> => rawApi(rig.port, method, path, body, opts);
  const setRules = (yaml: string) => writeFileSync(join(rig.server.home, 'permissions.yml'), yaml);
  const ALLOW_LOCAL =
    'browser:\n  - allow: { host: "127.0.0.1" }\nbrowser_replay:\n  - allow: { host: "127.0.0.1" }\n';

  interface Chat {
    id: string;
    ws: WsClient;
  }
  async function newChat(mode = 'interactive'): Promise<Chat> {
    const res = await api('POST', '/api/sessions', { permission_mode: mode });
    assert.is(res.status, 201, JSON.stringify(res.body));
    return { id: res.body.id, ws: await connectWs(rig.port, [`session:${res.body.id}`]) };
  }
  /** One turn whose model calls `name` once then says done; answers the call id and the turn id. */
  async function startCall(
    chat: Chat,
    name: string,
    args: Record<string, unknown>,
    then = true,
  ): Promise<{ id: string; turnId: string }> {
    const id = `bcall${++n}`;
    const step: FakeReply = {
      parts: [{ toolCall: { id, name, arguments: [JSON.stringify(args)] } }],
      stop: 'tool_use',
    };
    rig.fake.enqueue(step, ...(then ? [textReply('done')] : []));
    const res = await api('POST', `/api/chat/${chat.id}/turn?wait=false`, {
      message: 'go',
      attachments: [],
    });
    assert.is(res.status, 202, JSON.stringify(res.body));
    return { id, turnId: res.body.turn_id as string };
  }
  const END = ['turn.completed', 'turn.failed', 'turn.interrupted'];
  const endOf = (chat: Chat, turnId: string) =>
    chat.ws.waitEvent(
      (e) => e.data?.turn_id === turnId && END.includes(e.type),
      `the end of ${turnId}`,
      60_000,
    );
  const resultOf = (chat: Chat, callId: string) =>
    chat.ws.waitEvent(
      (e) => e.type === 'turn.tool_result' && e.data.call_id === callId,
      `the result of ${callId}`,
      60_000,
    );
  /** Calls a tool with no approval expected; answers its result {output, is_error}. */
  async function call(
    chat: Chat,
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ output: string; is_error: boolean }> {
    const { id, turnId } = await startCall(chat, name, args);
    const end = await endOf(chat, turnId);
    assert.not.ok(
      chat.ws.events.some((e) => e.type === 'approval.requested' && e.data.call_id === id),
      `${name} asked where it must not`,
    );
    assert.is(end.type, 'turn.completed', JSON.stringify(end.data));
    return (await resultOf(chat, id)).data;
  }

  test.before(async () => {
    site = await startTestSite();
    chrome = await startDebugChromium('about:blank');
    rig = await startRig({
      models: { oa: { protocol: 'openai' } },
      config: `browser:\n  port: ${chrome.port}\n`,
    });
  });

  test.after(async () => {
    await rig?.stop();
    await chrome?.stop();
    await site?.close();
  });

  test('the tools are offered once a browser is configured', async () => {
    const tools = await api('GET', '/api/tools');
    const names = tools.body.items.map((t: { name: string }) => t.name);
    assert.ok(names.includes('browser') && names.includes('browser_replay'), names.join(', '));
  });

  test('navigating to a private address asks; the user declines and the page is never opened', async () => {
    setRules('');
    const chat = await newChat('interactive');
    try {
      const { id, turnId } = await startCall(chat, 'browser', {
        action: 'navigate',
        url: `${site.base}/?asked`,
      });
      const ask = await chat.ws.waitEvent(
        (e) => e.type === 'approval.requested' && e.data.call_id === id,
        'the approval',
        60_000,
      );
      assert.is(ask.data.tool, 'browser');
      assert.match(ask.data.reason, /private network/);
      await api(
        'POST',
        `/api/sessions/${chat.id}/approvals/${ask.data.approval_id}`,
        {
          decision: 'deny',
        },
        { key: rig.server.key() },
      );
      assert.is((await endOf(chat, turnId)).type, 'turn.completed');
      const r = (await resultOf(chat, id)).data;
      assert.is(r.is_error, true);
      const tabs = (await api('GET', '/api/browser/status')).body.tabs;
      assert.not.ok(
        tabs.some((t: { url: string }) => t.url.includes('?asked')),
        JSON.stringify(tabs),
      );
    } finally {
      chat.ws.close();
    }
  });

  test('a rule by host denies; a file: URL asks', async () => {
    setRules('browser:\n  - deny: { host: "127.0.0.1", reason: "not that site" }\n');
    const chat = await newChat('interactive');
    try {
      const denied = await call(chat, 'browser', { action: 'navigate', url: `${site.base}/` });
      assert.is(denied.is_error, true);
      assert.match(denied.output, /not that site/);
      const { id, turnId } = await startCall(chat, 'browser', {
        action: 'navigate',
        url: 'file:///etc/hostname',
      });
      const ask = await chat.ws.waitEvent(
        (e) => e.type === 'approval.requested' && e.data.call_id === id,
        'the file: approval',
        60_000,
      );
      assert.match(ask.data.reason, /file: URL/);
      await api(
        'POST',
        `/api/sessions/${chat.id}/approvals/${ask.data.approval_id}`,
        {
          decision: 'deny',
        },
        { key: rig.server.key() },
      );
      await endOf(chat, turnId);
    } finally {
      chat.ws.close();
    }
  });

  test('the model drives navigate → snapshot → type → click → wait → screenshot; the screenshot is an artifact', async () => {
    setRules(ALLOW_LOCAL);
    const chat = await newChat('interactive');
    try {
      const nav = await call(chat, 'browser', { action: 'navigate', url: `${site.base}/` });
      assert.is(nav.is_error, false, nav.output);
      assert.match(nav.output, new RegExp(`Navigated to ${site.base}/ \\(HTTP 200\\)`));
      assert.match(nav.output, /Page: Greeter/);

      const snap = await call(chat, 'browser', { action: 'snapshot' });
      assert.match(snap.output, /heading "Greeter"/);
      const field = /textbox "Your name" \[ref=((?:f\d+)?e\d+)\]/.exec(snap.output)?.[1];
      const button = /button "Send" \[ref=((?:f\d+)?e\d+)\]/.exec(snap.output)?.[1];
      const select = /combobox "Size" \[ref=((?:f\d+)?e\d+)\]/.exec(snap.output)?.[1];
      assert.ok(field && button && select, `refs in the snapshot:\n${snap.output}`);

      assert.match(
        (await call(chat, 'browser', { action: 'type', target: field, text: 'Ada' })).output,
        /Typed 3 characters/,
      );
      assert.match(
        (await call(chat, 'browser', { action: 'select', target: select, option: 'Large' })).output,
        /Selected l/,
      );
      assert.match(
        (await call(chat, 'browser', { action: 'click', target: button })).output,
        /Clicked/,
      );
      const waited = await call(chat, 'browser', { action: 'wait', text: 'Hello, Ada (l)!' });
      assert.is(waited.is_error, false, waited.output);

      const shot = await call(chat, 'browser', { action: 'screenshot' });
      assert.is(shot.is_error, false, shot.output);
      const path = /Saved as (\S+\.png)\./.exec(shot.output)?.[1];
      assert.ok(path && existsSync(path), shot.output);
      assert.equal([...readFileSync(path!).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
      const artifacts = await api('GET', `/api/sessions/${chat.id}/artifacts`);
      assert.ok(JSON.stringify(artifacts.body).includes(path!), JSON.stringify(artifacts.body));

      const tabs = await call(chat, 'browser', { action: 'tabs' });
      assert.match(tabs.output, /\* \d+: Greeter/);
      const second = await call(chat, 'browser', { action: 'click', target: 'text=Second page' });
      assert.match(second.output, /Page: Second/);
      const back = await call(chat, 'browser', { action: 'back' });
      assert.match(back.output, /Page: Greeter/);
    } finally {
      chat.ws.close();
    }
  });

  test('an interrupt stops a waiting action at once; the browser takes the next action', async () => {
    setRules(ALLOW_LOCAL);
    const chat = await newChat('interactive');
    try {
      // No reply after the call: an interrupted turn never asks the model again.
      const { id, turnId } = await startCall(
        chat,
        'browser',
        { action: 'wait', text: 'a text that never comes', timeout_seconds: 120 },
        false,
      );
      await chat.ws.waitEvent(
        (e) => e.type === 'turn.tool_call' && e.data.call_id === id,
        'the call to start',
        60_000,
      );
      const acting = async () =>
        (await api('GET', '/api/status')).body.processes.find(
          (p: { role: string }) => p.role === 'browser',
        )?.inflight_turns as number | undefined;
      await waitFor(async () => (await acting()) === 1, 60_000, 'the browser worker to be waiting');
      const started = Date.now();
      const res = await api('POST', `/api/chat/${chat.id}/interrupt`);
      assert.is(res.status, 200, JSON.stringify(res.body));
      assert.is((await endOf(chat, turnId)).type, 'turn.interrupted');
      await waitFor(
        async () => (await acting()) === 0,
        30_000,
        'the waiting action to stop in the browser worker',
      );
      // The action's own wait is 120 s: only the interrupt ends it sooner (however loaded the machine).
      assert.ok(Date.now() - started < 120_000, 'ended by the interrupt, not by the 120 s wait');
      const next = await call(chat, 'browser', { action: 'snapshot' });
      assert.is(next.is_error, false, next.output);
    } finally {
      chat.ws.close();
    }
  });

  test('browser_record keeps what the agent does (refs become role selectors) and saves it with a param; it replays', async () => {
    setRules(ALLOW_LOCAL);
    const chat = await newChat('interactive');
    try {
      assert.match((await call(chat, 'browser_record', { action: 'start' })).output, /Recording/);
      await call(chat, 'browser', { action: 'navigate', url: `${site.base}/` });
      const snap = await call(chat, 'browser', { action: 'snapshot' });
      const field = /textbox "Your name" \[ref=((?:f\d+)?e\d+)\]/.exec(snap.output)?.[1];
      const button = /button "Send" \[ref=((?:f\d+)?e\d+)\]/.exec(snap.output)?.[1];
      assert.ok(field && button, snap.output);
      await call(chat, 'browser', { action: 'type', target: field, text: 'Lin' });
      await call(chat, 'browser', { action: 'click', target: button });
      const saved = await call(chat, 'browser_record', {
        action: 'stop',
        name: 'recorded',
        description: 'Greets',
        params: [{ name: 'who', value: 'Lin' }],
      });
      assert.is(saved.is_error, false, saved.output);
      const rec = (await api('GET', '/api/browser/recordings/recorded')).body.recording;
      assert.equal(rec.steps, [
        { action: 'navigate', value: `${site.base}/` },
        { action: 'type', target: 'role=textbox[name="Your name"]', value: '{{who}}' },
        { action: 'click', target: 'role=button[name="Send"]' },
      ]);
      assert.equal(rec.params, [{ name: 'who', default: 'Lin' }]);
      const again = await call(chat, 'browser_replay', {
        name: 'recorded',
        params: { who: 'Max' },
      });
      assert.is(again.is_error, false, again.output);
      const seen = await call(chat, 'browser', { action: 'wait', text: 'Hello, Max (s)!' });
      assert.is(seen.is_error, false, seen.output);
    } finally {
      chat.ws.close();
    }
  });

  test('a recording replays with a param; a failing step stops with the step, its target and what the page showed', async () => {
    setRules(ALLOW_LOCAL);
    const yaml = `description: Greets someone
params:
  - name: site
  - name: who
    default: World
steps:
  - action: navigate
    value: "{{site}}/"
  - action: type
    target: "#name"
    value: "{{who}}"
  - action: click
    target: role=button[name="Send"]
  - action: wait
    value: Hello, {{who}} (s)!
`;
    assert.is((await api('PUT', '/api/browser/recordings/greet', { yaml })).status, 201);
    const chat = await newChat('interactive');
    try {
      const ok = await call(chat, 'browser_replay', {
        name: 'greet',
        params: { site: site.base, who: 'Grace' },
      });
      assert.is(ok.is_error, false, ok.output);
      assert.match(ok.output, /Replayed "greet": 4 steps/);
      assert.match(ok.output, /"Hello, Grace \(s\)!" is on the page/);

      const bad = yaml
        .replace('target: role=button[name="Send"]', 'target: "#no-such-button"')
        .replace(/  - action: wait\n.*\n/, '');
      assert.is((await api('PUT', '/api/browser/recordings/broken', { yaml: bad })).status, 201);
      const failed = await call(chat, 'browser_replay', {
        name: 'broken',
        params: { site: site.base },
      });
      assert.is(failed.is_error, true);
      assert.match(failed.output, /stopped at step 3 of 3 \(click #no-such-button\)/);
      assert.match(failed.output, /The page shows:[\s\S]*heading "Greeter"/);
      assert.match(failed.output, /Page: Greeter/);
    } finally {
      chat.ws.close();
    }
  });

  test('every page a replay opens is judged: a later step to a denied host refuses the whole replay before it starts', async () => {
    setRules(`${ALLOW_LOCAL}  - deny: { host: "denied.example", reason: "Not that site." }\n`);
    const yaml = `description: Two sites
params:
  - name: site
steps:
  - action: navigate
    value: "{{site}}/"
  - action: navigate
    value: https://denied.example/
`;
    assert.is((await api('PUT', '/api/browser/recordings/two-sites', { yaml })).status, 201);
    const chat = await newChat('auto');
    try {
      const r = await call(chat, 'browser_replay', {
        name: 'two-sites',
        params: { site: site.base },
      });
      assert.is(r.is_error, true, r.output);
      assert.match(r.output, /Not that site\./);
      assert.not.match(r.output, /Replayed/);
    } finally {
      chat.ws.close();
    }
  });
}

test.run();
