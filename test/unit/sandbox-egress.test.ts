import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addressClass, decide, type EgressPolicy } from '../../src/workers/agent/sandbox/egress.js';
import { refusalNote, wallHint } from '../../src/workers/agent/sandbox/index.js';
import { createProxy } from '../../src/workers/agent/sandbox/proxy.js';
import {
  ARCHES,
  encode,
  ENOSYS,
  EPERM,
  evaluate,
  program,
  RET_ALLOW,
  RET_ERRNO,
  RET_KILL_PROCESS,
  seccompProgram,
} from '../../src/workers/agent/sandbox/seccomp.js';
import { parse } from '../../src/workers/agent/sandbox/socks.js';
import { bwrapPath } from '../../src/shared/sandbox/status.js';

/**
 * The sandbox's egress rules on their own: which addresses count as local, the decision on the
 * resolved address (a public name that resolves to loopback is refused), the SOCKS5 parser, the
 * proxy's two sides against real loopback servers, and the seccomp program, both decoded here and
 * loaded by a real bubblewrap.
 */

const own = new Set(['203.0.114.7']);
const any: EgressPolicy = { hosts: 'any', local: [] };
/** A resolver that knows a few names, as DNS would answer them. */
const dns = (table: Record<string, string[]>) => async (host: string) => {
  const a = table[host];
  if (!a) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return a;
};

test('addressClass: loopback, private, link-local, CGNAT, unique-local, multicast, mapped, own; public is undefined', () => {
  const cases: Array<[string, string | undefined]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', '"this network"'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local (private)'],
    ['fd12:3456::1', 'unique-local (private)'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['203.0.114.7', "this machine's own"],
    ['::ffff:203.0.114.7', "this machine's own"],
    ['93.184.215.14', undefined],
    ['203.0.113.80', undefined],
    ['198.18.0.7', undefined],
    ['172.32.0.1', undefined],
    ['100.128.0.1', undefined],
    ['2606:4700::1111', undefined],
  ];
  for (const [ip, want] of cases) assert.is(addressClass(ip, own), want, ip);
});

test('decide: on lets public hosts through at the address it checked', async () => {
  const v = await decide(any, 'example.com', 443, dns({ 'example.com': ['93.184.215.14'] }), own);
  assert.equal(v, { ok: true, address: '93.184.215.14' });
});

test('decide: loopback, private and own addresses are refused with a message naming the rule that would open them', async () => {
  for (const host of ['127.0.0.1', '10.0.0.8', '[::1]', '169.254.169.254', '203.0.114.7']) {
    const v = await decide(any, host, 3000, dns({}), own);
    assert.is(v.ok, false, host);
    if (!v.ok) {
      assert.is(v.reason, 'local');
      assert.match(v.message, /^svc sandbox: \S+ is not a public address \(/);
      assert.match(v.message, 'local_hosts');
    }
  }
});

test('decide: DNS rebinding: a public-looking name resolving to loopback is refused; with public and loopback answers the public one is used', async () => {
  const rebind = await decide(any, 'evil.example', 80, dns({ 'evil.example': ['127.0.0.1'] }), own);
  assert.is(rebind.ok, false);
  if (!rebind.ok)
    assert.match(rebind.message, 'evil.example:80 (127.0.0.1) is not a public address (loopback)');
  const mixed = await decide(
    any,
    'mixed.example',
    80,
    dns({ 'mixed.example': ['127.0.0.1', '93.184.215.14'] }),
    own,
  );
  assert.equal(mixed, { ok: true, address: '93.184.215.14' });
  const mapped = await decide(
    any,
    'm.example',
    80,
    dns({ 'm.example': ['::ffff:127.0.0.1'] }),
    own,
  );
  assert.is(mapped.ok, false);
});

test('decide: a local_hosts entry with a port opens that host and port only, by name or by address', async () => {
  const policy: EgressPolicy = { hosts: 'any', local: ['127.0.0.1:3000', 'localhost:5432'] };
  const look = dns({ localhost: ['127.0.0.1'], 'evil.example': ['127.0.0.1'] });
  assert.equal(await decide(policy, '127.0.0.1', 3000, look, own), {
    ok: true,
    address: '127.0.0.1',
  });
  assert.is((await decide(policy, '127.0.0.1', 3001, look, own)).ok, false);
  assert.equal(await decide(policy, 'localhost', 5432, look, own), {
    ok: true,
    address: '127.0.0.1',
  });
  // The address is named with this port, so any name for it reaches that port, and no other.
  assert.is((await decide(policy, 'evil.example', 3000, look, own)).ok, true);
  assert.is((await decide(policy, 'evil.example', 8080, look, own)).ok, false);
  // An entry without a port never opens a local address.
  const bare: EgressPolicy = { hosts: 'any', local: ['127.0.0.1'] };
  assert.is((await decide(bare, '127.0.0.1', 3000, look, own)).ok, false);
});

test('decide: a host list lets through only its hosts; exact entries with a port open local addresses, wildcards never', async () => {
  const policy: EgressPolicy = {
    hosts: ['*.example.com', 'registry.npmjs.org', '127.0.0.1:8080', 'db.lan:5432'],
    local: [],
  };
  const look = dns({
    'a.example.com': ['10.0.0.5'],
    'registry.npmjs.org': ['104.16.1.1'],
    'db.lan': ['192.168.1.20'],
  });
  const other = await decide(policy, 'github.com', 443, look, own);
  assert.is(other.ok, false);
  if (!other.ok) {
    assert.is(other.reason, 'not_listed');
    assert.match(other.message, "github.com:443 is not on this session's network list");
  }
  assert.is((await decide(policy, 'registry.npmjs.org', 443, look, own)).ok, true);
  assert.is((await decide(policy, 'a.example.com', 443, look, own)).ok, false);
  assert.is((await decide(policy, '127.0.0.1', 8080, look, own)).ok, true);
  assert.is((await decide(policy, 'db.lan', 5432, look, own)).ok, true);
});

test('decide: a name that does not resolve is refused with the resolver error', async () => {
  const v = await decide(any, 'nowhere.invalid', 80, dns({}), own);
  assert.equal(v, {
    ok: false,
    reason: 'unresolved',
    message: 'svc sandbox: cannot resolve nowhere.invalid (ENOTFOUND)',
  });
});

test('wallHint recognises the proxy refusals, a refused unix socket and a program that ignored the proxy', () => {
  const local = wallHint(
    'svc sandbox: localhost:3000 (127.0.0.1) is not a public address (loopback); …',
    undefined,
    'on',
  );
  assert.match(local ?? '', "svc's proxy refuses loopback, private and this machine's addresses");
  assert.match(local ?? '', 'sandbox.local_hosts');
  const note = refusalNote(['svc sandbox: 127.0.0.1:22 is not a public address (loopback); …']);
  assert.is(
    note,
    '[svc sandbox proxy refused: 127.0.0.1:22 is not a public address (loopback); …]',
  );
  assert.match(wallHint(note!, 'cron', 'on') ?? '', 'cron turns cannot step outside it');
  assert.match(
    wallHint('Error connecting to agent: Operation not permitted', undefined, 'on') ?? '',
    'unix sockets outside the sandbox are out of reach',
  );
  assert.match(
    wallHint('curl: (6) Could not resolve host: example.com', undefined, 'on') ?? '',
    "only through svc's proxy",
  );
  assert.match(
    wallHint('curl: (6) Could not resolve host: example.com', undefined, 'off') ?? '',
    "the session's network is off",
  );
  assert.is(wallHint('all fine', undefined, 'on'), undefined);
});

test('socks parse: greeting and CONNECT with IPv4, domain and IPv6; other commands and methods refused', () => {
  const greet = Buffer.from([5, 1, 0]);
  const req = (atyp: number, addr: number[], port = 443, cmd = 1) =>
    Buffer.concat([greet, Buffer.from([5, cmd, 0, atyp, ...addr, port >> 8, port & 255])]);
  assert.is(parse(Buffer.from([5])), undefined);
  assert.equal(parse(greet), { greeting: 'no_auth' });
  assert.equal(parse(Buffer.from([5, 1, 2])), { greeting: 'refused' });
  assert.equal(parse(Buffer.from([4, 1, 0])), { greeting: 'refused' });
  const v4 = parse(req(1, [127, 0, 0, 1], 3000));
  assert.equal(v4?.request, { ok: true, host: '127.0.0.1', port: 3000, rest: Buffer.alloc(0) });
  const name = [...Buffer.from('example.com')];
  const dom = parse(req(3, [name.length, ...name]));
  assert.equal(dom?.request, { ok: true, host: 'example.com', port: 443, rest: Buffer.alloc(0) });
  const v6 = parse(req(4, [...Array(15).fill(0), 1], 22));
  assert.equal(v6?.request, { ok: true, host: '0:0:0:0:0:0:0:1', port: 22, rest: Buffer.alloc(0) });
  assert.equal(parse(req(1, [1, 2, 3, 4], 80, 2))?.request, { ok: false, code: 7 });
  assert.equal(parse(req(9, [1, 2, 3, 4]))?.request, { ok: false, code: 8 });
  // A partial request waits for the rest.
  assert.equal(parse(req(3, [name.length, ...name]).subarray(0, 12)), { greeting: 'no_auth' });
});

/** A loopback TCP server that answers "pong <first line>" and closes. */
async function echo(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => s.once('data', (d) => s.end(`pong ${String(d).trim()}\n`)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as { port: number }).port };
}

/** Speaks SOCKS5 to the proxy's socks side and returns the reply code and what came after. */
async function socksTo(
  port: number,
  host: string,
  target: number,
): Promise<{ rep: number; text: string }> {
  const s = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  s.on('data', (d) => chunks.push(d));
  await new Promise((r) => s.once('connect', r));
  const name = Buffer.from(host);
  s.write(
    Buffer.concat([
      Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length]),
      name,
      Buffer.from([target >> 8, target & 255]),
    ]),
  );
  await new Promise<void>((r) => {
    const check = () => {
      if (Buffer.concat(chunks).length >= 12) {
        s.write('ping\n');
        s.off('data', check);
        r();
      }
    };
    s.on('data', check);
    s.once('close', () => r());
  });
  await new Promise((r) => s.once('close', r));
  const all = Buffer.concat(chunks);
  return { rep: all[3]!, text: all.subarray(12).toString() };
}

test('the proxy: SOCKS5 CONNECT reaches an allowed target and is refused (code 2) for a loopback one; HTTP refusals say why', async () => {
  const allowed = await echo();
  const other = await echo();
  const proxy = createProxy({ hosts: 'any', local: [`127.0.0.1:${allowed.port}`] });
  const ports = await proxy.listen();
  try {
    assert.equal(await socksTo(ports.socks, '127.0.0.1', allowed.port), {
      rep: 0,
      text: 'pong ping\n',
    });
    const no = await socksTo(ports.socks, '127.0.0.1', other.port);
    assert.is(no.rep, 2);
    assert.match(
      proxy.refusals().join('\n'),
      `127.0.0.1:${other.port} is not a public address (loopback)`,
    );
    // Absolute-form through the HTTP side, by hand.
    const body = await new Promise<string>((resolve) => {
      const s: Socket = connect(ports.http, '127.0.0.1', () =>
        s.write(
          `GET http://127.0.0.1:${other.port}/x HTTP/1.1\r\nHost: 127.0.0.1:${other.port}\r\nConnection: close\r\n\r\n`,
        ),
      );
      let text = '';
      s.on('data', (d) => (text += d));
      s.on('close', () => resolve(text));
    });
    assert.match(body, /^HTTP\/1\.1 403 /);
    assert.match(body, `svc sandbox: 127.0.0.1:${other.port} is not a public address (loopback)`);
  } finally {
    proxy.close();
    allowed.server.close();
    other.server.close();
  }
});

test('seccomp: decisions of the decoded program on both machines', () => {
  for (const arch of [ARCHES.x64, ARCHES.arm64]) {
    const bytes = encode(program(arch));
    const call = (nr: number, args: number[] = [], a = arch.audit) =>
      evaluate(bytes, { arch: a, nr, args });
    assert.is(call(arch.socket, [1, 1, 0]), RET_ERRNO | EPERM, `${arch.name} socket(AF_UNIX)`);
    assert.is(call(arch.socket, [2, 1, 0]), RET_ALLOW, `${arch.name} socket(AF_INET)`);
    assert.is(call(arch.socket, [10, 1, 0]), RET_ALLOW, `${arch.name} socket(AF_INET6)`);
    assert.is(call(arch.ioUringSetup), RET_ERRNO | ENOSYS);
    assert.is(call(0), RET_ALLOW);
    assert.is(call(arch.name === 'x64' ? 53 : 199, [1, 1, 0]), RET_ALLOW, 'socketpair stays');
    assert.is(call(arch.socket, [1], 0x40000003), RET_KILL_PROCESS, 'i386 (int 0x80)');
    assert.is(call(102, [1], 0x40000003), RET_KILL_PROCESS, 'i386 socketcall');
    assert.is(call(arch.socket, [1], 0xc0000028), RET_KILL_PROCESS, 'another machine');
    const loose = encode(program(arch, true));
    assert.is(evaluate(loose, { arch: arch.audit, nr: arch.socket, args: [1] }), RET_ALLOW);
    assert.is(evaluate(loose, { arch: arch.audit, nr: arch.ioUringSetup }), RET_ERRNO | ENOSYS);
  }
  const x = encode(program(ARCHES.x64));
  assert.is(
    evaluate(x, { arch: ARCHES.x64.audit, nr: 0x40000000 + 41, args: [1] }),
    RET_KILL_PROCESS,
    'x32',
  );
  assert.is(evaluate(x, { arch: ARCHES.x64.audit, nr: 0x40000000 }), RET_KILL_PROCESS, 'x32 read');
  assert.is(seccompProgram(false, 'ia32'), undefined);
  assert.is(seccompProgram(false, 'riscv64'), undefined);
});

test('seccomp: loaded by bubblewrap, a unix socket outside is refused (EPERM) while TCP on loopback works', async () => {
  const path = `/var/tmp/svc-seccomp-${process.pid}.sock`;
  rmSync(path, { force: true });
  const unix = createServer((c) => c.end('reached\n'));
  await new Promise<void>((r) => unix.listen(path, () => r()));
  const script = `
    const net = require('net');
    net.connect(${JSON.stringify(path)}).on('data', (d) => console.log('unix', String(d).trim())).on('error', (e) => console.log('unix', e.code));
    net.createServer().listen(0, '127.0.0.1', function () { console.log('tcp ok'); this.close(); });
  `;
  const run = (bpf: Buffer | undefined) =>
    new Promise<string>((resolve) => {
      const args = [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--unshare-net',
        '--unshare-pid',
        '--die-with-parent',
      ];
      if (process.getuid?.() === 0) args.push('--cap-drop', 'ALL');
      if (bpf) args.push('--seccomp', '3');
      const p = spawn(bwrapPath(), [...args, '--', process.execPath, '-e', script], {
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
        env: {},
      });
      if (bpf) (p.stdio[3] as NodeJS.WritableStream).end(bpf);
      else (p.stdio[3] as NodeJS.WritableStream).end();
      let out = '';
      p.stdout?.on('data', (d) => (out += d));
      p.stderr?.on('data', (d) => (out += d));
      p.on('close', () => resolve(out.split('\n').sort().join('\n')));
    });
  try {
    assert.is(await run(seccompProgram(false)), '\ntcp ok\nunix EPERM');
    // The same without the filter reaches it: the refusal above is the filter's doing.
    assert.is(await run(undefined), '\ntcp ok\nunix reached');
    assert.is(await run(seccompProgram(true)), '\ntcp ok\nunix reached');
  } finally {
    unix.close();
  }
});

test.run();
