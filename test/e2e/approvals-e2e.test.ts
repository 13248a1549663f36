import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { runCli, SLACK, waitFor } from '../helpers/server.js';
import {
  connectWs,
  ofTurn,
  startRig,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * Approvals through the real server: the fake provider asks for tool calls the permission engine
 * asks about (a `curl`, a write outside the working folder, restart_server); the test answers over
 * HTTP and /ws like a client would, interrupts, switches the session mode, and reads the audit log.
 */

let rig: TurnRig;
let root = '';

test.before(async () => {
  root = mkdtempSync(join(tmpdir(), 'svc-approvals-e2e-'));
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});

test.after(async () => {
  await rig?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

// ---- helpers ----

interface Call {
  name: string;
  args: Record<string, unknown>;
}

interface Chat {
  id: string;
  work: string;
  ws: WsClient;
}

let sessions = 0;
/** Audit decisions each test expects, by session, in order; the last test compares the whole file. */
const expectedAudit = new Map<string, string[]>();

async function newChat(mode: 'interactive' | 'auto' | 'strict'): Promise<Chat> {
  const work = join(root, `work${++sessions}`);
  mkdirSync(work);
  const res = await api(rig.port, 'POST', '/api/sessions', {
    working_dir: work,
    permission_mode: mode,
  });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.permission_mode, mode);
  // The person's client: its socket presented the key, so it may answer approvals.
  const ws = await connectWs(rig.port, [`session:${res.body.id}`], undefined, rig.server.key());
  return { id: res.body.id, work, ws };
}

let nextCall = 0;

/** Queues one model step per entry (its tool calls), then a closing text unless `close` is false; answers the call ids. */
function enqueue(steps: Call[][], close = true): string[] {
  const ids: string[] = [];
  const replies: FakeReply[] = steps.map((calls) => ({
    parts: calls.map((c) => {
      const id = `call${++nextCall}`;
      ids.push(id);
      return { toolCall: { id, name: c.name, arguments: [JSON.stringify(c.args)] } };
    }),
    stop: 'tool_use',
  }));
  rig.fake.enqueue(...replies, ...(close ? [textReply('done')] : []));
  return ids;
}

async function startTurn(chat: Chat): Promise<string> {
  const res = await api(rig.port, 'POST', `/api/chat/${chat.id}/turn?wait=false`, {
    message: 'go',
    attachments: [],
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  return res.body.turn_id as string;
}

const END = ['turn.completed', 'turn.failed', 'turn.interrupted'];
const endOf = (chat: Chat, turnId: string) =>
  chat.ws.waitEvent(
    (e) => e.data?.turn_id === turnId && END.includes(e.type),
    `the end of ${turnId}`,
    15_000,
  );
const approvalFor = (chat: Chat, callId: string) =>
  chat.ws.waitEvent(
    (e) => e.type === 'approval.requested' && e.data.call_id === callId,
    `an approval for ${callId}`,
    10_000,
  );
const resultOf = (chat: Chat, callId: string) =>
  chat.ws.waitEvent(
    (e) => e.type === 'turn.tool_result' && e.data.call_id === callId,
    `the result of ${callId}`,
    10_000,
  );
const asks = (events: WsEvent[]) => events.filter((e) => e.type === 'approval.requested');

/**
 * Runs a turn that must not ask: when an approval shows up anyway it is denied (so the call never
 * runs and the turn cannot hang) and the test fails.
 */
async function runNoAsk(
  chat: Chat,
  steps: Call[][],
): Promise<{ turnId: string; events: WsEvent[]; results: any[] }> {
  const ids = enqueue(steps);
  const turnId = await startTurn(chat);
  const first = await chat.ws.waitEvent(
    (e) => e.data?.turn_id === turnId && (e.type === 'approval.requested' || END.includes(e.type)),
    'an approval or the end of the turn',
    15_000,
  );
  if (first.type === 'approval.requested') {
    await api(
      rig.port,
      'POST',
      `/api/sessions/${chat.id}/approvals/${first.data.approval_id}`,
      {
        decision: 'deny',
      },
      { key: rig.server.key() },
    );
    await endOf(chat, turnId);
    rig.fake.reset();
    assert.unreachable(
      `${first.data.tool} asked for approval (${first.data.reason}) where it must not`,
    );
  }
  assert.is(first.type, 'turn.completed', JSON.stringify(first.data));
  assert.is(rig.fake.pending, 0, 'the model used every scripted step');
  const events = ofTurn(chat.ws.events, turnId);
  return {
    turnId,
    events,
    results: ids.map(
      (id) => events.find((e) => e.type === 'turn.tool_result' && e.data.call_id === id)!.data,
    ),
  };
}

const answer = (chat: Chat, approvalId: string, decision: string) =>
  api(
    rig.port,
    'POST',
    `/api/sessions/${chat.id}/approvals/${approvalId}`,
    { decision },
    { key: rig.server.key() },
  );

async function answerWs(chat: Chat, approvalId: string, decision: string): Promise<any> {
  const requestId = `r${++nextCall}`;
  chat.ws.send({
    type: 'approve',
    session_id: chat.id,
    approval_id: approvalId,
    decision,
    request_id: requestId,
  });
  return chat.ws.waitFrame((f) => f.request_id === requestId, `the answer to ${requestId}`);
}

const auditFile = () => join(rig.server.home, 'logs', 'audit.log');

function auditLines(): any[] {
  if (!existsSync(auditFile())) return [];
  return readFileSync(auditFile(), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const auditOf = (sessionId: string) => auditLines().filter((l) => l.session_id === sessionId);

/** Checks the session's audit lines and remembers them for the whole-file check at the end. */
function expectAudit(chat: Chat, decisions: string[]): any[] {
  const lines = auditOf(chat.id);
  assert.equal(
    lines.map((l) => l.decision),
    decisions,
    `audit decisions for ${chat.id}`,
  );
  expectedAudit.set(chat.id, decisions);
  return lines;
}

const unique = () => `${Date.now() % 100000}${Math.floor(Math.random() * 1e6)}`;
/** Asks (curl is a network tool) and, once run, prints a marker that proves it ran. */
const curlCommand = (marker: string) => `curl --version >/dev/null 2>&1; echo ran-${marker}`;

// ---- tests ----

test('interactive: curl asks over /ws; allow_once over HTTP runs it; the same call asks again; allow_session over /ws lets it run without asking', async () => {
  const chat = await newChat('interactive');
  try {
    const m = unique();
    const command = curlCommand(m);
    const [c1, c2, c3] = enqueue([
      [{ name: 'terminal', args: { command } }],
      [{ name: 'terminal', args: { command } }],
      [{ name: 'terminal', args: { command, timeout_seconds: 60 } }],
    ]);
    const turnId = await startTurn(chat);

    const ap1 = await approvalFor(chat, c1!);
    assert.equal(
      { ...ap1.data, approval_id: undefined, expires_at: undefined },
      {
        turn_id: turnId,
        call_id: c1,
        approval_id: undefined,
        expires_at: undefined,
        tool: 'terminal',
        input: { command },
        reason: 'This command reaches the network, so it needs your approval.',
      },
    );
    // Nobody may ever answer: it expires (agent.approval_timeout_seconds, 30 min by default).
    assert.ok(Date.parse(ap1.data.expires_at) > Date.now() + 60_000, ap1.data.expires_at);
    assert.match(ap1.data.approval_id, /^ap_/);
    assert.not.ok(
      chat.ws.events.some((e) => e.type === 'turn.tool_result'),
      'the call waits for the answer',
    );
    // A client that was not listening (a reloaded page) finds the waiting call through the API.
    const waiting = await api(rig.port, 'GET', `/api/sessions/${chat.id}/approvals`);
    assert.equal(waiting.body.items, [
      {
        approval_id: ap1.data.approval_id,
        turn_id: turnId,
        call_id: c1,
        tool: 'terminal',
        input: { command },
        reason: ap1.data.reason,
      },
    ]);
    // Loopback trust is not enough to answer: a program on this machine (one the agent started)
    // must not answer for the person, over HTTP or /ws.
    const keyless = await api(
      rig.port,
      'POST',
      `/api/sessions/${chat.id}/approvals/${ap1.data.approval_id}`,
      { decision: 'allow_once' },
    );
    assert.is(keyless.status, 403, JSON.stringify(keyless.body));
    assert.is(keyless.body.error.code, 'key_required');
    assert.match(keyless.body.error.message, /^Answering an approval needs the access key/);
    const plainWs = await connectWs(rig.port, [`session:${chat.id}`]);
    try {
      plainWs.send({
        type: 'approve',
        session_id: chat.id,
        approval_id: ap1.data.approval_id,
        decision: 'allow_once',
        request_id: 'keyless',
      });
      const refused = await plainWs.waitFrame((f) => f.request_id === 'keyless', 'the refusal');
      assert.equal([refused.type, refused.error.code], ['error', 'key_required']);
    } finally {
      plainWs.close();
    }
    assert.is(
      (await api(rig.port, 'GET', `/api/sessions/${chat.id}/approvals`)).body.items.length,
      1,
      'still waiting',
    );
    const ok1 = await answer(chat, ap1.data.approval_id, 'allow_once');
    assert.is(ok1.status, 200, JSON.stringify(ok1.body));
    assert.equal(ok1.body, { approval_id: ap1.data.approval_id, decision: 'allow_once' });
    const r1 = await resultOf(chat, c1!);
    assert.equal([r1.data.output, r1.data.is_error], [`ran-${m}\n[exit code 0]`, false]);
    assert.not.ok(
      (await api(rig.port, 'GET', `/api/sessions/${chat.id}/approvals`)).body.items.some(
        (a: { approval_id: string }) => a.approval_id === ap1.data.approval_id,
      ),
      'an answered approval is no longer listed',
    );

    const ap2 = await approvalFor(chat, c2!);
    assert.is.not(
      ap2.data.approval_id,
      ap1.data.approval_id,
      'allow_once is for that one call: the same command asks again',
    );
    const again = await answer(chat, ap1.data.approval_id, 'allow_once');
    assert.is(again.status, 404, 'an approval is answered once');
    const reply = await answerWs(chat, ap2.data.approval_id, 'allow_session');
    assert.equal(
      [reply.type, reply.session_id, reply.approval_id, reply.decision],
      ['approval.answered', chat.id, ap2.data.approval_id, 'allow_session'],
    );
    assert.is((await resultOf(chat, c2!)).data.output, `ran-${m}\n[exit code 0]`);

    const end = await endOf(chat, turnId);
    assert.is(end.type, 'turn.completed');
    const r3 = await resultOf(chat, c3!);
    assert.is(r3.data.output, `ran-${m}\n[exit code 0]`);
    const events = ofTurn(chat.ws.events, turnId);
    assert.is(asks(events).length, 2, 'the call after allow_session ran without asking');

    // The grant lasts for the session: a later turn runs the same command without asking, a different one asks.
    const later = await runNoAsk(chat, [[{ name: 'terminal', args: { command } }]]);
    assert.is(later.results[0].output, `ran-${m}\n[exit code 0]`);
    const [c5] = enqueue([
      [{ name: 'terminal', args: { command: `curl --version >/dev/null 2>&1; echo other-${m}` } }],
    ]);
    const t2 = await startTurn(chat);
    const ap5 = await approvalFor(chat, c5!);
    assert.is((await answer(chat, ap5.data.approval_id, 'deny')).status, 200);
    await endOf(chat, t2);

    const lines = expectAudit(chat, [
      'ask',
      'allow_once',
      'ask',
      'allow_session',
      'ask',
      'denied_by_user',
    ]);
    for (const l of lines.slice(0, 4))
      assert.equal([l.tool, l.turn_id, l.input], ['terminal', turnId, { command }]);
    assert.is(lines[0].reason, 'This command reaches the network, so it needs your approval.');
    for (const l of lines) assert.match(l.ts, /^\d{4}-\d\d-\d\dT/);
  } finally {
    chat.ws.close();
  }
});

test('deny: a write outside the working folder asks; deny returns permission_denied to the model and writes nothing', async () => {
  const chat = await newChat('interactive');
  try {
    const outside = join(root, 'outside', 'x.txt');
    const [c1] = enqueue([[{ name: 'write_file', args: { path: outside, content: 'nope' } }]]);
    const before = rig.fake.requests.length;
    const turnId = await startTurn(chat);
    const ap = await approvalFor(chat, c1!);
    assert.equal(
      [ap.data.tool, ap.data.input, ap.data.reason],
      [
        'write_file',
        { path: outside, content: 'nope' },
        "This changes a file outside the session's working folder, so it needs your approval.",
      ],
    );
    const res = await answer(chat, ap.data.approval_id, 'deny');
    assert.is(res.status, 200, JSON.stringify(res.body));
    const r = await resultOf(chat, c1!);
    assert.equal(
      [r.data.output, r.data.is_error],
      ['permission_denied: the user declined to run write_file.', true],
    );
    assert.is((await endOf(chat, turnId)).type, 'turn.completed');
    assert.not.ok(existsSync(outside), 'nothing was written');

    // The model's next request carries the refusal as the call's result.
    assert.is(rig.fake.requests.length, before + 2);
    const messages = rig.fake.requests[before + 1]!.body!.messages as any[];
    const tool = messages.find((msg) => msg.role === 'tool' && msg.tool_call_id === c1);
    assert.ok(
      tool,
      `a tool message for ${c1} in ${JSON.stringify(messages.map((msg) => msg.role))}`,
    );
    assert.match(
      JSON.stringify(tool.content),
      /permission_denied: the user declined to run write_file\./,
    );

    const lines = expectAudit(chat, ['ask', 'denied_by_user']);
    assert.equal(lines[0].input, { path: outside, content: 'nope' });
  } finally {
    chat.ws.close();
  }
});

test('interrupt withdraws a pending approval (over /ws and over HTTP); answering it afterwards is a 404', async () => {
  const chat = await newChat('interactive');
  try {
    const m = unique();
    for (const how of ['ws', 'http'] as const) {
      const [c1] = enqueue(
        [[{ name: 'terminal', args: { command: `${curlCommand(m)} > ran-${how}.txt` } }]],
        false,
      );
      const turnId = await startTurn(chat);
      const ap = await approvalFor(chat, c1!);
      if (how === 'ws') {
        chat.ws.send({ type: 'interrupt', session_id: chat.id, request_id: `i-${m}` });
        const reply = await chat.ws.waitFrame(
          (f) => f.request_id === `i-${m}`,
          'the interrupt reply',
        );
        assert.equal(
          [reply.type, reply.interrupted, reply.turn_id],
          ['interrupt.result', true, turnId],
        );
      } else {
        const res = await api(rig.port, 'POST', `/api/chat/${chat.id}/interrupt`, {});
        assert.equal([res.status, res.body.interrupted, res.body.turn_id], [200, true, turnId]);
      }
      const withdrawn = await chat.ws.waitEvent(
        (e) => e.type === 'approval.withdrawn' && e.data.approval_id === ap.data.approval_id,
        'approval.withdrawn',
      );
      assert.equal([withdrawn.data.turn_id, withdrawn.data.call_id], [turnId, c1]);
      assert.is((await endOf(chat, turnId)).type, 'turn.interrupted');

      const late = await answer(chat, ap.data.approval_id, 'allow_once');
      assert.is(late.status, 404, JSON.stringify(late.body));
      assert.is(late.body.error.code, 'not_found');
      const lateWs = await answerWs(chat, ap.data.approval_id, 'allow_once');
      assert.equal([lateWs.type, lateWs.error?.code], ['error', 'not_found']);
      assert.not.ok(
        existsSync(join(chat.work, `ran-${how}.txt`)),
        'the withdrawn command never ran',
      );
      // The call's only result is svc's, saying it was stopped (the stored one a reload shows).
      assert.equal(
        ofTurn(chat.ws.events, turnId)
          .filter((e) => e.type === 'turn.tool_result')
          .map((e) => [e.data.call_id, e.data.output, e.data.is_error]),
        [[c1, 'Stopped before it finished.', true]],
      );
    }
    assert.is(rig.fake.pending, 0);
    const lines = expectAudit(chat, ['ask', 'withdrawn', 'ask', 'withdrawn']);
    assert.is(lines[1].reason, 'the turn was interrupted');
  } finally {
    chat.ws.close();
  }
});

test('auto mode runs ask-class steps without asking (and logs no ask)', async () => {
  const chat = await newChat('interactive');
  try {
    // Raising the mode needs the key even on loopback; lowering it (strict, below) does not.
    const keyless = await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, {
      permission_mode: 'auto',
    });
    assert.is(keyless.status, 403, JSON.stringify(keyless.body));
    assert.equal(
      [keyless.body.error.code, keyless.body.error.message.split(':')[0]],
      [
        'key_required',
        'Widening permission_mode of a session needs the access key, even from this machine',
      ],
    );
    for (const change of [{ network: 'on' }, { working_dir: root }])
      assert.is(
        (await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, change)).status,
        403,
        JSON.stringify(change),
      );
    const kept = (await api(rig.port, 'GET', `/api/sessions/${chat.id}`)).body;
    assert.equal([kept.permission_mode, kept.working_dir], ['interactive', chat.work]);
    const patched = await api(
      rig.port,
      'PATCH',
      `/api/sessions/${chat.id}`,
      { permission_mode: 'auto' },
      { key: rig.server.key() },
    );
    assert.is(patched.status, 200, JSON.stringify(patched.body));
    assert.is(patched.body.permission_mode, 'auto');
    const m = unique();
    const outside = join(root, 'auto-outside', 'y.txt');
    const t = await runNoAsk(chat, [
      [{ name: 'terminal', args: { command: curlCommand(m) } }],
      [{ name: 'write_file', args: { path: outside, content: 'auto wrote this' } }],
    ]);
    assert.equal([t.results[0].output, t.results[0].is_error], [`ran-${m}\n[exit code 0]`, false]);
    assert.is(t.results[1].is_error, false, t.results[1].output);
    assert.is(readFileSync(outside, 'utf8'), 'auto wrote this');
    expectAudit(chat, []);
  } finally {
    chat.ws.close();
  }
});

test('strict mode refuses ask-class steps without asking; allowed steps still run', async () => {
  const chat = await newChat('interactive');
  try {
    assert.is(
      (await api(rig.port, 'PATCH', `/api/sessions/${chat.id}`, { permission_mode: 'strict' })).body
        .permission_mode,
      'strict',
    );
    const m = unique();
    const t = await runNoAsk(chat, [
      [{ name: 'terminal', args: { command: curlCommand(m) } }],
      [{ name: 'terminal', args: { command: `echo plain-${m}` } }],
    ]);
    const [curl, plain] = t.results;
    assert.is(curl.is_error, true);
    assert.is(
      curl.output,
      'permission_denied: This command reaches the network, so it needs your approval. The session is in strict mode, which refuses anything that would ask.',
    );
    assert.equal([plain.output, plain.is_error], [`plain-${m}\n[exit code 0]`, false]);
    const lines = expectAudit(chat, ['strict_denied']);
    assert.equal(lines[0].input, { command: curlCommand(m) });
  } finally {
    chat.ws.close();
  }
});

test('a hard deny (rm -rf / through sudo, a write into /etc) is refused in every mode and never asks', async () => {
  // Even if it ran, GNU rm stops at the unknown option (and at --preserve-root) before deleting anything.
  const rm = 'sudo rm -rf / --svc-e2e-no-such-option';
  const etc = '/etc/svc-e2e-hard-deny.conf';
  for (const mode of ['interactive', 'auto', 'strict'] as const) {
    const chat = await newChat(mode);
    try {
      const t = await runNoAsk(chat, [
        [{ name: 'terminal', args: { command: rm } }],
        [{ name: 'write_file', args: { path: etc, content: 'x' } }],
      ]);
      const [r1, r2] = t.results;
      assert.is(r1.is_error, true);
      assert.is(
        r1.output,
        'permission_denied: Refused: `rm -r /` would delete the whole file system (/). This is a hard limit: no permission rule can allow it.',
        mode,
      );
      assert.is(r2.is_error, true);
      assert.match(
        r2.output,
        /^permission_denied: Refused: \/etc\/svc-e2e-hard-deny\.conf is inside the system folder \/etc/,
        mode,
      );
      assert.not.ok(existsSync(etc));
      const lines = expectAudit(chat, ['deny', 'deny']);
      assert.equal(
        lines.map((l) => l.tool),
        ['terminal', 'write_file'],
      );
      assert.match(lines[0].reason, /hard limit/);
    } finally {
      chat.ws.close();
    }
  }
});

test('a symlink in the working folder does not carry the file tools past the rules', async () => {
  const chat = await newChat('interactive');
  try {
    const outside = join(root, 'symlinked-outside');
    mkdirSync(join(outside, '.ssh'), { recursive: true });
    writeFileSync(
      join(outside, '.ssh', 'id_work'),
      '-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n',
    );
    symlinkSync(outside, join(chat.work, 'out'));
    symlinkSync(join(outside, '.ssh'), join(chat.work, 'keys'));
    const key = join(outside, '.ssh', 'id_work');

    // Directly, the key is refused and a write out there asks; through the link it must be the same.
    const [direct, viaLink, write] = enqueue([
      [{ name: 'read_file', args: { path: key } }],
      [{ name: 'read_file', args: { path: 'keys/id_work' } }],
      [{ name: 'write_file', args: { path: 'out/planted.txt', content: 'escaped' } }],
    ]);
    const turnId = await startTurn(chat);
    const first = await chat.ws.waitEvent(
      (e) =>
        e.data?.turn_id === turnId && (e.type === 'approval.requested' || END.includes(e.type)),
      'an approval for the write or the end of the turn',
      15_000,
    );
    if (first.type === 'approval.requested') {
      assert.is(first.data.call_id, write);
      assert.is(
        first.data.reason,
        `This changes a file outside the session's working folder, so it needs your approval. (${join(chat.work, 'out', 'planted.txt')} leads to ${join(outside, 'planted.txt')} through a symbolic link.)`,
      );
      assert.is((await answer(chat, first.data.approval_id, 'deny')).status, 200);
      await endOf(chat, turnId);
    }
    const results = ofTurn(chat.ws.events, turnId).filter((e) => e.type === 'turn.tool_result');
    const out = (id: string) => results.find((e) => e.data.call_id === id)!.data;
    assert.match(
      out(direct!).output,
      /^permission_denied: /,
      'the key is refused when named directly',
    );
    assert.match(
      out(viaLink!).output,
      /^permission_denied: /,
      'the key is refused through the link too',
    );
    assert.match(out(viaLink!).output, /through a symbolic link\.\)$/);
    assert.not.match(out(viaLink!).output, /not a real key/);
    assert.is(
      first.type,
      'approval.requested',
      'a write through the link to outside the working folder asks',
    );
    assert.not.ok(existsSync(join(outside, 'planted.txt')), 'nothing was written outside');
    expectAudit(chat, ['deny', 'deny', 'ask', 'denied_by_user']);
  } finally {
    chat.ws.close();
  }
});

test('a broken permissions.yml keeps the last good rules, in a worker started after it broke too; the problem is in the log', async () => {
  const rules = join(rig.server.home, 'permissions.yml');
  const chat = await newChat('auto');
  const touch = (name: string): Call[][] => [
    [{ name: 'terminal', args: { command: `touch ${name}` } }],
  ];
  const refused = async (name: string, when: string) => {
    const t = await runNoAsk(chat, touch(name));
    assert.equal(
      [t.results[0].output, t.results[0].is_error],
      ['permission_denied: e2e: no touching here', true],
      when,
    );
    assert.not.ok(existsSync(join(chat.work, name)), `${when}: the command did not run`);
  };
  try {
    const good = 'terminal:\n  - deny: { command: touch, reason: "e2e: no touching here" }\n';
    writeFileSync(rules, good);
    await refused('one.txt', 'the good rules');
    // Valid YAML with a rule svc cannot use: the whole file is set aside (the sandbox section is fine).
    writeFileSync(rules, `${good}  - allow: { colour: blue }\n`);
    await refused('two.txt', 'the file broken');
    // Workers come and go on a running svc (idle ones retire, a crashed one is replaced): a worker
    // that never read the good file keeps them too.
    const agents = async () =>
      ((await api(rig.port, 'GET', '/api/status')).body.processes as any[])
        .filter((p) => p.role === 'agent')
        .map((p) => p.pid as number);
    const old = await agents();
    assert.ok(old.length > 0, 'an agent worker ran the turns');
    for (const pid of old) process.kill(pid, 'SIGKILL');
    await waitFor(
      async () => (await agents()).every((pid) => !old.includes(pid)),
      15_000,
      'the killed agent workers to be gone',
    );
    await refused('three.txt', 'in a worker started after the file broke');
    const logs = await runCli(['logs', '--process', 'agent', '-n', '500'], {
      SVC_HOME: rig.server.home,
    });
    assert.is(logs.code, 0, logs.stderr);
    assert.match(
      logs.stdout,
      'permissions.yml has a problem; the previous or built-in rules apply',
    );
    assert.match(logs.stdout, 'colour');
    expectAudit(chat, ['deny', 'deny', 'deny']);
  } finally {
    rmSync(rules, { force: true });
    chat.ws.close();
  }
});

/**
 * A watcher a command left running outside the sandbox (approved once): it polls this session's
 * approvals over loopback without the key and answers each with allow_once.
 */
const watcherScript = (port: number, sessionId: string, log: string, until: number) => `
import { appendFileSync } from 'node:fs';
const base = 'http://127.0.0.1:${port}/api/sessions/${sessionId}/approvals';
while (Date.now() < ${until}) {
  const items = await fetch(base).then((r) => r.json()).then((b) => b.items ?? [], (e) => {
    appendFileSync(${JSON.stringify(log)}, 'poll failed: ' + e.message + '\\n');
    return [];
  });
  for (const a of items) {
    const r = await fetch(base + '/' + a.approval_id, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'allow_once' }),
    });
    const body = await r.json();
    appendFileSync(${JSON.stringify(log)}, a.approval_id + ' ' + r.status + ' ' + (body.error?.code ?? 'ok') + '\\n');
    process.exit(0);
  }
  await new Promise((r) => setTimeout(r, 50));
}
`;

test('a command approved once to run outside cannot answer the next approval without the key: it stays pending', async () => {
  const chat = await newChat('interactive');
  try {
    const log = join(chat.work, 'watch.log');
    const until = Date.now() + 120_000 * SLACK;
    writeFileSync(join(chat.work, 'watch.mjs'), watcherScript(rig.port, chat.id, log, until));
    const outside = join(root, 'watched', 'planted.txt');
    const [c1, c2] = enqueue([
      [
        {
          name: 'terminal',
          args: {
            command: `${process.execPath} watch.mjs`,
            background: true,
            outside_sandbox: 'watch the build',
          },
        },
      ],
      [{ name: 'write_file', args: { path: outside, content: 'planted' } }],
    ]);
    const turnId = await startTurn(chat);
    const ap1 = await approvalFor(chat, c1!);
    assert.is((await answer(chat, ap1.data.approval_id, 'allow_once')).status, 200);
    assert.match((await resultOf(chat, c1!)).data.output, /^Started in the background/);
    const ap2 = await approvalFor(chat, c2!);
    const tried = await waitFor(
      () => (existsSync(log) ? readFileSync(log, 'utf8') : undefined),
      30_000,
      'the watcher to try to answer',
    );
    assert.is(tried, `${ap2.data.approval_id} 403 key_required\n`);
    const waiting = await api(rig.port, 'GET', `/api/sessions/${chat.id}/approvals`);
    assert.equal(
      waiting.body.items.map((a: { approval_id: string }) => a.approval_id),
      [ap2.data.approval_id],
      'the approval is still waiting for the person',
    );
    assert.not.ok(
      chat.ws.events.some((e) => e.type === 'turn.tool_result' && e.data.call_id === c2),
    );
    assert.is((await answer(chat, ap2.data.approval_id, 'deny')).status, 200);
    await endOf(chat, turnId);
    assert.not.ok(existsSync(outside), 'nothing was written');
    expectAudit(chat, ['ask', 'allow_once', 'ask', 'denied_by_user']);
  } finally {
    chat.ws.close();
  }
});

test('audit.log is private (0600) and has exactly one line per ask, answer and deny', () => {
  const st = statSync(auditFile());
  assert.is((st.mode & 0o777).toString(8), '600');
  const lines = auditLines();
  const bySession = new Map<string, string[]>();
  for (const l of lines) {
    assert.equal(Object.keys(l).slice(0, 5), ['ts', 'session_id', 'turn_id', 'tool', 'decision']);
    assert.type(l.input, 'object');
    bySession.set(l.session_id, [...(bySession.get(l.session_id) ?? []), l.decision]);
  }
  for (const [id, want] of expectedAudit) assert.equal(bySession.get(id) ?? [], want, id);
  assert.is(
    lines.length,
    [...expectedAudit.values()].reduce((n, d) => n + d.length, 0),
    'no line beyond the expected ones',
  );
});

test('restart_server asks even in auto mode: deny refuses it, allow restarts the server', async () => {
  const chat = await newChat('auto');
  try {
    const before = (await api(rig.port, 'GET', '/api/status')).body.restarts as number;
    const [c1, c2] = enqueue([
      [{ name: 'restart_server', args: { reason: 'e2e: refused' } }],
      [{ name: 'restart_server', args: { reason: 'e2e: allowed' } }],
    ]);
    const turnId = await startTurn(chat);
    const ap1 = await approvalFor(chat, c1!);
    assert.equal(
      [ap1.data.tool, ap1.data.input, ap1.data.reason],
      [
        'restart_server',
        { reason: 'e2e: refused' },
        'Restarting svc interrupts every session for a moment, so it always needs your approval.',
      ],
    );
    assert.is((await answer(chat, ap1.data.approval_id, 'deny')).status, 200);
    const r1 = await resultOf(chat, c1!);
    assert.equal(
      [r1.data.output, r1.data.is_error],
      ['permission_denied: the user declined to run restart_server.', true],
    );

    const ap2 = await approvalFor(chat, c2!);
    assert.is((await answerWs(chat, ap2.data.approval_id, 'allow_once')).type, 'approval.answered');
    const r2 = await resultOf(chat, c2!);
    assert.is(r2.data.is_error, false, r2.data.output);
    assert.match(r2.data.output, /^Restart requested \(e2e: allowed\)/);
    assert.is((await endOf(chat, turnId)).type, 'turn.completed');

    const status = await waitFor(
      async () => {
        const s = await api(rig.port, 'GET', '/api/status');
        return s.status === 200 && s.body.restarts === before + 1 && s.body.state === 'running'
          ? s.body
          : undefined;
      },
      20_000,
      'the server to restart',
    );
    assert.is(status.restarts, before + 1);
    assert.is(
      (await api(rig.port, 'GET', `/api/sessions/${chat.id}`)).status,
      200,
      'the session is still there after the restart',
    );
    assert.equal(
      auditOf(chat.id).map((l) => [l.tool, l.decision]),
      [
        ['restart_server', 'ask'],
        ['restart_server', 'denied_by_user'],
        ['restart_server', 'ask'],
        ['restart_server', 'allow_once'],
      ],
    );
  } finally {
    chat.ws.close();
  }
});

test.run();
