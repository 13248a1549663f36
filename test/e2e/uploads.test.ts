import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMultipart } from '../../src/gateway/multipart.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { insertUpload, resolveUpload } from '../../src/shared/store/uploads.js';
import {
  http,
  removeHome,
  sleep,
  startServer,
  waitFor,
  type RunningServer,
} from '../helpers/server.js';

const LIMIT = 1024;
let server: RunningServer;
let small: RunningServer; // limits.upload_bytes: 1024
let db: Db;

interface FilePart {
  name?: string;
  filename?: string;
  /** A raw Content-Disposition, for names a browser would encode differently. */
  disposition?: string;
  type?: string;
  data: Buffer | string;
}

const BOUNDARY = '----svcTestBoundary7MA4YWxkTrZu0gW';

function multipart(parts: FilePart[], boundary = BOUNDARY): Buffer {
  const out: Buffer[] = [Buffer.from('preamble a client may send\r\n')];
  for (const p of parts) {
    const disposition =
      p.disposition ??
      `form-data; name="${p.name ?? 'file'}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    out.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`,
      ),
    );
    out.push(Buffer.from(p.data));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: () => any;
}

/**
 * POSTs a body with node:http in many small writes (each its own TCP segment, so the server sees
 * boundaries split across chunks). Resolves with the response even when the server answers early
 * and closes while the client is still writing.
 */
function upload(
  port: number,
  body: Buffer,
  opts: {
    pieceBytes?: number;
    delayMs?: number;
    chunked?: boolean;
    headers?: Record<string, string>;
    path?: string;
  } = {},
): Promise<Res> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: opts.path ?? '/api/upload',
        setHost: false,
        agent: false,
        headers: {
          Host: `127.0.0.1:${port}`,
          Connection: 'close',
          'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
          ...(opts.chunked
            ? { 'Transfer-Encoding': 'chunked' }
            : { 'Content-Length': String(body.length) }),
          ...opts.headers,
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: buf,
            json: () => JSON.parse(buf.toString('utf8')),
          });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    void (async () => {
      const piece = opts.pieceBytes ?? body.length;
      for (let i = 0; i < body.length && !answered && !req.destroyed; i += piece) {
        req.write(body.subarray(i, i + piece));
        if (opts.delayMs) await sleep(opts.delayMs);
        else if (piece < body.length) await new Promise((r) => setImmediate(r));
      }
      if (!req.destroyed) req.end();
    })();
  });
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        setHost: false,
        agent: false,
        headers: { Host: `127.0.0.1:${port}`, Connection: 'close', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: buf,
            json: () => JSON.parse(buf.toString('utf8')),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function assertError(res: Res, status: number, code: string): string {
  assert.is(res.status, status, `status for ${code}: ${res.body.toString()}`);
  const body = res.json();
  assert.is(body.error.code, code);
  assert.type(body.error.message, 'string');
  return body.error.message as string;
}

/** Files in uploads/ (not counting the .tmp folder) and in uploads/.tmp/. */
function leftovers(home: string): { files: string[]; tmp: string[] } {
  const dir = join(home, 'uploads');
  const files = existsSync(dir) ? readdirSync(dir).filter((n) => n !== '.tmp') : [];
  const tmp = existsSync(join(dir, '.tmp')) ? readdirSync(join(dir, '.tmp')) : [];
  return { files, tmp };
}

/** Bytes that look like boundaries: CRLF, dashes, the boundary itself minus its last character. */
function trickyBytes(n: number): Buffer {
  const all = Buffer.alloc(256);
  for (let i = 0; i < 256; i++) all[i] = i;
  const look = Buffer.from(`\r\n--\r\n--${BOUNDARY.slice(0, -1)}X\r\n-${BOUNDARY}\r\n\r\n--`);
  const out: Buffer[] = [];
  let size = 0;
  while (size < n) {
    const b = out.length % 2 === 0 ? all : look;
    out.push(b);
    size += b.length;
  }
  return Buffer.concat(out).subarray(0, n);
}

test.before(async () => {
  [server, small] = await Promise.all([
    startServer(),
    startServer({ config: `limits:\n  upload_bytes: ${LIMIT}\n` }),
  ]);
  db = openDb(join(server.home, 'svc.db'));
});

test.after(async () => {
  db?.close();
  await Promise.all([server?.stop(), small?.stop()]);
  if (server) removeHome(server.home);
  if (small) removeHome(small.home);
});

test('the parser finds boundaries split across chunks of every size', async () => {
  const data = trickyBytes(700);
  const body = multipart([
    { name: 'note', data: 'a text field' },
    { filename: 'a.bin', type: 'application/octet-stream', data },
    { filename: 'empty.txt', data: '' },
  ]);
  for (let size = 1; size <= 97; size++) {
    async function* chunks() {
      for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
    }
    const got: Array<{ name: string; filename: string | undefined; data: Buffer }> = [];
    for await (const p of parseMultipart(chunks(), BOUNDARY)) {
      const parts: Buffer[] = [];
      for await (const c of p.body) parts.push(c);
      got.push({ name: p.name, filename: p.filename, data: Buffer.concat(parts) });
    }
    assert.equal(
      got.map((g) => [g.name, g.filename]),
      [
        ['note', undefined],
        ['file', 'a.bin'],
        ['file', 'empty.txt'],
      ],
      `chunk size ${size}`,
    );
    assert.ok(got[1]!.data.equals(data), `chunk size ${size}: the file bytes are exact`);
    assert.is(got[0]!.data.toString(), 'a text field');
    assert.is(got[2]!.data.length, 0);
  }
});

test('one file: 201, streamed in small writes, bytes and sha256 round-trip', async () => {
  const data = trickyBytes(5000);
  const res = await upload(
    server.port,
    multipart([{ filename: 'data.bin', type: 'application/octet-stream', data }]),
    { pieceBytes: 13 },
  );
  assert.is(res.status, 201, res.body.toString());
  const files = res.json().files;
  assert.is(files.length, 1);
  const f = files[0];
  assert.match(f.name, /^\d{8}-\d{6}-[0-9a-z]{6}_data\.bin$/);
  assert.is(f.original_name, 'data.bin');
  assert.is(f.size, data.length);
  assert.is(f.sha256, sha256(data));
  assert.is(f.mime, 'application/octet-stream');
  assert.is(f.url, `/api/uploads/${f.name}`);
  const back = await get(server.port, f.url);
  assert.is(back.status, 200);
  assert.ok(back.body.equals(data), 'the same bytes come back');
  assert.is(sha256(back.body), f.sha256);
  assert.is(back.headers['x-content-type-options'], 'nosniff');
  assert.is(back.headers['content-security-policy'], 'sandbox');
  assert.is(back.headers['content-type'], 'application/octet-stream');
  assert.is(
    back.headers['content-disposition'],
    `attachment; filename="data.bin"; filename*=UTF-8''data.bin`,
  );
  assert.ok(existsSync(join(server.home, 'uploads', f.name)), 'stored under its name in uploads/');
  assert.equal(leftovers(server.home).tmp, [], 'no temp file left');
});

test('two files and a text field in one request; same names never collide', async () => {
  const a = randomBytes(3000);
  const b = Buffer.from('second file\r\n--not a boundary\r\n');
  const body = multipart([
    { filename: 'same.txt', type: 'text/plain', data: a },
    { name: 'comment', data: 'ignored' },
    { filename: 'same.txt', type: 'text/plain', data: b },
  ]);
  const res = await upload(server.port, body, { pieceBytes: 7 });
  assert.is(res.status, 201, res.body.toString());
  const files = res.json().files;
  assert.is(files.length, 2, 'only the parts named "file"');
  assert.is.not(files[0].name, files[1].name);
  for (const [f, data] of [
    [files[0], a],
    [files[1], b],
  ] as const) {
    assert.is(f.original_name, 'same.txt');
    assert.is(f.sha256, sha256(data));
    const back = await get(server.port, f.url);
    assert.ok(back.body.equals(data));
    assert.is(back.headers['content-type'], 'text/plain; charset=utf-8');
  }
});

test('an epilogue after the final boundary is ignored, and the connection stays usable', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = Buffer.concat([
    multipart([{ filename: 'e.txt', data: 'epilogue test' }]),
    Buffer.from('an epilogue some clients add\r\n'),
  ]);
  const send = () =>
    new Promise<{ status: number; reused: boolean; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/api/upload',
          agent,
          headers: {
            'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
            'Content-Length': String(body.length),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, text }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const first = await send();
  const second = await send();
  agent.destroy();
  assert.is(first.status, 201, first.text);
  assert.is(second.status, 201, second.text);
  assert.ok(second.reused, 'the second upload went over the same kept-alive connection');
  assert.is(JSON.parse(second.text).files[0].size, 'epilogue test'.length);
});

test('the served type comes from an allowlist, never HTML or SVG; images must be images', async () => {
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(64)]);
  const html = '<html><script>alert(document.cookie)</script></html>';
  const res = await upload(
    server.port,
    multipart([
      { filename: 'page.html', type: 'text/html', data: html },
      {
        filename: 'pic.svg',
        type: 'image/svg+xml',
        data: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
      },
      { filename: 'real.png', data: png },
      { filename: 'fake.png', type: 'image/png', data: html },
      { filename: 'doc.pdf', type: 'application/octet-stream', data: '%PDF-1.4\n...' },
    ]),
  );
  assert.is(res.status, 201, res.body.toString());
  const [page, svg, real, fake, pdf] = res.json().files;
  assert.is(page.mime, 'text/html', 'recorded as what it is');
  assert.is(svg.mime, 'image/svg+xml');
  assert.is(real.mime, 'image/png', 'found by its extension and signature');
  assert.is(fake.mime, 'application/octet-stream', 'a claimed PNG that is not one');
  assert.is(pdf.mime, 'application/pdf', 'a PDF found by its signature');
  for (const f of [page, svg, fake]) {
    const back = await get(server.port, f.url);
    assert.is(back.status, 200);
    assert.is(
      back.headers['content-type'],
      'application/octet-stream',
      `${f.original_name} is served as bytes`,
    );
    assert.match(String(back.headers['content-disposition']), /^attachment; /);
    assert.is(back.headers['x-content-type-options'], 'nosniff');
    assert.is(back.headers['content-security-policy'], 'sandbox');
  }
  assert.is((await get(server.port, real.url)).headers['content-type'], 'image/png');
  assert.is((await get(server.port, pdf.url)).headers['content-type'], 'application/pdf');
});

test('file names from the client are sanitised', async () => {
  const long = `${'é'.repeat(200)}.txt`;
  const cases: Array<[FilePart, string]> = [
    [{ filename: '../../etc/passwd', data: 'x' }, 'passwd'],
    [{ filename: '..\\..\\x', data: 'x' }, 'x'],
    [{ filename: 'C:\\Users\\me\\report.pdf', data: '%PDF-' }, 'report.pdf'],
    [{ filename: '.bashrc', data: 'x' }, 'bashrc'],
    [{ filename: '..', data: 'x' }, 'upload'],
    [{ filename: 'dir/', data: 'x' }, 'upload'],
    [{ data: 'x' }, 'upload'],
    [{ filename: 'a\u202Etxt.exe', data: 'x' }, 'atxt.exe'],
    [{ filename: 'tab\there.txt', data: 'x' }, 'tabhere.txt'],
    [
      {
        disposition: `form-data; name="file"; filename="fallback.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20final.pdf`,
        data: '%PDF-',
      },
      'résumé final.pdf',
    ],
    [
      { disposition: 'form-data; name="file"; filename="say \\"hi\\".txt"', data: 'x' },
      'say "hi".txt',
    ],
    [{ filename: long, data: 'x' }, ''],
  ];
  const res = await upload(server.port, multipart(cases.map((c) => c[0])));
  assert.is(res.status, 201, res.body.toString());
  const files = res.json().files as Array<{ name: string; original_name: string; url: string }>;
  files.forEach((f, i) => {
    const want = cases[i]![1];
    if (want) {
      assert.is(f.original_name, want, `case ${i}`);
      assert.ok(f.name.endsWith(`_${want}`), `case ${i}: ${f.name}`);
    }
    assert.ok(Buffer.byteLength(f.name) <= 255, `case ${i}: at most 255 bytes`);
    assert.ok(
      existsSync(join(server.home, 'uploads', f.name)),
      `case ${i}: stored directly in uploads/`,
    );
  });
  const longOne = files[files.length - 1]!;
  assert.ok(longOne.name.endsWith('.txt'), 'a long name keeps its extension');
  assert.ok(Buffer.byteLength(longOne.original_name) <= 255);
  assert.ok(!existsSync(join(server.home, 'etc')), 'nothing escaped the folder');
  const resume = files[9]!;
  const back = await get(server.port, resume.url);
  assert.is(
    back.headers['content-disposition'],
    `attachment; filename="r_sum_ final.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20final.pdf`,
  );
  const quoted = await get(server.port, files[10]!.url);
  assert.is(
    quoted.headers['content-disposition'],
    `attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`,
  );
});

test('a NUL in a file name is refused with 400 and nothing is stored', async () => {
  const before = leftovers(server.home).files.length;
  const res = await upload(
    server.port,
    multipart([{ disposition: `form-data; name="file"; filename*=UTF-8''a%00b.txt`, data: 'x' }]),
  );
  assert.match(assertError(res, 400, 'invalid_request'), /NUL/);
  assert.is(leftovers(server.home).files.length, before);
});

test('traversal attempts never reach a file outside uploads/', async () => {
  const secret = readFileSync(join(server.home, 'access_key'), 'utf8').trim();
  const attempts = [
    '/api/uploads/..%2Fconfig.yml',
    '/api/uploads/%2e%2e%2faccess_key',
    '/api/uploads/%2E%2E%2Faccess_key',
    '/api/uploads/..%5Caccess_key',
    '/api/uploads/%2Fetc%2Fpasswd',
    '/api/uploads/..%2F..%2F..%2F..%2Fetc%2Fpasswd',
    '/api/uploads/..',
    '/api/uploads/.tmp',
    '/api/uploads/%2e%2e',
    '/api/uploads/x%00.txt',
    '/api/uploads/%00',
    '/api/uploads/../access_key',
    '/api/uploads/..%252Faccess_key',
    '/api/uploads/no-such-file.txt',
  ];
  for (const path of attempts) {
    const res = await get(server.port, path);
    assert.ok(res.status === 404 || res.status === 400, `${path}: ${res.status}`);
    const text = res.body.toString();
    assert.not.match(text, secret, `${path}: the key is not in the answer`);
    assert.not.match(text, 'root:', `${path}: /etc/passwd is not in the answer`);
    assert.match(
      String(res.headers['content-type']),
      /^application\/json/,
      `${path}: a JSON error`,
    );
  }
});

test('a file on disk that is not on record, or a recorded symlink out of the folder, is not served', async () => {
  writeFileSync(join(server.home, 'uploads', 'planted.txt'), 'not uploaded');
  assert.is((await get(server.port, '/api/uploads/planted.txt')).status, 404);
  symlinkSync(join(server.home, 'access_key'), join(server.home, 'uploads', 'link.txt'));
  insertUpload(db, {
    name: 'link.txt',
    original_name: 'link.txt',
    mime: 'text/plain',
    size: 10,
    sha256: '0',
    created_at: new Date().toISOString(),
  });
  const res = await get(server.port, '/api/uploads/link.txt');
  assert.is(res.status, 404);
  assert.is(
    resolveUpload(db, { uploadsDir: join(server.home, 'uploads') }, 'link.txt'),
    undefined,
    'resolveUpload refuses it too',
  );
  assert.is(
    resolveUpload(db, { uploadsDir: join(server.home, 'uploads') }, '../access_key'),
    undefined,
  );
});

test('resolveUpload turns a stored name into its file', async () => {
  const res = await upload(
    server.port,
    multipart([{ filename: 'notes.txt', type: 'text/plain', data: 'hello' }]),
  );
  const f = res.json().files[0];
  const r = resolveUpload(db, { uploadsDir: join(server.home, 'uploads') }, f.name);
  assert.ok(r);
  assert.is(readFileSync(r!.path, 'utf8'), 'hello');
  assert.equal(
    { mime: r!.mime, size: r!.size, original_name: r!.original_name },
    { mime: 'text/plain', size: 5, original_name: 'notes.txt' },
  );
});

test('a big file streams both ways with its bytes intact (and HEAD answers its size)', async () => {
  const data = randomBytes(9 * 1024 * 1024 + 17);
  const res = await upload(server.port, multipart([{ filename: 'big.bin', data }]), {
    pieceBytes: 256 * 1024,
  });
  assert.is(res.status, 201, res.body.toString());
  const f = res.json().files[0];
  assert.is(f.size, data.length);
  assert.is(f.sha256, sha256(data));
  const back = await get(server.port, f.url);
  assert.is(back.status, 200);
  assert.is(back.headers['content-length'], String(data.length));
  assert.is(back.headers['x-content-type-options'], 'nosniff');
  assert.is(sha256(back.body), f.sha256);
  const head = await get(server.port, f.url, {}, 'HEAD');
  assert.is(head.status, 200);
  assert.is(head.headers['content-length'], String(data.length));
  assert.is(head.body.length, 0);
});

test('over the limit: 413 naming the limit, and no file left behind', async () => {
  const res = await upload(
    small.port,
    multipart([{ filename: 'two-k.bin', data: randomBytes(2048) }]),
  );
  assert.match(assertError(res, 413, 'too_large'), String(LIMIT));
  assert.equal(
    leftovers(small.home),
    { files: [], tmp: [] },
    'no file in uploads/ or uploads/.tmp/',
  );
});

test('a chunked body (no Content-Length) is counted as it arrives and stopped at the limit', async () => {
  const res = await upload(
    small.port,
    multipart([{ filename: 'two-k.bin', data: randomBytes(2048) }]),
    { chunked: true, pieceBytes: 200, delayMs: 10 },
  );
  assert.match(assertError(res, 413, 'too_large'), String(LIMIT));
  await waitFor(() => leftovers(small.home).tmp.length === 0, 5000, 'the partial temp file to go');
  assert.equal(leftovers(small.home).files, [], 'no file in uploads/');
  const ok = await upload(small.port, multipart([{ filename: 'tiny.txt', data: 'fits' }]), {
    chunked: true,
    pieceBytes: 20,
  });
  assert.is(ok.status, 201, 'a small chunked upload works');
  assert.is(ok.json().files[0].size, 4);
});

test('a declared Content-Length over the limit is refused at once', async () => {
  const res = await new Promise<string>((resolve, reject) => {
    const sock = connect(small.port, '127.0.0.1');
    sock.setTimeout(5000, () => sock.destroy(new Error('no answer')));
    let buf = '';
    sock.on('data', (d) => (buf += d.toString('latin1')));
    sock.on('close', () => resolve(buf));
    sock.on('error', (err) => (buf ? resolve(buf) : reject(err)));
    sock.write(
      [
        `POST /api/upload HTTP/1.1`,
        `Host: 127.0.0.1:${small.port}`,
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
        `Content-Length: ${100 * 1024 * 1024}`,
        '',
        `--${BOUNDARY}\r\n`,
      ].join('\r\n'),
    );
  });
  assert.match(res, /^HTTP\/1\.1 413/);
  assert.match(res, /"too_large"/);
  assert.equal(leftovers(small.home).tmp, []);
});

test('a client that disconnects mid-upload leaves nothing behind', async () => {
  const before = leftovers(server.home).files.length;
  const sock = connect(server.port, '127.0.0.1');
  sock.on('error', () => {}); // the point is to break this connection
  await new Promise((r) => sock.once('connect', r));
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`;
  sock.write(
    [
      `POST /api/upload HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
      `Content-Length: ${10 * 1024 * 1024}`,
      '',
      head,
    ].join('\r\n'),
  );
  for (let i = 0; i < 20; i++) sock.write(randomBytes(16 * 1024));
  await waitFor(() => leftovers(server.home).tmp.length > 0, 5000, 'the temp file to appear');
  sock.destroy();
  await waitFor(() => leftovers(server.home).tmp.length === 0, 5000, 'the temp file to be removed');
  assert.is(leftovers(server.home).files.length, before, 'no new file in uploads/');
});

test('a non-multipart Content-Type is refused with 415', async () => {
  for (const type of [
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/mixed; boundary=x',
  ]) {
    const res = await upload(server.port, Buffer.from('{"a":1}'), {
      headers: { 'Content-Type': type },
    });
    assertError(res, 415, 'unsupported_media_type');
  }
  const none = await upload(server.port, Buffer.from('x'), { headers: { 'Content-Type': '' } });
  assert.is(none.status, 415);
});

test('malformed multipart bodies are refused with 400', async () => {
  const cases: Array<[string, Buffer, Record<string, string>?]> = [
    [
      'no boundary parameter',
      multipart([{ filename: 'a', data: 'x' }]),
      { 'Content-Type': 'multipart/form-data' },
    ],
    [
      'a bad boundary',
      multipart([{ filename: 'a', data: 'x' }]),
      { 'Content-Type': `multipart/form-data; boundary=${'x'.repeat(80)}` },
    ],
    ['the boundary never occurs', Buffer.from('just some bytes, no parts at all')],
    [
      'no final boundary',
      multipart([{ filename: 'a.txt', data: 'x' }]).subarray(0, -(BOUNDARY.length + 6)),
    ],
    [
      'the body ends in the headers',
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"`),
    ],
    [
      'oversized part headers',
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\nX-Pad: ${'p'.repeat(20 * 1024)}\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
      ),
    ],
    [
      'no Content-Disposition',
      Buffer.from(`--${BOUNDARY}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${BOUNDARY}--\r\n`),
    ],
    [
      'no field name',
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
      ),
    ],
    [
      'garbage after a boundary',
      Buffer.from(
        `--${BOUNDARY}garbage\r\nContent-Disposition: form-data; name="file"\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
      ),
    ],
    ['no file part', multipart([{ name: 'comment', data: 'hello' }])],
    ['only the final boundary', Buffer.from(`--${BOUNDARY}--\r\n`)],
  ];
  for (const [what, body, headers] of cases) {
    const res = await upload(server.port, body, { headers: headers ?? {}, pieceBytes: 50 });
    const message = assertError(res, 400, 'invalid_request');
    assert.ok(message.length > 20, `${what}: ${message}`);
  }
  const empty = await upload(server.port, Buffer.alloc(0));
  assertError(empty, 400, 'invalid_request');
  assert.equal(leftovers(server.home).tmp, [], 'no temp file left by a refused body');
});

test('a keyless request from elsewhere (Host: evil.example) is refused with 401', async () => {
  const res = await upload(server.port, multipart([{ filename: 'a.txt', data: 'x' }]), {
    headers: { Host: 'evil.example' },
  });
  assert.is(res.status, 401);
  const up = await upload(server.port, multipart([{ filename: 'ok.txt', data: 'x' }]));
  const f = up.json().files[0];
  const read = await get(server.port, f.url, { Host: 'evil.example' });
  assert.is(read.status, 401);
  const withKey = await get(server.port, f.url, {
    Host: 'evil.example',
    Authorization: `Bearer ${server.key()}`,
  });
  assert.is(withKey.status, 200, 'the key opens it');
});

test('after all of it both servers still answer /api/health', async () => {
  await sleep(50);
  for (const s of [server, small]) {
    const health = await http({ port: s.port, path: '/api/health' });
    assert.is(health.status, 200);
    assert.is(health.json().status, 'ok');
  }
});

test.run();
