import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNetns, netnsUnavailable, type Netns } from '../helpers/netns.js';
import { http, removeHome, startServer, waitFor, type RunningServer } from '../helpers/server.js';
import { skipFile } from '../helpers/skip.js';

/*
 * The key checks from a real non-loopback peer: the server binds to the host end of a veth pair
 * and the client runs inside a network namespace, so the socket address is genuinely remote.
 */

interface Req {
  path: string;
  method?: string;
  headers?: Record<string, string>;
  upgrade?: boolean;
}

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  error?: string;
}

/** Runs in the namespace: performs the requests in order and prints their results as JSON. */
const clientScript = `
const http = require('node:http');
const { host, port, reqs } = JSON.parse(process.argv[1]);
const upgradeHeaders = { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' };
const one = (r) => new Promise((resolve) => {
  const headers = { Host: host + ':' + port, ...(r.upgrade ? upgradeHeaders : { Connection: 'close' }), ...r.headers };
  const req = http.request({ host, port, path: r.path, method: r.method || 'GET', headers, setHost: false, agent: false }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
  });
  req.on('upgrade', (res, socket) => { socket.destroy(); resolve({ status: res.statusCode, headers: res.headers, body: '' }); });
  req.on('error', (e) => resolve({ status: 0, headers: {}, body: '', error: e.message }));
  req.end();
});
(async () => {
  const out = [];
  for (const r of reqs) out.push(await one(r));
  process.stdout.write(JSON.stringify(out));
})();
`;

const reason = netnsUnavailable();

if (reason !== undefined) {
  skipFile(reason);
} else {
  let ns: Netns | undefined;
  let server: RunningServer | undefined;
  let KEY = '';

  const fromNs = async (reqs: Req[]): Promise<Res[]> => {
    const r = await ns!.run([
      process.execPath,
      '-e',
      clientScript,
      JSON.stringify({ host: ns!.hostIp, port: server!.port, reqs }),
    ]);
    assert.is(r.code, 0, `the client in the namespace failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as Res[];
    for (const [i, res] of out.entries())
      assert.is(res.error, undefined, `${reqs[i]?.path}: ${res.error}`);
    return out;
  };
  const one = async (req: Req): Promise<Res> => (await fromNs([req]))[0]!;

  test.before(async () => {
    ns = createNetns();
    try {
      server = await startServer({
        args: ['--addr', `${ns.hostIp}:0`],
        env: { SVC_ACCESS_KEY: undefined },
      });
      KEY = server.key();
    } catch (err) {
      ns.close();
      ns = undefined;
      throw err;
    }
  });

  test.after(async () => {
    try {
      if (server) {
        await server.stop();
        removeHome(server.home);
      }
    } finally {
      ns?.close();
    }
  });

  test('a non-loopback bind prints the ready-to-open address with the key', async () => {
    const line = `Open http://${ns!.hostIp}:${server!.port}/?access_key=${KEY}`;
    await waitFor(() => server!.output().includes(line), 5000, `"${line}" in the output`);
  });

  test('the client in the namespace is a real non-loopback peer', async () => {
    const res = await one({ path: '/api/version' });
    assert.is(res.status, 200);
    assert.is(JSON.parse(res.body).local, false);
  });

  test('a protected route needs the key from a remote peer; Bearer, X-Access-Key and the cookie work', async () => {
    const [none, localHost, forwarded, wrong, query, bearer, header, cookie] = await fromNs([
      { path: '/api/status' },
      { path: '/api/status', headers: { Host: 'localhost' } },
      {
        path: '/api/status',
        headers: { Host: `127.0.0.1:${server!.port}`, 'X-Forwarded-For': '127.0.0.1' },
      },
      { path: '/api/status', headers: { Authorization: `Bearer ${'0'.repeat(64)}` } },
      { path: `/api/status?access_key=${KEY}` },
      { path: '/api/status', headers: { Authorization: `Bearer ${KEY}` } },
      { path: '/api/status', headers: { 'X-Access-Key': KEY } },
      { path: '/api/status', headers: { Cookie: `svc_access_key=${KEY}` } },
    ]);
    for (const [name, res] of [
      ['no key', none],
      ['Host: localhost', localHost],
      ['X-Forwarded-For: 127.0.0.1', forwarded],
      ['a wrong key', wrong],
      ['?access_key on /api', query],
    ] as const) {
      assert.is(res!.status, 401, name);
      assert.is(JSON.parse(res!.body).error.code, 'unauthorized', name);
      assert.match(String(res!.headers['www-authenticate']), /^Bearer/, name);
    }
    for (const [name, res] of [
      ['Bearer', bearer],
      ['X-Access-Key', header],
      ['cookie', cookie],
    ] as const) {
      assert.is(res!.status, 200, name);
      assert.is(JSON.parse(res!.body).state, 'running', name);
    }
  });

  test('the page exchange works from a remote browser: the cookie it sets authenticates', async () => {
    const exchange = await one({ path: `/?access_key=${KEY}` });
    assert.is(exchange.status, 302);
    assert.is(exchange.headers['location'], '/');
    const raw = exchange.headers['set-cookie'];
    const setCookie = (Array.isArray(raw) ? raw : [String(raw)]).find((c) =>
      c.startsWith('svc_access_key='),
    );
    assert.ok(setCookie, 'a Set-Cookie for svc_access_key');
    assert.match(setCookie, /;\s*HttpOnly/i);
    assert.match(setCookie, /;\s*SameSite=Strict/i);
    const pair = setCookie.split(';')[0]!;
    assert.is((await one({ path: '/api/status', headers: { Cookie: pair } })).status, 200);
  });

  test('/api/health and /api/version need no key from a remote peer', async () => {
    const [health, version] = await fromNs([{ path: '/api/health' }, { path: '/api/version' }]);
    assert.is(health!.status, 200);
    assert.is(JSON.parse(health!.body).status, 'ok');
    assert.is(version!.status, 200);
    for (const res of [health!, version!]) {
      assert.not.ok(res.body.includes(KEY));
      assert.not.ok(res.body.includes(server!.home));
    }
  });

  test('an unknown /api path from a keyless remote peer is 401, not 404 (the route map is not leaked)', async () => {
    const [unknown, keyed] = await fromNs([
      { path: '/api/definitely-not-a-route' },
      { path: '/api/definitely-not-a-route', headers: { Authorization: `Bearer ${KEY}` } },
    ]);
    assert.is(unknown!.status, 401);
    assert.is(JSON.parse(unknown!.body).error.code, 'unauthorized');
    assert.is(keyed!.status, 404);
    assert.is(JSON.parse(keyed!.body).error.code, 'no_such_route');
  });

  test('/ws from a remote peer: 401 without the key, 101 with ?access_key=', async () => {
    const [none, wrong, query, bearer] = await fromNs([
      { path: '/ws', upgrade: true },
      { path: `/ws?access_key=${'0'.repeat(64)}`, upgrade: true },
      { path: `/ws?access_key=${KEY}`, upgrade: true },
      { path: '/ws', upgrade: true, headers: { Authorization: `Bearer ${KEY}` } },
    ]);
    assert.is(none!.status, 401, 'no key');
    assert.is(wrong!.status, 401, 'a wrong key');
    assert.is(query!.status, 101, '?access_key=KEY');
    assert.is(bearer!.status, 101, 'Bearer');
  });

  test('the key is printed once, in the Open line, and nowhere else in the output', () => {
    const out = server!.output();
    assert.is(
      out.split(KEY).length - 1,
      1,
      `the key appears ${out.split(KEY).length - 1} times in the output`,
    );
  });

  test('bound to every interface (dual-stack, IPv4 peers seen as ::ffff:a.b.c.d): 127.0.0.1 is local, the namespace is not', async () => {
    const all = await startServer({ args: ['--addr', ':0'], env: { SVC_ACCESS_KEY: undefined } });
    try {
      const key = all.key();
      await waitFor(
        () => new RegExp(`Open http://\\S+:${all.port}/\\?access_key=${key}`).test(all.output()),
        5000,
        'the Open line',
      );
      const localStatus = await http({ port: all.port, path: '/api/status' });
      assert.is(localStatus.status, 200, 'a keyless request from 127.0.0.1 with a local Host');
      assert.is((await http({ port: all.port, path: '/api/version' })).json().local, true);
      const r = await ns!.run([
        process.execPath,
        '-e',
        clientScript,
        JSON.stringify({
          host: ns!.hostIp,
          port: all.port,
          reqs: [
            { path: '/api/status' },
            { path: '/api/status', headers: { Host: 'localhost' } },
            { path: '/api/version' },
            { path: '/api/status', headers: { 'X-Access-Key': key } },
          ],
        }),
      ]);
      assert.is(r.code, 0, r.stderr);
      const [none, localHost, version, keyed] = JSON.parse(r.stdout) as Res[];
      assert.is(none!.status, 401, 'remote, no key');
      assert.is(localHost!.status, 401, 'remote with Host: localhost');
      assert.is(JSON.parse(version!.body).local, false);
      assert.is(keyed!.status, 200, 'remote with the key');
    } finally {
      await all.stop();
      removeHome(all.home);
    }
  });
}

test.run();
