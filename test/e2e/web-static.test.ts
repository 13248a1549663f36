import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadUws } from '../../src/shared/engine-choice.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

/*
 * The Web UI's files on the wire, on both HTTP engines: the build's brotli and gzip copies are
 * sent to a client that takes them (by Accept-Encoding, q=0 refused), the plain file otherwise,
 * always with `Vary: Accept-Encoding`; the hashed files keep their year-long immutable caching.
 */

// uWS only where its native binary loads (Node 20); the node engine everywhere.
const uws = loadUws();
if ('error' in uws) console.log(`the uws engine's cases are left out: ${uws.error}`);
const engines: Array<'uws' | 'node'> = 'error' in uws ? ['node'] : ['uws', 'node'];
const servers: Partial<Record<'uws' | 'node', RunningServer>> = {};
let server: RunningServer;

function get(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method,
        headers: { Connection: 'close', ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test.before(async () => {
  for (const engine of engines)
    servers[engine] = await startServer({ env: { SVC_HTTP_ENGINE: engine } });
});
test.after(async () => {
  for (const s of Object.values(servers)) {
    await s.stop();
    removeHome(s.home);
  }
});

for (const engine of engines) {
  test(`${engine}: the app JavaScript and CSS arrive compressed, each encoding decoding to the same file, with Vary`, async () => {
    server = servers[engine]!;
    const page = (await get('/')).body.toString('utf8');
    const assets = [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map(
      (m) => m[1]!,
    );
    assert.is(assets.length, 2, `the page names its script and stylesheet: ${page}`);
    for (const path of assets) {
      const plain = await get(path);
      assert.is(plain.status, 200);
      assert.is(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: the plain file');
      assert.is(plain.headers.vary, 'Accept-Encoding');
      assert.is(plain.headers['cache-control'], 'public, max-age=31536000, immutable');

      const br = await get(path, { 'Accept-Encoding': 'gzip, deflate, br' });
      assert.is(br.headers['content-encoding'], 'br', path);
      assert.is(br.headers.vary, 'Accept-Encoding');
      assert.is(br.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.ok(
        br.body.length < plain.body.length / 2.5,
        `${path}: ${br.body.length} of ${plain.body.length} bytes`,
      );
      assert.ok(brotliDecompressSync(br.body).equals(plain.body), 'brotli decodes to the file');

      const gz = await get(path, { 'Accept-Encoding': 'gzip' });
      assert.is(gz.headers['content-encoding'], 'gzip');
      assert.ok(
        gz.body.length < plain.body.length / 2,
        `${path}: ${gz.body.length} of ${plain.body.length} bytes`,
      );
      assert.ok(gunzipSync(gz.body).equals(plain.body), 'gzip decodes to the file');

      const refused = await get(path, { 'Accept-Encoding': 'br;q=0, gzip;q=0.5' });
      assert.is(refused.headers['content-encoding'], 'gzip', 'q=0 refuses brotli');
      const none = await get(path, { 'Accept-Encoding': 'identity' });
      assert.is(none.headers['content-encoding'], undefined);
      assert.ok(none.body.equals(plain.body));
    }
  });

  test(`${engine}: the page itself is compressed too and keeps its security headers and no-cache`, async () => {
    server = servers[engine]!;
    const r = await get('/', { 'Accept-Encoding': 'br' });
    assert.is(r.headers['content-encoding'], 'br');
    assert.is(r.headers.vary, 'Accept-Encoding');
    assert.is(r.headers['cache-control'], 'no-cache');
    assert.match(String(r.headers['content-security-policy']), /script-src 'self'/);
    assert.match(brotliDecompressSync(r.body).toString('utf8'), /<div id="app">/);
    const app = await get('/#/chat', { 'Accept-Encoding': 'gzip' });
    assert.match(gunzipSync(app.body).toString('utf8'), /<div id="app">/);
  });

  test(`${engine}: the precompressed copies are not files of their own`, async () => {
    server = servers[engine]!;
    const page = (await get('/')).body.toString('utf8');
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1]!;
    const r = await get(`${js}.br`);
    assert.is(r.status, 404);
  });
}

test.run();
