import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocket } from 'undici';
import {
  http,
  removeHome,
  startServer,
  upgradeStatus,
  waitFor,
  type HttpResult,
  type RunningServer,
} from '../helpers/server.js';

/*
 * The security model (docs/security.md) seen from a client of one real `svc serve`. Every
 * request here comes from 127.0.0.1; a `Host` that is not local (or a forwarding header) is what
 * makes it "not local", exactly as a DNS-rebinding page or a reverse proxy on this machine would.
 * test/e2e/netns.test.ts repeats the key checks from a real non-loopback address.
 */

const ALLOWED = 'https://app.example';
const FOREIGN = 'https://evil.example';
const FORWARDING = [
  'X-Forwarded-For',
  'X-Forwarded-Host',
  'X-Forwarded-Proto',
  'X-Real-IP',
  'Forwarded',
  'Via',
];

let server: RunningServer;
let KEY = '';
/** Every response body and WebSocket frame the tests saw, checked for the key at the end. */
const seen: string[] = [];

const remoteHost = () => ({ Host: `evil.example:${server.port}` });

async function get(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<HttpResult> {
  const res = await http({ port: server.port, method, path, headers });
  seen.push(res.text);
  return res;
}

function assertUnauthorized(res: HttpResult, what: string): void {
  assert.is(res.status, 401, `${what}: status`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: JSON`);
  const body = res.json();
  assert.is(body.error.code, 'unauthorized', `${what}: code`);
  assert.type(body.error.message, 'string');
  assert.match(String(res.headers['www-authenticate']), /^Bearer\b/, `${what}: WWW-Authenticate`);
}

function assertForbiddenOrigin(res: HttpResult, what: string): void {
  assert.is(res.status, 403, `${what}: status`);
  assert.is(res.json().error.code, 'forbidden_origin', `${what}: code`);
  assert.is(res.headers['access-control-allow-origin'], undefined, `${what}: no CORS grant`);
}

test.before(async () => {
  server = await startServer({ args: ['--cors', ALLOWED], env: { SVC_ACCESS_KEY: undefined } });
  KEY = server.key();
  assert.match(KEY, /^[0-9a-f]{64}$/, 'a generated key is 64 hex characters');
});

test.after(async () => {
  if (!server) return;
  await server.stop();
  removeHome(server.home);
});

test('a loopback request with a local Host needs no key', async () => {
  for (const host of [
    `127.0.0.1:${server.port}`,
    `localhost:${server.port}`,
    'localhost',
    `[::1]:${server.port}`,
    `LOCALHOST.:${server.port}`,
  ]) {
    const res = await get('/api/status', { Host: host });
    assert.is(res.status, 200, `Host ${host}`);
    assert.is(res.json().state, 'running', `Host ${host}`);
  }
});

test('a loopback request whose Host is not local gets 401 JSON with WWW-Authenticate', async () => {
  for (const host of [
    'evil.example',
    `evil.example:${server.port}`,
    `0.0.0.0:${server.port}`,
    `localhost.evil.example:${server.port}`,
  ]) {
    assertUnauthorized(await get('/api/status', { Host: host }), `Host ${host}`);
  }
});

test('the key opens a non-local request via Bearer, X-Access-Key or the cookie; a wrong key does not', async () => {
  const ways: Array<[string, (k: string) => Record<string, string>]> = [
    ['Bearer', (k) => ({ Authorization: `Bearer ${k}` })],
    ['X-Access-Key', (k) => ({ 'X-Access-Key': k })],
    ['cookie', (k) => ({ Cookie: `theme=dark; svc_access_key=${k}` })],
  ];
  for (const [name, headers] of ways) {
    const ok = await get('/api/status', { ...remoteHost(), ...headers(KEY) });
    assert.is(ok.status, 200, `${name} with the key`);
    assert.is(ok.json().state, 'running');
    assertUnauthorized(
      await get('/api/status', { ...remoteHost(), ...headers('0'.repeat(64)) }),
      `${name} with a wrong key`,
    );
    assertUnauthorized(
      await get('/api/status', { ...remoteHost(), ...headers(KEY.slice(0, 32)) }),
      `${name} with half the key`,
    );
  }
});

test('each forwarding header withdraws the loopback exemption, even empty; the key still works', async () => {
  for (const h of FORWARDING) {
    assertUnauthorized(await get('/api/status', { [h]: '127.0.0.1' }), `${h}: 127.0.0.1`);
    assertUnauthorized(await get('/api/status', { [h]: '' }), `${h} (empty)`);
    const keyed = await get('/api/status', { [h]: '127.0.0.1', Authorization: `Bearer ${KEY}` });
    assert.is(keyed.status, 200, `${h} with the key`);
    assert.is(
      await upgradeStatus({ port: server.port, headers: { [h]: '127.0.0.1' } }),
      401,
      `/ws with ${h}`,
    );
  }
});

test('?access_key= authenticates /ws but never an /api route', async () => {
  assertUnauthorized(
    await get(`/api/status?access_key=${KEY}`, remoteHost()),
    '/api/status?access_key=',
  );
  assert.is(
    await upgradeStatus({
      port: server.port,
      path: `/ws?access_key=${KEY}`,
      headers: remoteHost(),
    }),
    101,
    '/ws?access_key=KEY',
  );
  assert.is(
    await upgradeStatus({
      port: server.port,
      path: `/ws?access_key=${'0'.repeat(64)}`,
      headers: remoteHost(),
    }),
    401,
    '/ws with a wrong key',
  );
  assert.is(
    await upgradeStatus({ port: server.port, headers: remoteHost() }),
    401,
    '/ws without a key, non-local Host',
  );
  assert.is(
    await upgradeStatus({
      port: server.port,
      headers: { ...remoteHost(), Authorization: `Bearer ${KEY}` },
    }),
    101,
    '/ws with Bearer',
  );
  assert.is(
    await upgradeStatus({
      port: server.port,
      headers: { ...remoteHost(), Cookie: `svc_access_key=${KEY}` },
    }),
    101,
    '/ws with the cookie',
  );
  assert.is(await upgradeStatus({ port: server.port }), 101, '/ws local, no key');
});

test('a foreign Origin gets 403 forbidden_origin on HTTP and on the WebSocket upgrade, even with the key', async () => {
  assertForbiddenOrigin(
    await get('/api/status', { Origin: FOREIGN, Authorization: `Bearer ${KEY}` }),
    'foreign Origin with the key',
  );
  assertForbiddenOrigin(
    await get('/api/status', { Origin: FOREIGN }),
    'foreign Origin, local request',
  );
  assertForbiddenOrigin(
    await get('/api/health', { Origin: FOREIGN }),
    'foreign Origin on a public route',
  );
  assertForbiddenOrigin(
    await get('/api/status', { Origin: 'null', Authorization: `Bearer ${KEY}` }),
    'Origin "null"',
  );
  assertForbiddenOrigin(
    await get('/api/status', { Origin: '*', Authorization: `Bearer ${KEY}` }),
    'Origin "*"',
  );
  assertForbiddenOrigin(await get('/', { Origin: FOREIGN }), 'foreign Origin on a page');
  assert.is(
    await upgradeStatus({
      port: server.port,
      path: `/ws?access_key=${KEY}`,
      headers: { Origin: FOREIGN },
    }),
    403,
    '/ws, foreign Origin, key in the query',
  );
  assert.is(
    await upgradeStatus({
      port: server.port,
      headers: { Origin: FOREIGN, Authorization: `Bearer ${KEY}` },
    }),
    403,
    '/ws, foreign Origin, Bearer',
  );
  assert.is(
    await upgradeStatus({ port: server.port, headers: { Origin: FOREIGN } }),
    403,
    '/ws, foreign Origin, local',
  );
  // A local origin is no stranger: the Web UI served by svc itself sends one.
  const local = await get('/api/status', { Origin: `http://127.0.0.1:${server.port}` });
  assert.is(local.status, 200, 'a local Origin');
  assert.is(
    await upgradeStatus({
      port: server.port,
      headers: { Origin: `http://127.0.0.1:${server.port}` },
    }),
    101,
    "/ws from the page's own origin",
  );
  // Another origin on this machine (a dev server, a page the agent served) may read, but may not
  // open /ws or change anything: WebSockets and no-cors POSTs are outside the browser's CORS rules.
  const other = 'http://localhost:3000';
  assert.is(
    (await get('/api/status', { Origin: other })).status,
    200,
    'another local origin may read',
  );
  assert.is(
    await upgradeStatus({ port: server.port, headers: { Origin: other } }),
    403,
    '/ws from another local origin',
  );
  const post = await http({
    port: server.port,
    method: 'POST',
    path: '/api/trash/empty',
    headers: { Origin: other },
  });
  assert.is(post.status, 403, 'a body-less POST from another local origin');
  assert.is(post.json().error.code, 'forbidden_origin');
});

test('an allowlisted Origin works and gets Access-Control-Allow-Origin echoed with Vary: Origin', async () => {
  const res = await get('/api/status', {
    ...remoteHost(),
    Origin: ALLOWED,
    Authorization: `Bearer ${KEY}`,
  });
  assert.is(res.status, 200);
  assert.is(res.headers['access-control-allow-origin'], ALLOWED);
  assert.match(String(res.headers['vary']), /\bOrigin\b/);
  // Its errors carry the grant too, so the page can read why it was refused.
  const refused = await get('/api/status', { ...remoteHost(), Origin: ALLOWED });
  assertUnauthorized(refused, 'allowlisted Origin without the key');
  assert.is(refused.headers['access-control-allow-origin'], ALLOWED);
  assert.is(
    await upgradeStatus({
      port: server.port,
      path: `/ws?access_key=${KEY}`,
      headers: { ...remoteHost(), Origin: ALLOWED },
    }),
    101,
    '/ws from the allowlisted origin',
  );
  // A local origin that is not on the list may call, but gets no CORS grant.
  const local = await get('/api/status', { Origin: 'http://localhost:3000' });
  assert.is(local.status, 200);
  assert.is(local.headers['access-control-allow-origin'], undefined);
});

test('OPTIONS preflight: 204 with the allowed methods and headers for an allowlisted origin, 403 otherwise', async () => {
  const pre = {
    ...remoteHost(),
    'Access-Control-Request-Method': 'GET',
    'Access-Control-Request-Headers': 'authorization',
  };
  const ok = await get('/api/status', { ...pre, Origin: ALLOWED }, 'OPTIONS');
  assert.is(ok.status, 204, 'preflights carry no credentials, so no key is needed');
  assert.is(ok.headers['access-control-allow-origin'], ALLOWED);
  assert.match(String(ok.headers['access-control-allow-methods']), /\bGET\b/);
  const allowHeaders = String(ok.headers['access-control-allow-headers']).toLowerCase();
  for (const h of ['authorization', 'x-access-key', 'content-type'])
    assert.ok(allowHeaders.includes(h), `Access-Control-Allow-Headers lists ${h}: ${allowHeaders}`);
  assert.is(ok.text, '');
  // RFC 9110 §8.6: no Content-Length on a 204 (a proxy in front rejects a bogus one).
  assert.is(
    ok.headers['content-length'],
    undefined,
    `Content-Length on a 204: ${ok.headers['content-length']}`,
  );
  const restart = await get(
    '/api/restart',
    { ...pre, 'Access-Control-Request-Method': 'POST', Origin: ALLOWED },
    'OPTIONS',
  );
  assert.is(restart.status, 204);
  assert.match(String(restart.headers['access-control-allow-methods']), /\bPOST\b/);
  assertForbiddenOrigin(
    await get('/api/status', { ...pre, Origin: FOREIGN }, 'OPTIONS'),
    'preflight from a foreign origin',
  );
  assertForbiddenOrigin(
    await get('/api/status', { ...pre, Origin: 'null' }, 'OPTIONS'),
    'preflight from "null"',
  );
});

test('an unknown /api path: 401 for a keyless non-local request (the route map stays hidden), 404 no_such_route with the key', async () => {
  assertUnauthorized(await get('/api/no-such-thing', remoteHost()), 'unknown path, no key');
  assertUnauthorized(
    await get('/api/no-such-thing/deeper', remoteHost(), 'DELETE'),
    'unknown path, DELETE, no key',
  );
  const keyed = await get('/api/no-such-thing', { ...remoteHost(), 'X-Access-Key': KEY });
  assert.is(keyed.status, 404);
  assert.is(keyed.json().error.code, 'no_such_route');
  const local = await get('/api/no-such-thing');
  assert.is(local.status, 404, 'a local request sees the 404 without a key');
  assert.is(local.json().error.code, 'no_such_route');
});

test('a wrong method: 405 method_not_allowed with Allow (after the key check)', async () => {
  const post = await get(
    '/api/status',
    { ...remoteHost(), Authorization: `Bearer ${KEY}`, 'Content-Length': '0' },
    'POST',
  );
  assert.is(post.status, 405);
  assert.is(post.json().error.code, 'method_not_allowed');
  assert.is(post.headers['allow'], 'GET');
  const getRestart = await get('/api/restart', { ...remoteHost(), Authorization: `Bearer ${KEY}` });
  assert.is(getRestart.status, 405);
  assert.is(getRestart.headers['allow'], 'POST');
  assertUnauthorized(
    await get('/api/status', { ...remoteHost(), 'Content-Length': '0' }, 'POST'),
    'wrong method without the key',
  );
});

test('/api/health and /api/version need no key from anywhere and carry no secrets', async () => {
  for (const path of ['/api/health', '/api/version']) {
    for (const headers of [
      remoteHost(),
      { ...remoteHost(), 'X-Forwarded-For': '203.0.113.7' },
      { Host: `localhost:${server.port}` },
    ]) {
      const res = await get(path, headers);
      assert.is(res.status, 200, `${path} with ${JSON.stringify(headers)}`);
      assert.not.ok(res.text.includes(KEY), `${path} body contains the key`);
      assert.not.ok(res.text.includes(server.home), `${path} body contains SVC_HOME`);
    }
  }
  assert.is((await get('/api/health', remoteHost())).json().status, 'ok');
  const version = (await get('/api/version', remoteHost())).json();
  assert.type(version.version, 'string');
  assert.is(version.local, false);
  assert.is((await get('/api/version')).json().local, true);
});

function cookieFrom(res: HttpResult): string | undefined {
  const raw = res.headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.find((c) => c.startsWith('svc_access_key='));
}

test('/?access_key=<key> trades the key for an HttpOnly SameSite=Strict cookie and strips it from the address', async () => {
  const res = await get(`/?access_key=${KEY}`, remoteHost());
  assert.is(res.status, 302);
  assert.is(res.headers['location'], '/');
  assert.is(res.headers['referrer-policy'], 'no-referrer');
  assert.match(String(res.headers['cache-control']), /no-store/);
  const setCookie = cookieFrom(res);
  assert.ok(
    setCookie,
    `a Set-Cookie for svc_access_key: ${JSON.stringify(res.headers['set-cookie'])}`,
  );
  const [pair, ...attrs] = setCookie.split(';').map((s) => s.trim());
  const attributes = attrs.map((a) => a.toLowerCase());
  assert.ok(attributes.includes('httponly'), setCookie);
  assert.ok(attributes.includes('samesite=strict'), setCookie);
  assert.ok(attributes.includes('path=/'), setCookie);
  assert.ok(pair, setCookie);
  assert.is(decodeURIComponent(pair.slice('svc_access_key='.length)), KEY);
  // The browser now sends the cookie back: a non-local request is authenticated by it alone.
  const withCookie = await get('/api/status', { ...remoteHost(), Cookie: pair });
  assert.is(withCookie.status, 200);
  assert.is(
    await upgradeStatus({ port: server.port, headers: { ...remoteHost(), Cookie: pair } }),
    101,
  );
  // Other query parameters survive; only the key goes.
  const kept = await get(`/?tab=tasks&access_key=${KEY}`, remoteHost());
  assert.is(kept.status, 302);
  assert.is(kept.headers['location'], '/?tab=tasks');
});

test('a wrong key on the page: 302 without a cookie and without the key in Location', async () => {
  const wrong = 'f'.repeat(64);
  const res = await get(`/?access_key=${wrong}`, remoteHost());
  assert.is(res.status, 302);
  assert.is(cookieFrom(res), undefined);
  const location = String(res.headers['location']);
  assert.ok(location.startsWith('/'), location);
  assert.not.ok(location.includes('access_key'), location);
  assert.not.ok(location.includes(wrong), location);
});

test('the key exchange never redirects to another site', async () => {
  // "//host" and "/\host" in Location are read by browsers as another host.
  for (const path of ['//evil.example/x', '/\\evil.example/x', '//evil.example']) {
    for (const key of [KEY, 'f'.repeat(64)]) {
      const res = await get(`${path}?access_key=${key}`, remoteHost());
      assert.is(res.status, 302, path);
      const location = String(res.headers['location']);
      const target = new URL(location, `http://127.0.0.1:${server.port}/`);
      assert.is(target.host, `127.0.0.1:${server.port}`, `${path} redirects to ${location}`);
      assert.not.ok(location.includes(key), location);
    }
  }
});

// ---------------------------------------------------------------------------------------------

interface Client {
  ws: WebSocket;
  frames: any[];
  next: (pred: (f: any) => boolean, what: string) => Promise<any>;
}

function connect(url: string, headers?: Record<string, string>): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = headers ? new WebSocket(url, { headers }) : new WebSocket(url);
    const frames: any[] = [];
    ws.addEventListener('message', (e) => {
      seen.push(String(e.data));
      frames.push(JSON.parse(String(e.data)));
    });
    ws.addEventListener('open', () =>
      resolve({
        ws,
        frames,
        next: (pred, what) => waitFor(() => frames.find(pred), 5000, what),
      }),
    );
    ws.addEventListener('error', () => reject(new Error(`WebSocket ${url} failed to open`)));
  });
}

test('WebSocket: hello frame, subscribe, and a malformed frame answered without closing', async () => {
  const version = (await get('/api/version')).json().version;
  const c = await connect(`ws://127.0.0.1:${server.port}/ws`);
  let closed = false;
  c.ws.addEventListener('close', () => (closed = true));
  try {
    const hello = await c.next((f) => f.type === 'hello', 'the hello frame');
    assert.is(c.frames[0], hello, 'hello is the first frame');
    assert.equal(hello, {
      topic: 'server',
      type: 'hello',
      seq: 0,
      data: { version, epoch: hello.data.epoch, local: true },
    });
    assert.match(hello.data.epoch, /^[0-9a-f-]{36}$/);

    c.ws.send(JSON.stringify({ type: 'subscribe', topics: ['server'] }));
    const sub = await c.next((f) => f.type === 'subscribed', 'subscribed');
    assert.equal(sub.topics, ['server']);
    assert.type(sub.seq.server, 'number');
    assert.is(sub.epoch, hello.data.epoch);

    c.ws.send('this is not json');
    const err = await c.next((f) => f.type === 'error', 'an error frame');
    assert.is(err.error.code, 'invalid_request');
    c.ws.send(JSON.stringify({ type: 'subscribe', topics: ['../etc'] }));
    await waitFor(
      () => c.frames.filter((f) => f.type === 'error').length >= 2,
      5000,
      'a second error frame',
    );

    // Still open and still answering.
    c.ws.send(JSON.stringify({ type: 'ping' }));
    await c.next((f) => f.type === 'pong', 'pong after the malformed frames');
    assert.is(c.ws.readyState, WebSocket.OPEN);
    assert.not.ok(closed, 'the server closed the connection');
  } finally {
    c.ws.close();
  }
});

test('WebSocket: a keyed connection through a proxy is not local; a foreign Origin cannot connect', async () => {
  const c = await connect(`ws://127.0.0.1:${server.port}/ws`, {
    Authorization: `Bearer ${KEY}`,
    'X-Forwarded-For': '203.0.113.9',
  });
  try {
    const hello = await c.next((f) => f.type === 'hello', 'the hello frame');
    assert.is(hello.data.local, false);
  } finally {
    c.ws.close();
  }
  let refused = false;
  try {
    const bad = await connect(`ws://127.0.0.1:${server.port}/ws?access_key=${KEY}`, {
      Origin: FOREIGN,
    });
    bad.ws.close();
  } catch {
    refused = true;
  }
  assert.ok(refused, 'a WebSocket from a foreign Origin opened');
  let keyless = false;
  try {
    const bad = await connect(`ws://127.0.0.1:${server.port}/ws`, { 'X-Real-IP': '203.0.113.9' });
    bad.ws.close();
  } catch {
    keyless = true;
  }
  assert.ok(keyless, 'a proxied WebSocket without the key opened');
});

test('a "*" in the CORS list, however it is spelled, grants nothing and is warned about', async () => {
  const other = await startServer({
    args: ['--cors', '*/', '--cors', ' * ', '--cors', ALLOWED],
    env: { SVC_ACCESS_KEY: undefined },
  });
  try {
    const port = other.port;
    const key = other.key();
    const star = await http({
      port,
      path: '/api/status',
      headers: { Origin: '*', Authorization: `Bearer ${key}` },
    });
    assertForbiddenOrigin(star, 'Origin "*"');
    const preflight = await http({
      port,
      method: 'OPTIONS',
      path: '/api/status',
      headers: { Origin: '*', 'Access-Control-Request-Method': 'GET' },
    });
    assertForbiddenOrigin(preflight, 'preflight from "*"');
    const foreign = await http({ port, path: '/api/status', headers: { Origin: FOREIGN } });
    assertForbiddenOrigin(foreign, '"*" is no wildcard');
    const allowed = await http({ port, path: '/api/status', headers: { Origin: ALLOWED } });
    assert.is(allowed.status, 200, 'the real entry still works');
    assert.is(allowed.headers['access-control-allow-origin'], ALLOWED);
    await waitFor(() => /"\*" is ignored/.test(other.output()), 5000, 'the warning about "*"');
  } finally {
    await other.stop();
    removeHome(other.home);
  }
});

test('the key never appears in any response body, frame, or the server output', async () => {
  assert.ok(seen.length > 50, `only ${seen.length} responses were checked`);
  for (const text of seen)
    assert.not.ok(text.includes(KEY), `a response contains the key: ${text.slice(0, 200)}`);
  const out = server.output();
  assert.ok(out.includes('listening on'), 'the output was captured');
  assert.not.ok(out.includes(KEY), 'the server output contains the key');
});

test.run();
