import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { htmlToText } from '../../src/workers/agent/tools/web/html-text.js';
import { webTools } from '../../src/workers/agent/tools/index.js';
import { blockedAddressReason } from '../../src/workers/agent/tools/web/net-guard.js';
import { ToolRegistry, type ToolContext } from '../../src/workers/agent/tools/registry.js';
import { fetchUrl, type FetchOptions } from '../../src/workers/agent/tools/web/web-fetch-core.js';
import { makeWebFetchTool } from '../../src/workers/agent/tools/web/web-fetch.js';
import { rejection } from '../helpers/rejects.js';

let server: Server;
let base = '';
let hits: string[] = [];
const home = mkdtempSync(join(tmpdir(), 'svc-tools-web-'));
const paths = resolvePaths({ SVC_HOME: home });
mkdirSync(paths.home, { recursive: true });
const db: Db = openAndMigrate(paths.db).db;

const PAGE = `<!doctype html><html><head><title>Test &amp; Page</title><style>body{color:red}</style>
<script>var x = "<p>not text</p>";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About</a></nav>
<h1>Main  heading</h1>
<p>First paragraph with <a href="/docs/intro">a link</a> and &lt;escaped&gt; &quot;entities&quot; &#169; &#x1F600;.</p>
<ul><li>one</li><li>two <b>bold</b></li></ul>
<ol><li>first</li><li>second</li></ol>
<h2>Sub</h2><p>Line<br>break</p>
<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>
<pre>  keep
    spacing</pre>
<!-- a comment -->
<footer><a href="javascript:void(0)">js link</a></footer>
</body></html>`;

test.before(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const p = url.pathname;
    if (p === '/html')
      return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    if (p === '/json')
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"a":1,"b":[true,null]}');
    if (p.startsWith('/hop/')) {
      const n = Number(p.slice(5));
      if (n === 0) return void res.writeHead(200, { 'content-type': 'text/plain' }).end('arrived');
      return void res.writeHead(302, { location: `/hop/${n - 1}` }).end();
    }
    if (p === '/to-metadata')
      return void res
        .writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
        .end();
    if (p === '/to-private-name')
      return void res
        .writeHead(301, { location: `http://internal.test:${url.searchParams.get('port')}/html` })
        .end();
    if (p === '/to-file') return void res.writeHead(302, { location: 'file:///etc/passwd' }).end();
    if (p === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 100; i++) res.write(chunk); // 6.25 MiB
      return void res.end();
    }
    if (p === '/slow') return; // never answers
    if (p === '/gzip')
      return void res
        .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        .end(gzipSync('compressed hello'));
    if (p === '/png')
      return void res
        .writeHead(200, { 'content-type': 'image/png' })
        .end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]));
    if (p === '/missing')
      return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    if (p === '/latin1')
      return void res
        .writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' })
        .end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  db.close();
  rmSync(home, { recursive: true, force: true });
});

const never = new AbortController().signal;
/** Loopback allowed, as the test server needs; everything else as in production. */
const local = (url: string, more: Partial<FetchOptions> = {}) =>
  fetchUrl(url, { maxChars: 20_000, signal: never, allowLoopback: true, ...more });
/** Exactly what the model gets. */
const prod = (url: string, more: Partial<FetchOptions> = {}) =>
  fetchUrl(url, { maxChars: 20_000, signal: never, ...more });

test('HTML to readable text', () => {
  const text = htmlToText(PAGE, 'https://example.com/dir/page.html');
  assert.ok(text.startsWith('Title: Test & Page\n\n# Main heading'), text.slice(0, 60));
  assert.match(
    text,
    /First paragraph with a link \(https:\/\/example\.com\/docs\/intro\) and <escaped> "entities" © 😀\./,
  );
  assert.match(text, /- one\n- two bold/);
  assert.match(text, /1\. first\n2\. second/);
  assert.match(text, /## Sub\n\nLine\nbreak/);
  assert.match(text, /A \| B\n1 \| 2/);
  assert.match(text, / {2}keep\n {4}spacing/);
  for (const gone of ['color:red', 'not text', 'Home', 'About', 'a comment', 'javascript'])
    assert.not.ok(text.includes(gone), gone);
  assert.is(htmlToText('<p>no head close<body><p>body text'), 'no head close\n\nbody text');
  assert.is(
    htmlToText('<head><title>t</title><body><p>after an unclosed head</p>'),
    'Title: t\n\nafter an unclosed head',
  );
  assert.is(htmlToText('a &bogus; &amp;amp; &#0; b'), 'a &bogus; &amp; \uFFFD b');
});

test('blocked address table', () => {
  const blocked = [
    '127.0.0.1',
    '127.9.9.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:a9fe:a9fe::1',
    'fe80::1%eth0',
  ];
  for (const ip of blocked) assert.ok(blockedAddressReason(ip), ip);
  for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])
    assert.is(blockedAddressReason(ip), null, ip);
  assert.match(blockedAddressReason('169.254.169.254')!, /link-local/);
  assert.is(blockedAddressReason('127.0.0.1', true), null, 'loopback only with the test switch');
  assert.is(blockedAddressReason('::ffff:127.0.0.1', true), null);
  assert.ok(
    blockedAddressReason('169.254.169.254', true),
    'the test switch never opens link-local',
  );
  assert.ok(blockedAddressReason('10.0.0.1', true));
});

test('without the test switch: loopback, metadata and names resolving to private addresses are refused before connecting', async () => {
  hits = [];
  const port = (server.address() as AddressInfo).port;
  for (const url of [
    `${base}/html`,
    'http://169.254.169.254/latest/meta-data/',
    `http://[::ffff:127.0.0.1]:${port}/html`,
    `http://[::1]:${port}/`,
    'http://[fe80::1]/',
    'http://0.0.0.0/',
  ]) {
    const r = await prod(url);
    assert.ok(r.isError, url);
    assert.match(
      r.output,
      /^Refused: .* an? [^\n]+ address; web_fetch only reaches public internet addresses\./,
      url,
    );
  }
  const resolved: string[] = [];
  const resolve = async (host: string) => {
    resolved.push(host);
    return host === 'mixed.test'
      ? [
          { address: '93.184.216.34', family: 4 },
          { address: '192.168.0.10', family: 4 },
        ]
      : [{ address: '10.1.2.3', family: 4 }];
  };
  const priv = await prod('http://intranet.test/', { resolve });
  assert.match(priv.output, /intranet\.test resolves to 10\.1\.2\.3, which is a private address/);
  const mixed = await prod('https://mixed.test/', { resolve });
  assert.match(
    mixed.output,
    /mixed\.test resolves to 192\.168\.0\.10/,
    'every address is checked, not just the first',
  );
  assert.equal(resolved, ['intranet.test', 'mixed.test']);
  const lh = await prod(`http://localhost:${port}/html`);
  assert.ok(lh.isError, lh.output);
  for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'not a url'])
    assert.ok((await prod(url)).isError, url);
  assert.equal(hits, [], 'nothing reached the server');
});

test('the model-facing tool refuses a link-local target', async () => {
  const registry = new ToolRegistry(webTools);
  const ctx: ToolContext = {
    sessionId: 's_w',
    turnId: 'u',
    callId: 'c',
    workingDir: null,
    signal: never,
    db,
    paths,
    emit: () => undefined,
  };
  const r = await registry.call(
    'web_fetch',
    JSON.stringify({ url: 'http://169.254.169.254/latest/meta-data/iam/' }),
    ctx,
  );
  assert.ok(r.isError);
  assert.match(r.output, /link-local/);
  const extra = await registry.call(
    'web_fetch',
    JSON.stringify({ url: `${base}/html`, allowLoopback: true }),
    ctx,
  );
  assert.ok(extra.isError, 'no way for the model to pass the test switch');
  assert.match(extra.output, /Invalid arguments/);
  const tool = makeWebFetchTool({ allowLoopback: true });
  const ok = await new ToolRegistry([tool]).call(
    'web_fetch',
    JSON.stringify({ url: `${base}/json` }),
    ctx,
  );
  assert.not.ok(ok.isError, ok.output);
});

test('fetches HTML as text, JSON and text as they are, others described; gzip and charsets decoded', async () => {
  const html = await local(`${base}/html`);
  assert.not.ok(html.isError, html.output);
  assert.match(
    html.output,
    /^URL: http:\/\/127\.0\.0\.1:\d+\/html\nStatus: 200\nContent-Type: text\/html; charset=utf-8\n\nTitle: Test & Page/,
  );
  assert.match(html.output, /a link \(http:\/\/127\.0\.0\.1:\d+\/docs\/intro\)/);
  const json = await local(`${base}/json`);
  assert.ok(json.output.endsWith('\n\n{"a":1,"b":[true,null]}'), json.output);
  assert.match((await local(`${base}/gzip`)).output, /compressed hello$/);
  assert.match((await local(`${base}/latin1`)).output, /café$/);
  const png = await local(`${base}/png`);
  assert.match(png.output, /\[image\/png content, 7 B: not text, so it is not shown\]/);
  const missing = await local(`${base}/missing`);
  assert.ok(missing.isError);
  assert.match(missing.output, /Status: 404[\s\S]*# Not found/);
  const cut = await local(`${base}/html`, { maxChars: 100 });
  assert.match(cut.output, /\[cut at 100 of \d+ characters/);
});

test('redirects are followed (max 5) and every hop is checked again', async () => {
  const five = await local(`${base}/hop/5`);
  assert.not.ok(five.isError, five.output);
  assert.match(
    five.output,
    /^URL: http:\/\/127\.0\.0\.1:\d+\/hop\/0 \(requested .*\/hop\/5\)[\s\S]*arrived$/,
  );
  const six = await local(`${base}/hop/6`);
  assert.ok(six.isError);
  assert.match(six.output, /Too many redirects/);

  hits = [];
  const meta = await local(`${base}/to-metadata`);
  assert.ok(meta.isError);
  assert.match(
    meta.output,
    /Redirected to http:\/\/169\.254\.169\.254\/latest\/meta-data\/: Refused: 169\.254\.169\.254 is a link-local/,
  );
  assert.equal(hits, ['/to-metadata']);

  const port = (server.address() as AddressInfo).port;
  const toName = await local(`${base}/to-private-name?port=${port}`, {
    resolve: async () => [{ address: '10.0.0.7', family: 4 }],
  });
  assert.match(
    toName.output,
    /Redirected to http:\/\/internal\.test:\d+\/html: Refused: internal\.test resolves to 10\.0\.0\.7/,
  );
  assert.match(
    (await local(`${base}/to-file`)).output,
    /^Redirected to file:\/\/\/etc\/passwd: Only http and https/,
  );
});

test('the connection goes to the address that was checked (no second lookup)', async () => {
  const port = (server.address() as AddressInfo).port;
  let lookups = 0;
  // A rebinding resolver: harmless the first time, private afterwards.
  const resolve = async () =>
    lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }];
  hits = [];
  const r = await local(`http://rebind.test:${port}/json`, { resolve });
  assert.not.ok(r.isError, r.output);
  assert.is(lookups, 1);
  assert.equal(hits, ['/json']);
});

test('size and time limits', async () => {
  const big = await local(`${base}/big`, { maxChars: 200_000 });
  assert.not.ok(big.isError);
  assert.match(big.output, /\[the response was over 5\.0 MiB; only the first 5\.0 MiB were read\]/);
  assert.match(big.output, /\[cut at 200000 of 5242880 characters/);
  const small = await local(`${base}/big`, { maxBytes: 1000 });
  assert.match(
    small.output,
    /\n\nx{1000}\n\[the response was over 1000 B; only the first 1000 B were read\]$/,
  );

  // /slow never answers: only the deadline ends this call.
  const slow = await local(`${base}/slow`, { timeoutMs: 300 });
  assert.ok(slow.isError);
  assert.match(slow.output, /timed out after 0\.3 s/);

  const ac = new AbortController();
  const p = local(`${base}/slow`, { signal: ac.signal });
  setTimeout(() => ac.abort(new Error('interrupted')), 50);
  const err = await rejection(p, 'an interrupted turn rejects');
  assert.match(String(err), /interrupted/);
});

test.run();
