import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNetns, netnsUnavailable, type Netns } from '../helpers/netns.js';
import {
  http,
  removeHome,
  runCli,
  startServer,
  type HttpResult,
  type RunningServer,
} from '../helpers/server.js';
import { skipTest } from '../helpers/skip.js';

/*
 * HEAD on every route answers what GET answers, without the body, and never takes the gateway
 * down: every path of the route table (with made-up ids), static files, unknown paths and /ws,
 * from loopback and, where a network namespace can be made, from a keyless remote client.
 * Written against HTTP only, so it holds for any HTTP engine.
 */

interface Probe {
  path: string;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  error?: string;
}

/** Runs in the namespace: GET then HEAD for each probe, in order; prints the answers as JSON. */
const clientScript = `
const http = require('node:http');
const { host, port, probes } = JSON.parse(process.argv[1]);
const one = (method, p) => new Promise((resolve) => {
  const req = http.request({ host, port, path: p.path, method, headers: { Host: host + ':' + port, Connection: 'close', ...p.headers }, setHost: false, agent: false }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
  });
  req.on('error', (e) => resolve({ status: 0, headers: {}, body: '', error: e.message }));
  req.end();
});
(async () => {
  const out = [];
  for (const p of probes) out.push([await one('GET', p), await one('HEAD', p)]);
  process.stdout.write(JSON.stringify(out));
})();
`;

const reason = netnsUnavailable();
let ns: Netns | undefined;
let server: RunningServer;
let probes: Probe[] = [];

async function gatewayPid(): Promise<number> {
  const r = await runCli(['status', '--json'], { SVC_HOME: server.home });
  assert.is(r.code, 0, r.stderr);
  const gw = (
    JSON.parse(r.stdout).processes as Array<{ role: string; pid: number; state: string }>
  ).find((p) => p.role === 'gateway');
  assert.ok(gw && gw.pid > 0 && gw.state === 'running', `a running gateway in ${r.stdout}`);
  return gw.pid;
}

/** What must hold between the GET and HEAD answers to one probe. */
function same(
  what: string,
  get: Answer | HttpResult,
  head: Answer | HttpResult,
  getBody: string,
): void {
  assert.is(head.status, get.status, `${what}: HEAD status`);
  assert.is(headBody(head), '', `${what}: HEAD has no body`);
  for (const h of [
    'content-type',
    'allow',
    'www-authenticate',
    'location',
    'cache-control',
    'content-security-policy',
  ]) {
    assert.is(head.headers[h], get.headers[h], `${what}: HEAD header ${h}`);
  }
  if (get.status !== 204 && get.status !== 304) {
    const length = Number(head.headers['content-length']);
    assert.ok(Number.isInteger(length), `${what}: HEAD has a Content-Length`);
    // Bodies that hold a clock (status, health) or counters (the Prometheus text of /api/metrics,
    // whose process CPU and request counts move between the two requests) may differ by a digit,
    // and an error message names the method it refused (HEAD, not GET).
    const exact =
      get.status < 400 && !/uptime|_at"|"rss/.test(getBody) && !/^# (HELP|TYPE) /m.test(getBody);
    if (exact)
      assert.is(
        length,
        Buffer.byteLength(getBody),
        `${what}: HEAD Content-Length is the GET body's length`,
      );
  }
}

const headBody = (r: Answer | HttpResult): string => ('body' in r ? r.body : r.text);

test.before(async () => {
  if (reason === undefined) ns = createNetns();
  server = await startServer({
    args: ['--addr', ns ? ':0' : '127.0.0.1:0'],
    env: { SVC_ACCESS_KEY: undefined },
  });
  const doc = (await http({ port: server.port, path: '/api/openapi.json' })).json() as {
    paths: Record<string, unknown>;
  };
  const index = (await http({ port: server.port, path: '/' })).text;
  const asset = /\/assets\/[A-Za-z0-9._-]+\.(?:js|css)/.exec(index)?.[0];
  assert.ok(asset, 'the page names its script');
  probes = [
    ...Object.keys(doc.paths).map((p) => ({ path: p.replace(/\{[^}]+\}/g, 'nope') })),
    { path: '/' },
    { path: '/', headers: { Host: 'evil.example.com' } },
    { path: '/index.html' },
    { path: asset },
    { path: '/favicon.svg' },
    { path: '/chat/some-client-route' },
    { path: '/no-such-file.js' },
    { path: '/api' },
    { path: '/api/no-such-route' },
    { path: '/api/health?x=1' },
    { path: '/ws' },
    { path: `/?access_key=${'0'.repeat(64)}` },
  ];
  assert.ok(probes.length > 30, `the route table has ${probes.length} probes`);
});

test.after(async () => {
  try {
    await server.stop();
    removeHome(server.home);
  } finally {
    ns?.close();
  }
});

test('HEAD from loopback on every route, static file and unknown path: GET status and headers, no body; the gateway lives', async () => {
  const pid = await gatewayPid();
  for (const p of probes) {
    const get = await http({ port: server.port, path: p.path, headers: p.headers });
    const head = await http({
      port: server.port,
      method: 'HEAD',
      path: p.path,
      headers: p.headers,
    });
    same(`HEAD ${p.path}${p.headers ? ' (Host: evil)' : ''}`, get, head, get.text);
  }
  // Uploaded files: a small one answered whole, one past the streaming bound sent from disk.
  for (const size of [1000, 9 * 1024 * 1024]) {
    const boundary = 'headtestboundary';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.alloc(size, 7),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const up = await http({
      port: server.port,
      method: 'POST',
      path: '/api/upload',
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    assert.is(up.status, 201, up.text);
    const url = (up.json() as { files: Array<{ url: string }> }).files[0]!.url;
    const head = await http({ port: server.port, method: 'HEAD', path: url });
    assert.is(head.status, 200, `HEAD ${url}`);
    assert.is(head.text, '');
    assert.is(
      Number(head.headers['content-length']),
      size,
      `HEAD ${url}: Content-Length is the file's size`,
    );
    assert.is(
      head.headers['content-disposition'],
      (await http({ port: server.port, path: url })).headers['content-disposition'],
    );
  }
  // Keep-alive: a HEAD answer must not leave a reused connection waiting for a body.
  const health = await http({
    port: server.port,
    method: 'HEAD',
    path: '/api/health',
    headers: { Connection: 'keep-alive' },
  });
  assert.is(health.status, 200);
  assert.is(await gatewayPid(), pid, 'the same gateway process served every request');
});

const remoteHead =
  'HEAD from a keyless remote client (network namespace) on every path: what GET answers, no body; the gateway lives';
if (reason !== undefined) {
  skipTest(remoteHead, reason);
} else {
  test(remoteHead, async () => {
    const pid = await gatewayPid();
    const r = await ns!.run(
      [
        process.execPath,
        '-e',
        clientScript,
        JSON.stringify({ host: ns!.hostIp, port: server.port, probes }),
      ],
      120_000,
    );
    assert.is(r.code, 0, r.stderr);
    const answers = JSON.parse(r.stdout) as Array<[Answer, Answer]>;
    assert.is(answers.length, probes.length);
    let refused = 0;
    for (const [i, [get, head]] of answers.entries()) {
      const p = probes[i]!;
      assert.is(get.error, undefined, `GET ${p.path}: ${get.error}`);
      assert.is(head.error, undefined, `HEAD ${p.path}: ${head.error}`);
      same(`remote HEAD ${p.path}`, get, head, get.body);
      if (head.status === 401) refused++;
    }
    assert.ok(refused > 20, 'keyed routes refuse the keyless remote client');
    assert.is(
      answers.find((_, i) => probes[i]!.path === '/api/health')![1].status,
      200,
      'the public health route answers',
    );
    assert.is(await gatewayPid(), pid, 'the same gateway process served every request');
  });
}

test.run();
