import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { textReply } from '../fixtures/fake-provider.js';
import { startMcpOAuthServer, type McpOAuthFixture } from '../fixtures/mcp-oauth-server.js';
import { api as rawApi, type ApiResult } from '../helpers/api.js';
import { http, waitFor } from '../helpers/server.js';
import { startRig, type TurnRig } from '../helpers/turns.js';

/**
 * OAuth for remote MCP servers, end to end: a real SDK-built Streamable HTTP server that requires
 * OAuth (the SDK's mcpAuthRouter and requireBearerAuth, approving every sign-in at once). svc shows
 * that it needs a sign-in; Sign in answers the authorization URL; following it as a browser would
 * lands on svc's callback (public, with no key), and the server connects with its tools. Expired
 * tokens are refreshed; revoked ones make it ask again; the state is single use; tokens are stored
 * 0600 and never answered or logged.
 */

let rig: TurnRig;
let remote: McpOAuthFixture;
/** Every response body, to check that no secret was ever answered. */
const answered: string[] = [];
/** Authorization codes svc was sent back with (they must not show anywhere either). */
const codes: string[] = [];
/** Headers that withdraw the loopback exemption: the request is then as a remote browser's. */
const REMOTE = { 'X-Forwarded-For': '203.0.113.9' };

async function api(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await rawApi(rig.port, method, path, body);
  answered.push(JSON.stringify(r.body ?? null));
  return r;
}
const serverOf = async () => (await api('GET', '/api/mcp/servers/secure')).body;
const tokenFile = () => join(rig.server.home, 'mcp-oauth', 'secure.json');
const stored = () => JSON.parse(readFileSync(tokenFile(), 'utf8'));

/** Sign in as the Web UI does; answers the URL the authorization server sent the browser back to. */
async function signIn(): Promise<URL> {
  const start = await api('POST', '/api/mcp/servers/secure/oauth/start', {
    origin: `http://127.0.0.1:${rig.port}`,
  });
  assert.is(start.status, 200, JSON.stringify(start.body));
  const auth = new URL(start.body.authorization_url);
  assert.is(
    auth.origin,
    new URL(remote.url).origin,
    'the browser goes to the authorization server',
  );
  assert.is(
    auth.searchParams.get('redirect_uri'),
    `http://127.0.0.1:${rig.port}/api/mcp/oauth/callback`,
  );
  assert.is(auth.searchParams.get('code_challenge_method'), 'S256');
  assert.ok((auth.searchParams.get('state') ?? '').length >= 40, 'a long random state');
  const res = await fetch(auth, { redirect: 'manual' });
  assert.is(res.status, 302);
  const back = new URL(res.headers.get('location') ?? '');
  codes.push(back.searchParams.get('code') ?? '');
  return back;
}

/** The callback as the browser comes back with it: from "outside", with no key. */
async function callback(url: URL) {
  return http({ port: rig.port, path: `${url.pathname}${url.search}`, headers: REMOTE });
}

let calls = 0;
async function callTool(name: string): Promise<{ content: string }> {
  const id = `oc${++calls}`;
  rig.fake.enqueue(
    {
      parts: [{ toolCall: { id, name, arguments: [JSON.stringify({ text: `call ${calls}` })] } }],
      stop: 'tool_use',
    },
    textReply('done'),
  );
  const chat = await api('POST', '/api/sessions', {});
  const res = await api('POST', `/api/chat/${chat.body.id}/turn?wait=true`, {
    message: 'go',
    attachments: [],
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  for (const r of [...rig.fake.requests].reverse()) {
    const m = (r.body as any).messages?.find(
      (x: any) => x.role === 'tool' && x.tool_call_id === id,
    );
    if (m) return m;
  }
  throw new Error(`no tool result for ${id}`);
}

test.before(async () => {
  remote = await startMcpOAuthServer();
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
  writeFileSync(join(rig.server.home, 'permissions.yml'), 'mcp__secure__*:\n  - allow: {}\n');
});

test.after(async () => {
  await rig?.stop();
  await remote?.close();
});

test('a server that requires OAuth shows that it waits for a sign-in, without retrying', async () => {
  const add = await api('POST', '/api/mcp/servers', { name: 'secure', url: remote.url });
  assert.is(add.status, 201, JSON.stringify(add.body));
  const s = await waitFor(
    async () => ((await serverOf()).needs_auth ? serverOf() : undefined),
    30_000,
    'needs_auth',
  );
  assert.equal([s.status, s.needs_auth, s.tools], ['error', true, []]);
  assert.match(s.error, /wants credentials: use Sign in on the MCP page/);
  assert.is(remote.counts.authorizations, 0, 'no sign-in starts by itself');
  assert.is(remote.counts.registrations, 0, 'no client registers before the user asks');
  assert.not.ok(existsSync(tokenFile()));
});

test('the callback is public but takes only a live state: unknown ones get a page, never a redirect', async () => {
  const guard = await http({ port: rig.port, path: '/api/mcp/servers', headers: REMOTE });
  assert.is(
    guard.status,
    401,
    'the header makes the request a remote one (the key is needed elsewhere)',
  );
  const bad = await http({
    port: rig.port,
    path: '/api/mcp/oauth/callback?state=made-up&code=x',
    headers: REMOTE,
  });
  assert.is(bad.status, 400);
  assert.match(String(bad.headers['content-type']), /^text\/html/);
  assert.is(bad.headers['content-security-policy'], "default-src 'none'");
  assert.is(bad.headers.location, undefined);
  assert.match(bad.text, /unknown, was used already, or is older than 10 minutes/);
  const noState = await http({
    port: rig.port,
    path: '/api/mcp/oauth/callback?code=x',
    headers: REMOTE,
  });
  assert.is(noState.status, 400);
  assert.match(noState.json().error.message, /state/);
});

test('Sign in: the browser goes through the authorization server and back; the server connects with its tools', async () => {
  const back = await signIn();
  assert.is(back.pathname, '/api/mcp/oauth/callback');
  const code = back.searchParams.get('code')!;
  const done = await callback(back);
  assert.is(done.status, 303, done.text);
  assert.is(done.headers.location, '/#/mcp', 'a fixed place in the Web UI');
  assert.is(remote.counts.codeExchanges, 1);
  const s = await waitFor(
    async () => ((await serverOf()).status === 'connected' ? serverOf() : undefined),
    30_000,
    'connected',
  );
  assert.equal([s.needs_auth, s.connected_via], [false, 'streamable_http']);
  assert.ok(s.tools.some((t: any) => t.name === 'echo'));
  assert.is((await callTool('mcp__secure__echo')).content, `oauth echo: call ${calls}`);

  const again = await callback(back);
  assert.is(again.status, 400, 'the state works once');
  assert.not.ok(again.text.includes(code));
  assert.is(remote.counts.codeExchanges, 1);

  // Stored 0600 in a 0700 folder under $SVC_HOME, with the tokens the server issued.
  assert.is(statSync(tokenFile()).mode & 0o777, 0o600);
  assert.is(statSync(join(rig.server.home, 'mcp-oauth')).mode & 0o777, 0o700);
  assert.is(stored().tokens.access_token, remote.issued.at(-2));
});

test('an expired access token is refreshed, and the call goes through', async () => {
  const before = stored().tokens.access_token;
  remote.expireAccessTokens();
  assert.is((await callTool('mcp__secure__echo')).content, `oauth echo: call ${calls}`);
  assert.is(remote.counts.refreshes, 1);
  assert.ok(remote.counts.rejected >= 1, 'the old token was refused first');
  assert.is.not(stored().tokens.access_token, before);
  assert.is((await serverOf()).status, 'connected');
});

test('a refresh that fails for a while (server_error) is retried, not turned into a sign-in', async () => {
  remote.expireAccessTokens();
  remote.failRefresh = true;
  assert.is((await api('POST', '/api/mcp/servers/secure/reconnect')).status, 200);
  const s = await waitFor(
    async () => ((await serverOf()).status === 'error' ? serverOf() : undefined),
    30_000,
    'the error',
  );
  assert.is(s.needs_auth, false);
  assert.match(s.error, /did not refresh the OAuth token/);
  const refreshes = remote.counts.refreshes;
  remote.failRefresh = false;
  await waitFor(
    async () => ((await serverOf()).status === 'connected' ? true : undefined),
    30_000,
    'connected after a retry',
  );
  assert.is(remote.counts.refreshes, refreshes + 1);
  assert.is(remote.counts.authorizations, 1, 'no new sign-in');
});

test('tokens outlive the mcp worker: after kill -9 it reconnects without a new sign-in', async () => {
  const procs = (await api('GET', '/api/status')).body.processes;
  const worker = procs.find((p: any) => p.role === 'mcp');
  process.kill(worker.pid, 'SIGKILL');
  await waitFor(
    async () =>
      (await api('GET', '/api/status')).body.processes.find(
        (p: any) => p.role === 'mcp' && p.pid !== worker.pid && p.pid > 0,
      ),
    30_000,
    'a new mcp worker',
  );
  await waitFor(
    async () => ((await serverOf()).status === 'connected' ? true : undefined),
    30_000,
    'connected again',
  );
  assert.is(remote.counts.authorizations, 1);
});

test('revoked tokens: the server asks for a sign-in again, and an error from the authorization server is shown', async () => {
  remote.revokeAll();
  const rec = await api('POST', '/api/mcp/servers/secure/reconnect');
  assert.is(rec.status, 200, JSON.stringify(rec.body));
  const s = await waitFor(
    async () => ((await serverOf()).needs_auth ? serverOf() : undefined),
    30_000,
    'needs_auth again',
  );
  assert.is(s.status, 'error');
  const start = await api('POST', '/api/mcp/servers/secure/oauth/start', {
    origin: `http://127.0.0.1:${rig.port}`,
  });
  const state = new URL(start.body.authorization_url).searchParams.get('state')!;
  const denied = await http({
    port: rig.port,
    path: `/api/mcp/oauth/callback?state=${encodeURIComponent(state)}&error=access_denied&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E`,
    headers: REMOTE,
  });
  assert.is(denied.status, 400);
  assert.match(denied.text, /did not sign you in to &#34;secure&#34; \(access_denied\)/);
  assert.not.ok(denied.text.includes('<script>'));
  const back = await signIn();
  assert.is((await callback(back)).status, 303);
  await waitFor(
    async () => ((await serverOf()).status === 'connected' ? true : undefined),
    30_000,
    'connected after the new sign-in',
  );
});

test('Sign in is refused with a reason for what cannot sign in', async () => {
  assert.is((await api('POST', '/api/mcp/servers/nope/oauth/start', {})).status, 404);
  const local = await api('POST', '/api/mcp/servers', {
    name: 'local',
    command: process.execPath,
    args: ['-e', ''],
    enabled: false,
  });
  assert.is(local.status, 201);
  const r = await api('POST', '/api/mcp/servers/local/oauth/start', {});
  assert.is(r.status, 409);
  assert.match(r.body.error.message, /local \(stdio\)/);
  const badOrigin = await api('POST', '/api/mcp/servers/secure/oauth/start', {
    origin: 'javascript:alert(1)',
  });
  assert.is(badOrigin.status, 400);
});

test('deleting the server removes its tokens; restored from the trash, it asks for a sign-in again', async () => {
  assert.ok(existsSync(tokenFile()));
  const del = await api('DELETE', '/api/mcp/servers/secure');
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.not.ok(existsSync(tokenFile()), 'the tokens are gone with the server');
  assert.is((await api('POST', `/api/trash/${del.body.trash_id}/restore`, {})).status, 200);
  await waitFor(
    async () => ((await serverOf()).needs_auth ? true : undefined),
    30_000,
    'needs_auth after the restore',
  );
});

test('no token, code or client secret appears in a response or a log', async () => {
  const all = [answered.join('\n'), rig.server.output()];
  const logs = join(rig.server.home, 'logs');
  if (existsSync(logs))
    for (const f of readdirSync(logs)) all.push(readFileSync(join(logs, f), 'utf8'));
  const text = all.join('\n');
  assert.ok(remote.issued.length >= 6);
  for (const t of remote.issued)
    assert.not.ok(text.includes(t), `a token leaked: ${t.slice(0, 3)}…`);
  assert.is(codes.length, 2);
  for (const c of codes) assert.not.ok(text.includes(c), 'an authorization code leaked');
  assert.not.ok(
    rig.server.output().includes('[mcp-sdk]'),
    'the SDK found nothing to warn about in what svc stores',
  );
});

test.run();
