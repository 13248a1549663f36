import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply, type FakeReply } from '../fixtures/fake-provider.js';
import {
  PNG_BASE64,
  README_TEXT,
  startMcpHttpServer,
  startMcpSseServer,
  type McpHttpFixture,
} from '../fixtures/mcp-server.js';
import { assertFieldError, api as rawApi, type ApiResult } from '../helpers/api.js';
import { runCli, waitFor } from '../helpers/server.js';
import {
  connectWs,
  ofTurn,
  startRig,
  type TurnRig,
  type WsClient,
  type WsEvent,
} from '../helpers/turns.js';

/**
 * MCP end to end: real MCP servers written with the SDK (one over stdio, started by svc; one over
 * Streamable HTTP), added through the API, their tools called by the fake model through the
 * permission engine; interrupts, crashes of the server and of the mcp worker, the mcpServers
 * import, the trash, and secrets that never show.
 */

const STDIO_SECRET = 'stdio-secret-value-7f3a9c1e55d2';
const HTTP_SECRET = 'http-secret-value-0b8e4d6a2f91';
const URL_SECRET = 'url-password-5e1d77c0a4b2';
const URL_TOKEN = 'url-token-93af0c6b1e28';
const fixture = fileURLToPath(new URL('../fixtures/mcp-server.js', import.meta.url));

let rig: TurnRig;
let remote: McpHttpFixture;
let dir = '';
let mcpWs: WsClient;
const pidFile = () => join(dir, 'stdio.pid');
const logFile = () => join(dir, 'stdio.log');
/** Every response body, to check that no secret was ever answered. */
const answered: string[] = [];

async function api(
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: string } = {},
): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body, opts);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const pids = () =>
  readFileSync(pidFile(), 'utf8').trim().split(' ').map(Number) as [number, number];
const serverOf = async (name: string) => (await api('GET', `/api/mcp/servers/${name}`)).body;
const connected = (name: string) =>
  waitFor(
    async () => ((await serverOf(name)).status === 'connected' ? serverOf(name) : undefined),
    30_000,
    `${name} connected`,
  );

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-mcp-e2e-'));
  remote = await startMcpHttpServer({ requireHeader: ['Authorization', `Bearer ${HTTP_SECRET}`] });
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  mcpWs = await connectWs(rig.port, ['mcp']);
});

test.after(async () => {
  mcpWs?.close();
  await rig?.stop();
  await remote?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---- a turn that calls tools ----

let nextCall = 0;
interface Chat {
  id: string;
  ws: WsClient;
}

async function newChat(mode = 'interactive'): Promise<Chat> {
  const res = await api('POST', '/api/sessions', { permission_mode: mode });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.id, ws: await connectWs(rig.port, [`session:${res.body.id}`]) };
}

function enqueueCall(name: string, args: Record<string, unknown>): string {
  const id = `mcall${++nextCall}`;
  const step: FakeReply = {
    parts: [{ toolCall: { id, name, arguments: [JSON.stringify(args)] } }],
    stop: 'tool_use',
  };
  rig.fake.enqueue(step, textReply('done'));
  return id;
}

async function startTurn(chat: Chat): Promise<string> {
  const res = await api('POST', `/api/chat/${chat.id}/turn?wait=false`, {
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
    30_000,
  );
const resultOf = (chat: Chat, callId: string) =>
  chat.ws.waitEvent(
    (e) => e.type === 'turn.tool_result' && e.data.call_id === callId,
    `the result of ${callId}`,
    30_000,
  );

/** Runs one turn calling one tool with no approval expected; answers the tool result event. */
async function callTool(chat: Chat, name: string, args: Record<string, unknown>): Promise<any> {
  const id = enqueueCall(name, args);
  const turnId = await startTurn(chat);
  const end = await endOf(chat, turnId);
  assert.not.ok(
    ofTurn(chat.ws.events, turnId).some((e) => e.type === 'approval.requested'),
    `${name} asked where it must not`,
  );
  assert.is(end.type, 'turn.completed', JSON.stringify(end.data));
  return (await resultOf(chat, id)).data;
}

/** The tool message the model got in its next request (OpenAI wire shape). */
function toolMessageSent(callId: string): any {
  for (const r of [...rig.fake.requests].reverse()) {
    const m = (r.body as any).messages?.find(
      (x: any) => x.role === 'tool' && x.tool_call_id === callId,
    );
    if (m) return { message: m, request: r.body };
  }
  return undefined;
}

const auditLines = () => {
  const f = join(rig.server.home, 'logs', 'audit.log');
  return existsSync(f)
    ? readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
};
const setRules = (yaml: string) => writeFileSync(join(rig.server.home, 'permissions.yml'), yaml);

// ---- tests ----

test('adding a stdio and a Streamable HTTP server: both connect with their tools; secrets show only as names', async () => {
  const before = await api('GET', '/api/mcp/servers');
  assert.equal(before.body, { servers: [] });
  const status = await api('GET', '/api/status');
  assert.not.ok(
    status.body.processes.some((p: any) => p.role === 'mcp'),
    'no mcp worker while no server is configured',
  );

  const local = await api('POST', '/api/mcp/servers', {
    name: 'local',
    command: process.execPath,
    args: [fixture, 'stdio'],
    env: {
      FIXTURE_TOKEN: STDIO_SECRET,
      FIXTURE_PID_FILE: pidFile(),
      FIXTURE_LOG: logFile(),
      FIXTURE_STDERR: `starting with ${STDIO_SECRET}`,
    },
    timeout_seconds: 30,
  });
  assert.is(local.status, 201, JSON.stringify(local.body));
  assert.equal(
    [local.body.name, local.body.transport, local.body.enabled],
    ['local', 'stdio', true],
  );
  assert.equal(local.body.env_names, [
    'FIXTURE_TOKEN',
    'FIXTURE_PID_FILE',
    'FIXTURE_LOG',
    'FIXTURE_STDERR',
  ]);
  assert.not.ok('env' in local.body);

  const http = await api('POST', '/api/mcp/servers', {
    name: 'remote',
    url: remote.url,
    headers: { Authorization: `Bearer ${HTTP_SECRET}` },
  });
  assert.is(http.status, 201, JSON.stringify(http.body));
  assert.equal([http.body.transport, http.body.header_names], ['http', ['Authorization']]);

  const l = await connected('local');
  const r = await connected('remote');
  assert.equal([l.connected_via, r.connected_via], ['stdio', 'streamable_http']);
  const names = ['echo', 'image', 'slow', 'fail', 'links', 'secret_length', 'add_tool'];
  assert.equal(
    l.tools.map((t: any) => t.name),
    names,
  );
  assert.equal(
    r.tools.map((t: any) => t.name),
    names,
  );
  assert.is(l.tools[0].description, 'Answers the text it is given.');
  assert.match(l.connected_at, /^\d{4}-/);
  assert.ok(
    remote.requests.every((q) => q.headers.authorization === `Bearer ${HTTP_SECRET}`),
    'every request to the remote server carries its header',
  );
  await mcpWs.waitEvent(
    (e) => e.type === 'mcp.status' && e.data.name === 'local' && e.data.status === 'connected',
    'a status event on the mcp topic',
  );

  const tools = await api('GET', '/api/tools');
  const echo = tools.body.items.find((t: any) => t.name === 'mcp__local__echo');
  assert.ok(echo, 'MCP tools are in GET /api/tools');
  assert.equal(echo.parameters.properties, { text: { type: 'string' } });
  assert.ok(tools.body.items.some((t: any) => t.name === 'mcp__remote__slow'));
  const procs = (await api('GET', '/api/status')).body.processes;
  assert.is(procs.filter((p: any) => p.role === 'mcp').length, 1, 'one mcp worker, shared');
});

test('an MCP tool asks by default; allowed once, the call reaches the server and its result reaches the model', async () => {
  const chat = await newChat('interactive');
  try {
    const id = enqueueCall('mcp__local__echo', { text: 'hello' });
    const turnId = await startTurn(chat);
    const ask = await chat.ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === id,
      'the approval',
      30_000,
    );
    assert.is(ask.data.tool, 'mcp__local__echo');
    assert.match(ask.data.reason, /asks first/);
    await api(
      'POST',
      `/api/sessions/${chat.id}/approvals/${ask.data.approval_id}`,
      {
        decision: 'allow_once',
      },
      { key: rig.server.key() },
    );
    assert.is((await endOf(chat, turnId)).type, 'turn.completed');
    const result = await resultOf(chat, id);
    assert.equal([result.data.output, result.data.is_error], ['stdio echo: hello', false]);
    assert.is(
      toolMessageSent(id)?.message.content,
      'stdio echo: hello',
      'the model got the result',
    );

    // Asked again and denied by the user: the call never reaches the server; the model hears why.
    const denyId = enqueueCall('mcp__local__echo', { text: 'never sent' });
    const denyTurn = await startTurn(chat);
    const ask2 = await chat.ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === denyId,
      'the second approval',
      30_000,
    );
    await api(
      'POST',
      `/api/sessions/${chat.id}/approvals/${ask2.data.approval_id}`,
      {
        decision: 'deny',
      },
      { key: rig.server.key() },
    );
    assert.is((await endOf(chat, denyTurn)).type, 'turn.completed');
    const denied = await resultOf(chat, denyId);
    assert.is(denied.data.is_error, true);
    assert.match(denied.data.output, /denied/i);
    assert.not.ok(
      String(toolMessageSent(denyId)?.message.content).includes('stdio echo'),
      'the server never answered it',
    );
    assert.equal(
      auditLines()
        .filter((l) => l.session_id === chat.id && l.tool === 'mcp__local__echo')
        .map((l) => l.decision),
      ['ask', 'allow_once', 'ask', 'denied_by_user'],
    );

    // The env reaches the server (its value is never shown).
    setRules('mcp__local__secret_length:\n  - allow: {}\n');
    const len = await callTool(chat, 'mcp__local__secret_length', {});
    assert.is(len.output, `token length ${STDIO_SECRET.length}`);
  } finally {
    chat.ws.close();
  }
});

test('permissions.yml allows and denies MCP tools by name with globs; each decision is audited', async () => {
  setRules('mcp__remote__*:\n  - allow: {}\nmcp__local__fail:\n  - deny: {}\n');
  const chat = await newChat('interactive');
  try {
    const r = await callTool(chat, 'mcp__remote__echo', { text: 'over http' });
    assert.equal([r.output, r.is_error], ['http echo: over http', false]);
    const d = await callTool(chat, 'mcp__local__fail', {});
    assert.is(d.is_error, true);
    assert.match(
      d.output,
      /^permission_denied: Your rule \(permissions.yml: mcp__local__fail #1\) denies/,
    );
    const mine = auditLines().filter((l) => l.session_id === chat.id);
    assert.equal(
      mine.map((l) => [l.tool, l.decision]),
      [
        ['mcp__remote__echo', 'allow'],
        ['mcp__local__fail', 'deny'],
      ],
    );
  } finally {
    chat.ws.close();
  }
});

test('a server that speaks only the older SSE transport is reached through the fallback; its tools work', async () => {
  const legacy = await startMcpSseServer();
  setRules('mcp__legacy__*:\n  - allow: {}\n');
  const chat = await newChat('interactive');
  try {
    const add = await api('POST', '/api/mcp/servers', { name: 'legacy', url: legacy.url });
    assert.is(add.status, 201, JSON.stringify(add.body));
    const s = await connected('legacy');
    assert.is(s.connected_via, 'sse');
    assert.ok(s.tools.some((t: any) => t.name === 'echo'));
    assert.ok(
      legacy.requests.some((q) => q.method === 'POST') &&
        legacy.requests.some((q) => q.method === 'GET'),
      'Streamable HTTP was tried first, then the event stream opened',
    );
    const r = await callTool(chat, 'mcp__legacy__echo', { text: 'the old way' });
    assert.equal([r.output, r.is_error], ['sse echo: the old way', false]);
  } finally {
    chat.ws.close();
    await api('DELETE', '/api/mcp/servers/legacy');
    await legacy.close();
  }
});

test('results: images reach a vision model as images, isError is a failed result, links and resources are text', async () => {
  setRules('mcp__*:\n  - allow: {}\n');
  const chat = await newChat('interactive');
  try {
    const plain = await callTool(chat, 'mcp__remote__image', {});
    assert.match(
      plain.output,
      /^here is a picture\n\[image mcp_\w+\.png \(image\/png, \d+ bytes\) at /,
    );
    assert.not.ok(
      JSON.stringify(toolMessageSent(plain.call_id)?.request).includes(PNG_BASE64),
      'a model without vision gets no image',
    );

    assert.is((await api('PATCH', '/api/config/models/oa', { vision: true })).status, 200);
    const seen = await callTool(chat, 'mcp__local__image', {});
    const sent = toolMessageSent(seen.call_id)!;
    assert.ok(
      JSON.stringify(sent.request).includes(`data:image/png;base64,${PNG_BASE64}`),
      'a vision model gets the image inline',
    );

    const failed = await callTool(chat, 'mcp__local__fail', {});
    assert.equal([failed.output, failed.is_error], ['the fixture failed on purpose', true]);
    assert.is(toolMessageSent(failed.call_id)?.message.content, 'the fixture failed on purpose');

    const links = await callTool(chat, 'mcp__remote__links', {});
    assert.is(
      links.output,
      '[resource link: readme (text/plain) fixture://readme on the MCP server "remote"; read it with mcp_read_resource {"server":"remote","uri":"fixture://readme"}]\n[resource memo://one]\nmemo text',
    );
  } finally {
    chat.ws.close();
  }
});

test('resources, templates and prompts per server: listed, read, filled in; refusals say why', async () => {
  for (const name of ['local', 'remote']) {
    const label = name === 'local' ? 'stdio' : 'http';
    const res = await api('GET', `/api/mcp/servers/${name}/resources`);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(
      res.body.resources.map((r: any) => [r.uri, r.name, r.mime_type]),
      [
        ['fixture://readme', 'readme', 'text/plain'],
        ['fixture://pixel.png', 'pixel', 'image/png'],
      ],
    );
    assert.is(res.body.resources[0].title, 'Readme');
    assert.equal(
      res.body.templates.map((t: any) => [t.uri_template, t.name]),
      [['fixture://notes/{id}', 'note']],
    );
    const read = await api(
      'GET',
      `/api/mcp/servers/${name}/resources/read?uri=${encodeURIComponent('fixture://readme')}`,
    );
    assert.is(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.contents, [
      {
        uri: 'fixture://readme',
        mime_type: 'text/plain',
        text: README_TEXT,
        size: README_TEXT.length,
        truncated: false,
      },
    ]);
    const note = await api(
      'GET',
      `/api/mcp/servers/${name}/resources/read?uri=${encodeURIComponent('fixture://notes/42')}`,
    );
    assert.is(note.body.contents[0].text, `${label} note 42`, 'a URI filled from a template');
    const prompts = await api('GET', `/api/mcp/servers/${name}/prompts`);
    assert.is(prompts.status, 200, JSON.stringify(prompts.body));
    assert.equal(prompts.body.prompts, [
      {
        name: 'review',
        title: 'Review',
        description: 'Asks for a review of a topic.',
        arguments: [{ name: 'topic', description: null, required: true }],
      },
    ]);
    const got = await api('POST', `/api/mcp/servers/${name}/prompts/review/get`, {
      arguments: { topic: 'the plan' },
    });
    assert.is(got.status, 200, JSON.stringify(got.body));
    assert.is(got.body.text, 'Please review the plan carefully.');
    assert.equal(got.body.messages, [{ role: 'user', text: 'Please review the plan carefully.' }]);
  }
  const pixel = await api('GET', '/api/mcp/servers/local/resources/read?uri=fixture://pixel.png');
  assert.equal(
    [pixel.body.contents[0].mime_type, pixel.body.contents[0].blob],
    ['image/png', PNG_BASE64],
  );

  const missing = await api('GET', '/api/mcp/servers/local/resources/read?uri=fixture://nope');
  assert.is(missing.status, 404, JSON.stringify(missing.body));
  assert.match(missing.body.error.message, /fixture:\/\/nope/);
  const noUri = await api('GET', '/api/mcp/servers/local/resources/read');
  assert.is(noUri.status, 400, JSON.stringify(noUri.body));
  assert.match(noUri.body.error.message, /uri/);
  const noArg = await api('POST', '/api/mcp/servers/local/prompts/review/get', {});
  assert.is(noArg.status, 400, JSON.stringify(noArg.body));
  assert.match(noArg.body.error.message, /topic/);
  const noPrompt = await api('POST', '/api/mcp/servers/local/prompts/nope/get');
  assert.is(noPrompt.status, 404, JSON.stringify(noPrompt.body));
  const badArgs = await api('POST', '/api/mcp/servers/local/prompts/review/get', {
    arguments: { topic: 7 },
  });
  assert.is(badArgs.status, 400);
  const noServer = await api('GET', '/api/mcp/servers/nope/prompts');
  assert.is(noServer.status, 404);
  assert.match(noServer.body.error.message, /GET \/api\/mcp\/servers/);
  const ghost = await api('GET', '/api/mcp/servers/constructor/resources');
  assert.is(ghost.status, 404, 'a name of Object.prototype is no server');

  const doc = (await api('GET', '/api/openapi.json')).body;
  for (const path of [
    '/api/mcp/servers/{name}/resources',
    '/api/mcp/servers/{name}/resources/read',
    '/api/mcp/servers/{name}/prompts',
    '/api/mcp/servers/{name}/prompts/{prompt}/get',
  ])
    assert.ok(doc.paths[path], `${path} is in the OpenAPI document`);
  assert.ok(
    doc.paths['/api/mcp/servers/{name}/resources/read'].get.parameters.some(
      (p: any) => p.name === 'uri' && p.in === 'query',
    ),
  );
});

/** Scripts the model: each tool call in a step of its own, then a text reply. */
function enqueueSteps(...calls: Array<[string, Record<string, unknown>]>): string[] {
  const ids = calls.map(() => `mcall${++nextCall}`);
  rig.fake.enqueue(
    ...calls.map(
      ([name, args], i): FakeReply => ({
        parts: [{ toolCall: { id: ids[i]!, name, arguments: [JSON.stringify(args)] } }],
        stop: 'tool_use',
      }),
    ),
    textReply('done'),
  );
  return ids;
}

test('a linked resource reaches the model: mcp_read_resource reads it, judged as the server’s (mcp__<server>__*), asking by default', async () => {
  setRules('mcp__remote__*:\n  - allow: {}\n');
  const chat = await newChat('interactive');
  try {
    const [linkId, readId] = enqueueSteps(
      ['mcp__remote__links', {}],
      ['mcp_read_resource', { server: 'remote', uri: 'fixture://readme' }],
    );
    const turnId = await startTurn(chat);
    assert.is((await endOf(chat, turnId)).type, 'turn.completed');
    assert.not.ok(
      ofTurn(chat.ws.events, turnId).some((e) => e.type === 'approval.requested'),
      'the rule for the server’s tools covers reading its resources',
    );
    assert.match(
      toolMessageSent(linkId!)?.message.content,
      /read it with mcp_read_resource \{"server":"remote","uri":"fixture:\/\/readme"\}/,
    );
    const sent = toolMessageSent(readId!)?.message.content;
    assert.is(
      sent,
      `[resource fixture://readme (text/plain, ${README_TEXT.length} bytes) from the MCP server "remote"]\n${README_TEXT}`,
      'the resource text reached the next request',
    );

    // A server no rule names: the read asks, naming what a rule would say; denied, nothing is read.
    const [askId] = enqueueSteps([
      'mcp_read_resource',
      { server: 'local', uri: 'fixture://readme' },
    ]);
    const askTurn = await startTurn(chat);
    const ask = await chat.ws.waitEvent(
      (e) => e.type === 'approval.requested' && e.data.call_id === askId,
      'the approval of the read',
      30_000,
    );
    assert.is(ask.data.tool, 'mcp_read_resource');
    assert.match(ask.data.reason, /mcp__local__resources\/read/);
    const denied = await api(
      'POST',
      `/api/sessions/${chat.id}/approvals/${ask.data.approval_id}`,
      { decision: 'deny' },
      { key: rig.server.key() }, // answering an approval needs the key, even on loopback
    );
    assert.is(denied.status, 200, JSON.stringify(denied.body));
    assert.is((await endOf(chat, askTurn)).type, 'turn.completed');
    assert.not.ok(String(toolMessageSent(askId!)?.message.content).includes(README_TEXT));
    assert.equal(
      auditLines()
        .filter((l) => l.session_id === chat.id && l.tool === 'mcp_read_resource')
        .map((l) => [l.decision, l.input.server]),
      [
        ['allow', 'remote'],
        ['ask', 'local'],
        ['denied_by_user', 'local'],
      ],
    );

    // A server that is not one with resources is not a choice the tool takes.
    const [badId] = enqueueSteps(['mcp_read_resource', { server: 'nope', uri: 'x://y' }]);
    const badTurn = await startTurn(chat);
    await endOf(chat, badTurn);
    assert.match(toolMessageSent(badId!)?.message.content, /Invalid arguments.*server/);
  } finally {
    chat.ws.close();
    setRules('mcp__*:\n  - allow: {}\n'); // as the tests after this one expect
  }
});

test('resources attached to a message are read and reach the model with it; a bad one is refused', async () => {
  const chat = await newChat('interactive');
  try {
    rig.fake.enqueue(textReply('read it'));
    const before = rig.fake.requests.length;
    const res = await api('POST', `/api/chat/${chat.id}/turn`, {
      message: 'summarize the attached',
      resources: [
        { server: 'local', uri: 'fixture://readme' },
        { server: 'remote', uri: 'fixture://pixel.png' },
      ],
    });
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is(res.body.status, 'completed');
    const sent = rig.fake.requests[before]?.body as any;
    const body = JSON.stringify(sent);
    const user = sent.messages.at(-1);
    assert.is(user.role, 'user');
    assert.match(user.content, /^summarize the attached\n\[resource fixture:\/\/readme/);
    assert.ok(user.content.includes(README_TEXT), 'the text resource is inline');
    assert.match(
      user.content,
      /\[resource fixture:\/\/pixel\.png \(image\/png, \d+ bytes\) from the MCP server "remote"\]: binary, not shown/,
    );
    assert.not.ok(body.includes(PNG_BASE64), 'a blob is described, not sent');
    const stored = res.body.messages.find((m: any) => m.role === 'user');
    assert.equal(
      stored.content.resources.map((r: any) => [r.server, r.uri]),
      [
        ['local', 'fixture://readme'],
        ['remote', 'fixture://pixel.png'],
      ],
    );

    const unknown = await api('POST', `/api/chat/${chat.id}/turn`, {
      message: 'x',
      resources: [{ server: 'nope', uri: 'fixture://readme' }],
    });
    assert.is(unknown.status, 400, JSON.stringify(unknown.body));
    assert.match(unknown.body.error.message, /"nope", which is not configured/);
    const gone = await api('POST', `/api/chat/${chat.id}/turn`, {
      message: 'x',
      resources: [{ server: 'local', uri: 'fixture://gone' }],
    });
    assert.is(gone.body.status, 'failed', JSON.stringify(gone.body));
    assert.match(
      gone.body.error.message,
      /fixture:\/\/gone could not be read from the MCP server "local"/,
    );
  } finally {
    chat.ws.close();
  }
});

test('a server that fails to start: the tail of its stderr (env values masked) shows in its status, its events and svc logs', async () => {
  const add = await api('POST', '/api/mcp/servers', {
    name: 'broken',
    command: process.execPath,
    args: [fixture, 'stdio'],
    env: {
      FIXTURE_TOKEN: STDIO_SECRET,
      FIXTURE_STDERR_LINES: '60',
      FIXTURE_STDERR: 'fatal: the token {token} was refused',
      FIXTURE_EXIT_AT_START: '1',
    },
  });
  assert.is(add.status, 201, JSON.stringify(add.body));
  try {
    const failed = await waitFor(
      async () => {
        const s = await serverOf('broken');
        return s.status === 'error' && s.stderr_tail ? s : undefined;
      },
      30_000,
      'the broken server to fail',
    );
    assert.match(
      failed.error,
      /exited with code 1: fatal: the token \[redacted\] was refused/,
      failed.error,
    );
    const lines = failed.stderr_tail.split('\n');
    assert.is(lines.length, 40, 'the last 40 lines');
    assert.is(lines[0], 'stderr line 22');
    assert.is(lines[39], 'fatal: the token [redacted] was refused');
    const event = await mcpWs.waitEvent(
      (e) => e.type === 'mcp.status' && e.data.name === 'broken' && e.data.stderr_tail,
      'an mcp.status event with the tail',
    );
    assert.is(event.data.stderr_tail, failed.stderr_tail);
    const listed = (await api('GET', '/api/mcp/servers')).body.servers.find(
      (s: any) => s.name === 'broken',
    );
    assert.is(listed.stderr_tail, failed.stderr_tail);
    const logs = await waitFor(
      async () => {
        const r = await runCli(['logs'], { SVC_HOME: rig.server.home }, 30_000);
        return r.stdout.includes('[broken stderr] fatal') ? r.stdout : undefined;
      },
      30_000,
      'the stderr lines in svc logs',
    );
    assert.match(logs, /mcp: \[broken stderr\] stderr line 60\n/);
    assert.match(logs, /mcp: \[broken stderr\] fatal: the token \[redacted\] was refused/);
    assert.is(
      logs.split('\n').filter((l) => l.includes('[broken stderr] stderr line 60')).length,
      1,
      'a server failing the same way on each retry logs its stderr once',
    );
  } finally {
    await api('DELETE', '/api/mcp/servers/broken');
  }
});

test('interrupting a turn during the slow tool cancels the call on the server (notifications/cancelled)', async () => {
  const chat = await newChat('interactive');
  try {
    const id = enqueueCall('mcp__local__slow', { seconds: 120 });
    const turnId = await startTurn(chat);
    await waitFor(
      () => existsSync(logFile()) && readFileSync(logFile(), 'utf8').includes('slow started'),
      30_000,
      'the slow tool to start',
    );
    const res = await api('POST', `/api/chat/${chat.id}/interrupt`);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is((await endOf(chat, turnId)).type, 'turn.interrupted');
    await waitFor(
      () => readFileSync(logFile(), 'utf8').includes('slow cancelled'),
      30_000,
      'the server to hear the cancellation',
    );
    assert.not.ok(
      ofTurn(chat.ws.events, turnId).some(
        (e: WsEvent) => e.type === 'turn.tool_result' && e.data.call_id === id && !e.data.is_error,
      ),
    );
    rig.fake.reset();
  } finally {
    chat.ws.close();
  }
});

test('list_changed: a tool the server adds at run time reaches the tool list', async () => {
  const chat = await newChat('interactive');
  try {
    await callTool(chat, 'mcp__remote__add_tool', {});
    await waitFor(
      async () => (await serverOf('remote')).tools.some((t: any) => t.name === 'added'),
      30_000,
      'the new tool',
    );
    const r = await callTool(chat, 'mcp__remote__added', {});
    assert.is(r.output, 'added works');
  } finally {
    chat.ws.close();
  }
});

test('a killed stdio server shows as error, is reconnected, and what it started dies with it', async () => {
  const [pid, helper] = pids();
  const mark = mcpWs.events.length;
  process.kill(pid, 'SIGKILL');
  const err = await mcpWs.waitEvent(
    (e) =>
      mcpWs.events.indexOf(e) >= mark &&
      e.type === 'mcp.status' &&
      e.data.name === 'local' &&
      e.data.status === 'error',
    'the error status',
    30_000,
  );
  assert.match(err.data.error, /the server process killed by SIGKILL/);
  await mcpWs.waitEvent(
    (e) =>
      mcpWs.events.indexOf(e) > mcpWs.events.indexOf(err) &&
      e.data.name === 'local' &&
      e.data.status === 'connected',
    'the reconnect',
    30_000,
  );
  const [pid2] = pids();
  assert.is.not(pid2, pid, 'a new server process');
  await waitFor(() => !alive(helper), 10_000, 'the old server’s child to be gone');
});

test('kill -9 of the mcp worker: it is restarted, the servers reconnect, no server process is orphaned', async () => {
  const procs = (await api('GET', '/api/status')).body.processes;
  const worker = procs.find((p: any) => p.role === 'mcp');
  const [pid, helper] = pids();
  process.kill(worker.pid, 'SIGKILL');
  await waitFor(
    () => !alive(pid) && !alive(helper),
    15_000,
    'the stdio server and its child to be killed with the worker',
  );
  const back = await waitFor(
    async () =>
      (await api('GET', '/api/status')).body.processes.find(
        (p: any) => p.role === 'mcp' && p.pid !== worker.pid && p.pid > 0,
      ),
    30_000,
    'a new mcp worker',
  );
  assert.is(back.restarts, 1);
  await connected('local');
  await connected('remote');
  assert.is.not(pids()[0], pid);
  const chat = await newChat('interactive');
  try {
    assert.is(
      (await callTool(chat, 'mcp__local__echo', { text: 'again' })).output,
      'stdio echo: again',
    );
  } finally {
    chat.ws.close();
  }
});

/** Writes to a unix socket and answers all it sent back before it closed. */
function talk(path: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = createConnection(path, () => socket.write(text));
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (got += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
  });
}

test('tool calls take a direct channel to the mcp worker: a private socket that serves only an agent holding a token from the supervisor', async () => {
  const worker = (await api('GET', '/api/status')).body.processes.find(
    (p: any) => p.role === 'mcp',
  );
  const sock = join(rig.server.home, 'run', `mcp-${worker.pid}.sock`);
  const chat = await newChat('interactive');
  try {
    assert.is(
      (await callTool(chat, 'mcp__local__echo', { text: 'direct' })).output,
      'stdio echo: direct',
    );
    assert.ok(existsSync(sock), 'the agent opened the channel for its calls');
    assert.is(statSync(sock).mode & 0o777, 0o600);
    const call = JSON.stringify({
      kind: 'req',
      id: 'x1',
      type: 'mcp.call',
      to: 'mcp',
      deadline: Date.now() + 10_000,
      payload: { call_id: 'x1', server: 'local', tool: 'echo', arguments: { text: 'intruder' } },
    });
    assert.is(
      await talk(sock, `${JSON.stringify({ token: 'a'.repeat(32) })}\n${call}\n`),
      '',
      'a made-up token: closed, nothing answered',
    );
    assert.is(await talk(sock, `${call}\n`), '', 'no handshake: closed, nothing answered');
    assert.is(
      (await callTool(chat, 'mcp__local__echo', { text: 'still' })).output,
      'stdio echo: still',
    );
  } finally {
    chat.ws.close();
  }
});

test('an mcpServers import with one bad entry is rejected whole, naming the entry and field; a good one is added', async () => {
  const bad = await api('POST', '/api/mcp/servers', {
    mcpServers: {
      good1: { command: 'node', args: ['x.js'] },
      broken: { url: 'ftp://example.com/mcp' },
    },
  });
  assert.is(bad.status, 400, JSON.stringify(bad.body));
  assert.is(bad.body.error.code, 'invalid_request');
  assert.match(bad.body.error.message, /mcpServers\.broken\.url/);
  assert.match(bad.body.error.message, /nothing was imported/);
  assert.not.ok(
    (await api('GET', '/api/mcp/servers')).body.servers.some((s: any) => s.name === 'good1'),
    'nothing of the import was kept',
  );

  const both = await api('POST', '/api/mcp/servers', {
    mcpServers: { bad__name: { command: 'node' } },
  });
  assert.is(both.status, 400);
  assert.match(both.body.error.message, /__/);

  // The Add a server form's entries: a refusal names the field as the form labels it.
  assertFieldError(
    await api('POST', '/api/mcp/servers', { name: 'a__b', command: 'node' }),
    { path: 'name', label: 'Name' },
    /Invalid MCP server: Name: a server name must not contain "__"/,
  );
  assertFieldError(
    await api('POST', '/api/mcp/servers', { name: 'envy', command: 'node', env: { '1BAD': 'x' } }),
    { path: 'env.1BAD', label: 'Environment, "1BAD"' },
    /an environment variable name is letters, digits and underscores/,
  );
  assertFieldError(
    await api('POST', '/api/mcp/servers', { name: 'far', url: 'ftp://example.com/mcp' }),
    { path: 'url', label: 'URL' },
    /URL: must be an http:\/\/ or https:\/\/ address/,
  );
  assertFieldError(
    await api('POST', '/api/mcp/servers', { name: 'blank', command: '' }),
    { path: 'command', label: 'Command' },
    /Command: must not be empty/,
  );

  const ok = await api('POST', '/api/mcp/servers', {
    mcpServers: {
      imported: {
        type: 'stdio',
        command: process.execPath,
        args: [fixture, 'stdio'],
        env: { FIXTURE_TOKEN: STDIO_SECRET },
        disabled: true,
      },
      other: { url: 'http://127.0.0.1:9/mcp', disabled: true },
    },
  });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assert.equal(ok.body.imported, ['imported', 'other']);
  const got = await serverOf('imported');
  assert.equal([got.status, got.enabled, got.env_names], ['disabled', false, ['FIXTURE_TOKEN']]);
  const dup = await api('POST', '/api/mcp/servers', { name: 'imported', command: 'node' });
  assert.is(dup.status, 409);
});

test('PATCH and DELETE: disable and enable live; delete goes to the trash and restores', async () => {
  const off = await api('PATCH', '/api/mcp/servers/remote', { enabled: false });
  assert.equal([off.status, off.body.status], [200, 'disabled']);
  const chatTools = await api('GET', '/api/tools');
  assert.not.ok(
    chatTools.body.items.some((t: any) => t.name.startsWith('mcp__remote__')),
    'a disabled server has no tools',
  );
  const on = await api('PATCH', '/api/mcp/servers', { name: 'remote', enabled: true });
  assert.is(on.status, 200);
  await connected('remote');
  const badPatch = await api('PATCH', '/api/mcp/servers/remote', { timeout_seconds: -1 });
  assert.is(badPatch.status, 400);
  const missing = await api('PATCH', '/api/mcp/servers/nope', { enabled: true });
  assert.is(missing.status, 404);

  const del = await api('DELETE', '/api/mcp/servers/imported');
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.is((await api('GET', '/api/mcp/servers/imported')).status, 404);
  const trash = await api('GET', '/api/trash');
  const item = trash.body.items.find((i: any) => i.id === del.body.trash_id);
  assert.equal([item.kind, item.name], ['mcp_server', 'imported']);
  const restored = await api('POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(restored.status, 200, JSON.stringify(restored.body));
  assert.is(restored.body.restored_to, 'imported');
  assert.equal((await serverOf('imported')).env_names, ['FIXTURE_TOKEN']);
  const del2 = await api('DELETE', '/api/mcp/servers?name=other');
  assert.is(del2.status, 200);
  assert.is(
    (await api('POST', '/api/mcp/servers/imported/reconnect')).status,
    409,
    'a disabled server is not reconnected',
  );
  const rec = await api('POST', '/api/mcp/servers/local/reconnect');
  assert.is(rec.status, 200, JSON.stringify(rec.body));
});

test("credentials in a remote server's url are masked in its answers; the masked url sent back keeps them", async () => {
  const url = `http://svc:${URL_SECRET}@127.0.0.1:9/mcp?token=${URL_TOKEN}`;
  const made = await api('POST', '/api/mcp/servers', { name: 'keyed', url, enabled: false });
  assert.is(made.status, 201, JSON.stringify(made.body));
  assert.not.ok(made.body.url.includes(URL_SECRET) || made.body.url.includes(URL_TOKEN));
  assert.match(made.body.url, /^http:\/\/svc:\*{8}.{4}@127\.0\.0\.1:9\/mcp\?token=\*{8}/);
  const listed = (await api('GET', '/api/mcp/servers')).body.servers;
  assert.is(listed.find((s: any) => s.name === 'keyed').url, made.body.url);
  const back = await api('PATCH', '/api/mcp/servers/keyed', {
    url: made.body.url,
    timeout_seconds: 5,
  });
  assert.is(back.status, 200, JSON.stringify(back.body));
  assert.is(back.body.url, made.body.url);
  const saved = readFileSync(join(rig.server.home, 'config.yml'), 'utf8');
  assert.ok(saved.includes(url), 'config.yml keeps the real url, not the mask');
  assert.is((await api('DELETE', '/api/mcp/servers/keyed')).status, 200);
});

test('secrets never appear in a response, the config view, a log or the audit log', async () => {
  answered.push(JSON.stringify((await api('GET', '/api/config')).body));
  const all = [answered.join('\n'), rig.server.output()];
  const logs = join(rig.server.home, 'logs');
  if (existsSync(logs))
    for (const f of readdirSync(logs)) all.push(readFileSync(join(logs, f), 'utf8'));
  const text = all.join('\n');
  assert.ok(answered.length > 20);
  assert.not.ok(text.includes(STDIO_SECRET), 'the stdio env secret leaked');
  assert.not.ok(text.includes(HTTP_SECRET), 'the HTTP header secret leaked');
  assert.not.ok(text.includes(URL_SECRET) || text.includes(URL_TOKEN), "a url's credential leaked");
});

test('stopping svc stops every server it started, and what they started', async () => {
  const running = pids();
  assert.ok(running.every(alive));
  await rig.server.stop();
  await waitFor(
    () => running.every((pid) => !alive(pid)),
    10_000,
    'the stdio server and its child to be gone',
  );
});

test.run();
