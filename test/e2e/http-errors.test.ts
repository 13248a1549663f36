import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  http,
  removeHome,
  runCli,
  startServer,
  type HttpResult,
  type RunningServer,
} from '../helpers/server.js';

const LIMIT = 1024;
let server: RunningServer;
let gatewayPid: number;

async function statusJson(home: string): Promise<any> {
  const r = await runCli(['status', '--json'], { SVC_HOME: home });
  assert.is(r.code, 0, `svc status --json failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const gatewayOf = (status: any) =>
  (status.processes as Array<{ role: string; pid: number; restarts: number }>).find(
    (p) => p.role === 'gateway',
  );

/** Asserts the JSON error shape of docs/api.md#errors: {"error":{"code","message"[,"details"]}} and nothing else. */
function assertError(
  res: { status: number; headers: Record<string, unknown>; text: string },
  status: number,
  code: string,
): any {
  assert.is(res.status, status, `status for ${code}: ${res.text}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = JSON.parse(res.text);
  assert.equal(Object.keys(body), ['error'], 'only an "error" member');
  assert.is(body.error.code, code);
  assert.type(body.error.message, 'string');
  assert.ok(body.error.message.length > 10, 'a sentence a person can act on');
  for (const k of Object.keys(body.error))
    assert.ok(['code', 'message', 'details'].includes(k), `unexpected error member ${k}`);
  return body;
}

/**
 * Writes a request byte for byte (so Content-Length can lie and chunked framing is ours) and reads
 * one response: headers plus Content-Length bytes, or until the server closes.
 */
function raw(
  port: number,
  head: string[],
  chunks: Array<string | Buffer>,
): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    sock.setTimeout(5000, () => sock.destroy()); // a stuck answer fails the test instead of hanging it
    let buf = Buffer.alloc(0);
    let settled = false;
    const finish = () => {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? NaN);
      if (Number.isNaN(length) || buf.length < end + 4 + length) return false;
      settled = true;
      sock.destroy();
      resolve({
        status: Number(lines[0]!.split(' ')[1]),
        headers,
        text: buf.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
      return true;
    };
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      finish();
    });
    sock.on('error', (err) => {
      if (!settled && !finish()) reject(err);
    });
    sock.on('close', () => {
      if (!settled && !finish())
        reject(
          new Error(
            `connection closed without a full response: ${buf.toString('latin1').slice(0, 200)}`,
          ),
        );
    });
    sock.on('connect', () => {
      sock.write(head.join('\r\n') + '\r\n\r\n');
      for (const c of chunks) sock.write(c);
    });
  });
}

function post(
  body: string | Buffer,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
): Promise<HttpResult> {
  return http({ port: server.port, method: 'POST', path: '/api/restart', headers, body });
}

test.before(async () => {
  server = await startServer({ config: `limits:\n  json_body_bytes: ${LIMIT}\n` });
  const status = await statusJson(server.home);
  gatewayPid = gatewayOf(status)!.pid;
  assert.ok(gatewayPid > 0);
});

test.after(async () => {
  await server?.stop();
  if (server) removeHome(server.home);
});

test('a 2 KiB JSON body is refused with 413 too_large', async () => {
  const body = JSON.stringify({ reason: 'x'.repeat(2048) });
  const res = await post(body);
  const err = assertError(res, 413, 'too_large');
  assert.match(err.error.message, String(LIMIT), 'the message names the limit');
});

test('a Content-Length bigger than the limit is refused with 413 before the body arrives', async () => {
  const res = await raw(
    server.port,
    [
      'POST /api/restart HTTP/1.1',
      `Host: 127.0.0.1:${server.port}`,
      'Content-Type: application/json',
      `Content-Length: ${100 * LIMIT}`,
    ],
    ['{"reason":"'],
  );
  assertError(res, 413, 'too_large');
});

test('a chunked body (no Content-Length) over the limit is refused with 413', async () => {
  const piece = 'y'.repeat(512);
  const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  const res = await raw(
    server.port,
    [
      'POST /api/restart HTTP/1.1',
      `Host: 127.0.0.1:${server.port}`,
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
    ],
    [
      chunk('{"reason":"'),
      chunk(piece),
      chunk(piece),
      chunk(piece),
      chunk(piece),
      chunk('"}'),
      '0\r\n\r\n',
    ],
  );
  assertError(res, 413, 'too_large');
});

test('a small chunked body is read and validated (the 413 above was about size)', async () => {
  const res = await raw(
    server.port,
    [
      'POST /api/restart HTTP/1.1',
      `Host: 127.0.0.1:${server.port}`,
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
      'Connection: close',
    ],
    ['5\r\n{"rea\r\n', '0\r\n\r\n'],
  );
  assertError(res, 400, 'invalid_request');
});

test('malformed JSON is refused with 400 invalid_request', async () => {
  const res = await post('{"reason": "half');
  const err = assertError(res, 400, 'invalid_request');
  assert.match(err.error.message, /JSON/);
});

test('a body that fails the schema is refused with 400 and details', async () => {
  for (const [body, path] of [
    ['{"reason": 5}', 'reason'],
    ['{"reason": "ok", "bogus": true}', ''],
    ['[1, 2]', ''],
  ] as const) {
    const res = await post(body);
    const err = assertError(res, 400, 'invalid_request');
    assert.ok(
      Array.isArray(err.error.details) && err.error.details.length > 0,
      `${body}: details list the problems`,
    );
    const d = err.error.details[0];
    assert.type(d.message, 'string');
    assert.is(d.path, path, `${body}: the path of the problem`);
    if (body.includes('bogus'))
      assert.match(JSON.stringify(err.error.details), 'bogus', 'the unknown field is named');
  }
});

test('a non-JSON content type is refused with 415', async () => {
  const res = await post('reason=please', { 'Content-Type': 'text/plain' });
  assertError(res, 415, 'unsupported_media_type');
  const form = await post('reason=please', { 'Content-Type': 'application/x-www-form-urlencoded' });
  assertError(form, 415, 'unsupported_media_type');
});

test('a URL over 8 KiB is answered 414 uri_too_long, up to the 64 kB the issue sent; one at the limit is served', async () => {
  const get = (url: string) =>
    raw(
      server.port,
      [`GET ${url} HTTP/1.1`, `Host: 127.0.0.1:${server.port}`, 'Connection: close'],
      [],
    );
  const prefix = '/api/sessions?q=';
  const at = await get(prefix + 'a'.repeat(8192 - prefix.length));
  assert.is(at.status, 200, at.text);
  // uWebSockets.js (v20.30) takes a head past 4 KB only when one read brings it whole, and resets
  // the connection without a word when it comes in pieces (README, error codes); on a loaded
  // machine a 20 kB head sometimes does. So on uWS a reset is tried again, a few times; node:http
  // reads in pieces and must answer every time.
  const uws = /engine: uWebSockets\.js/.test(server.output());
  const answer = async (url: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await get(url);
      } catch (err) {
        if (!uws || attempt === 5 || (err as NodeJS.ErrnoException).code !== 'ECONNRESET')
          throw err;
      }
    }
  };
  for (const n of [8193 - prefix.length, 20_000, 64 * 1024]) {
    const body = assertError(await answer(prefix + 'a'.repeat(n)), 414, 'uri_too_long');
    assert.match(body.error.message, /longer than 8192 bytes/);
  }
});

test('after all of that the server still answers and the gateway never restarted', async () => {
  const health = await http({ port: server.port, path: '/api/health' });
  assert.is(health.status, 200);
  assert.is(health.json().status, 'ok');
  const status = await statusJson(server.home);
  assert.is(status.state, 'running');
  assert.is(status.restarts, 0, 'no restart was triggered by a refused request');
  const gateway = gatewayOf(status)!;
  assert.is(gateway.pid, gatewayPid, 'the same gateway process');
  assert.is(gateway.restarts, 0, 'the gateway never crashed');
});

test.run();
