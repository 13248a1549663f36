import { isIP } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  decide,
  forwardingHeaders,
  isLocalRequest,
  KEY_COOKIE,
  KeyCheck,
  originAllowed,
  parseCookies,
  presentedKeys,
  type AuthInput,
} from '../../src/gateway/auth.js';
import { ipv6Bytes, isLoopbackBytes, isLoopbackText } from '../../src/shared/net/addr.js';

/*
 * A table test of the auth decision (docs/security.md). The expected outcome of every row is
 * computed here from the written rules, independently of the code under test:
 *   a present Origin that is neither local, allowlisted nor the Host's own origin → 403 forbidden_origin (checked first);
 *   public route → allow; valid key → allow; local request → allow; else 401 unauthorized.
 * local = loopback peer AND a local Host AND no forwarding header (presence alone, even empty).
 */

const KEY = 'a'.repeat(16) + '0123456789abcdef'.repeat(3); // 64 hex chars, like a real key
const WRONG = 'b'.repeat(64);
const keyCheck = new KeyCheck(KEY);

// ---------------------------------------------------------------------------------------------
// Peers: each address is turned into socket bytes (as uWS hands them over) and the loopback test
// is run on those bytes, then cross-checked against the textual test and our own expectation.

function addressBytes(ip: string): Uint8Array {
  if (isIP(ip) === 4) return Uint8Array.from(ip.split('.').map(Number));
  const b = ipv6Bytes(ip);
  if (!b) throw new Error(`not an address: ${ip}`);
  return b;
}

interface Peer {
  ip: string;
  loopback: boolean;
}

const peers: Peer[] = [
  { ip: '127.0.0.1', loopback: true },
  { ip: '127.5.5.5', loopback: true },
  { ip: '::1', loopback: true },
  { ip: '::ffff:127.0.0.1', loopback: true },
  { ip: '10.0.0.2', loopback: false },
  { ip: '192.168.1.20', loopback: false },
  { ip: '::ffff:10.0.0.2', loopback: false },
  { ip: '2001:db8::1', loopback: false },
  { ip: '::', loopback: false },
  { ip: '::2', loopback: false },
  { ip: '0.0.0.0', loopback: false },
];

test('loopback by socket bytes and by text: 127/8, ::1, ::ffff:127/104 and nothing else', () => {
  for (const p of peers) {
    const bytes = addressBytes(p.ip);
    assert.is(bytes.length, isIP(p.ip) === 4 ? 4 : 16, `byte length of ${p.ip}`);
    assert.is(isLoopbackBytes(bytes), p.loopback, `isLoopbackBytes(${p.ip})`);
    assert.is(isLoopbackText(p.ip), p.loopback, `isLoopbackText(${p.ip})`);
  }
  // Other spellings node accepts for the same addresses.
  assert.ok(isLoopbackText('::ffff:7f00:1'), '::ffff:7f00:1 is ::ffff:127.0.0.1');
  assert.ok(isLoopbackText('0:0:0:0:0:0:0:1'), 'the long form of ::1');
  assert.ok(isLoopbackText('127.255.255.254'));
  assert.not.ok(isLoopbackText('128.0.0.1'));
  assert.not.ok(isLoopbackText('::127.0.0.1'), 'IPv4-compatible (not mapped) is not loopback');
  assert.not.ok(isLoopbackText('::ffff:128.0.0.1'));
  assert.not.ok(isLoopbackText('localhost'), 'a name is not an address');
  assert.not.ok(isLoopbackText(''));
  assert.not.ok(isLoopbackBytes(new Uint8Array(0)));
  assert.not.ok(isLoopbackBytes(new Uint8Array(5).fill(127)));
});

// ---------------------------------------------------------------------------------------------
// Host headers.

interface HostCase {
  label: string;
  value: string | undefined;
  local: boolean;
}

const hosts: HostCase[] = [
  { label: 'localhost', value: 'localhost', local: true },
  { label: 'localhost:8088', value: 'localhost:8088', local: true },
  { label: '127.0.0.1:x', value: '127.0.0.1:40123', local: true },
  { label: '127.9.8.7', value: '127.9.8.7', local: true },
  { label: '[::1]:x', value: '[::1]:40123', local: true },
  { label: '[::ffff:127.0.0.1]:x', value: '[::ffff:127.0.0.1]:40123', local: true },
  { label: 'LOCALHOST.', value: 'LOCALHOST.', local: true },
  { label: 'LocalHost.:8088', value: 'LocalHost.:8088', local: true },
  { label: 'evil.example', value: 'evil.example', local: false },
  { label: 'evil.example:8088', value: 'evil.example:8088', local: false },
  { label: 'missing Host', value: undefined, local: false },
  { label: 'empty Host', value: '', local: false },
  { label: '0.0.0.0', value: '0.0.0.0', local: false },
  { label: '0.0.0.0:8088', value: '0.0.0.0:8088', local: false },
  { label: 'localhost.evil.example', value: 'localhost.evil.example', local: false },
  { label: '127.0.0.1.evil.example', value: '127.0.0.1.evil.example', local: false },
  { label: '10.0.0.1:8088', value: '10.0.0.1:8088', local: false },
  { label: '[2001:db8::1]:8088', value: '[2001:db8::1]:8088', local: false },
  { label: 'two Host headers joined', value: 'localhost, evil.example', local: false },
];

// ---------------------------------------------------------------------------------------------
// Forwarding headers: none, or one of the six, with a value or empty.

interface FwdCase {
  label: string;
  headers: Record<string, string>;
}

const forwarding: FwdCase[] = [
  { label: 'no forwarding header', headers: {} },
  ...forwardingHeaders.flatMap((h) => [
    {
      label: `${h}: 127.0.0.1`,
      headers: {
        [h]:
          h === 'forwarded'
            ? 'for=127.0.0.1'
            : h === 'via'
              ? '1.1 localhost'
              : h === 'x-forwarded-proto'
                ? 'http'
                : h === 'x-forwarded-host'
                  ? 'localhost'
                  : '127.0.0.1',
      },
    },
    { label: `${h} (empty)`, headers: { [h]: '' } },
  ]),
];

test('the forwarding headers are exactly the six names of docs/security.md', () => {
  assert.equal([...forwardingHeaders].sort(), [
    'forwarded',
    'via',
    'x-forwarded-for',
    'x-forwarded-host',
    'x-forwarded-proto',
    'x-real-ip',
  ]);
});

// ---------------------------------------------------------------------------------------------
// Routes and key sources.

interface RouteCase {
  label: string;
  path: string;
  isPublic: boolean;
}

const routes: RouteCase[] = [
  { label: 'GET /api/health (public)', path: '/api/health', isPublic: true },
  { label: 'GET /api/version (public)', path: '/api/version', isPublic: true },
  { label: 'GET /api/status (protected)', path: '/api/status', isPublic: false },
  { label: 'unknown /api path (protected)', path: '/api/nope', isPublic: false },
  { label: '/ws upgrade (protected)', path: '/ws', isPublic: false },
];

interface KeyCase {
  label: string;
  headers: Record<string, string>;
  queryKey?: string;
  /** Whether this presents the right key in a place the route honours. */
  valid: (route: RouteCase) => boolean;
}

const keySources: KeyCase[] = [
  { label: 'no key', headers: {}, valid: () => false },
  { label: 'Bearer right', headers: { authorization: `Bearer ${KEY}` }, valid: () => true },
  {
    label: 'bearer right (lower-case scheme)',
    headers: { authorization: `bearer ${KEY}` },
    valid: () => true,
  },
  { label: 'Bearer wrong', headers: { authorization: `Bearer ${WRONG}` }, valid: () => false },
  { label: 'Basic with the key', headers: { authorization: `Basic ${KEY}` }, valid: () => false },
  { label: 'Bearer with no token', headers: { authorization: 'Bearer ' }, valid: () => false },
  { label: 'X-Access-Key right', headers: { 'x-access-key': KEY }, valid: () => true },
  { label: 'X-Access-Key wrong', headers: { 'x-access-key': WRONG }, valid: () => false },
  {
    label: 'X-Access-Key prefix of the key',
    headers: { 'x-access-key': KEY.slice(0, 63) },
    valid: () => false,
  },
  {
    label: 'cookie right',
    headers: { cookie: `theme=dark; ${KEY_COOKIE}=${KEY}` },
    valid: () => true,
  },
  { label: 'cookie wrong', headers: { cookie: `${KEY_COOKIE}=${WRONG}` }, valid: () => false },
  { label: 'key in another cookie', headers: { cookie: `other=${KEY}` }, valid: () => false },
  { label: '?access_key right', headers: {}, queryKey: KEY, valid: (r) => r.path === '/ws' },
  { label: '?access_key wrong', headers: {}, queryKey: WRONG, valid: () => false },
  {
    label: 'wrong Bearer plus right cookie',
    headers: { authorization: `Bearer ${WRONG}`, cookie: `${KEY_COOKIE}=${KEY}` },
    valid: () => true,
  },
];

// ---------------------------------------------------------------------------------------------
// Origins.

const ALLOWED = 'https://app.example';

interface OriginCase {
  label: string;
  value: string | undefined;
  ok: boolean;
}

const origins: OriginCase[] = [
  { label: 'no Origin', value: undefined, ok: true },
  { label: 'http://localhost:3000', value: 'http://localhost:3000', ok: true },
  { label: 'http://127.0.0.1', value: 'http://127.0.0.1', ok: true },
  { label: 'http://[::1]:5173', value: 'http://[::1]:5173', ok: true },
  { label: 'allowlisted https://app.example', value: ALLOWED, ok: true },
  { label: 'allowlisted, upper-case with a slash', value: 'HTTPS://APP.EXAMPLE/', ok: true },
  { label: 'foreign https://evil.example', value: 'https://evil.example', ok: false },
  { label: 'http://app.example (other scheme)', value: 'http://app.example', ok: false },
  {
    label: 'https://app.example.evil.example',
    value: 'https://app.example.evil.example',
    ok: false,
  },
  { label: 'http://localhost.evil.example', value: 'http://localhost.evil.example', ok: false },
  { label: '"null"', value: 'null', ok: false },
  { label: 'literal "*"', value: '*', ok: false },
  { label: 'empty Origin', value: '', ok: false },
  { label: 'file://', value: 'file://', ok: false },
];

const allowlists: Array<{ label: string; set: ReadonlySet<string> }> = [
  { label: 'allowlist {app.example}', set: new Set([ALLOWED]) },
  { label: 'allowlist {app.example, "*"}', set: new Set([ALLOWED, '*']) },
];

// ---------------------------------------------------------------------------------------------

type Expected =
  | { ok: true; via: 'public' | 'key' | 'local'; local: boolean }
  | { ok: false; code: 'forbidden_origin' | 'unauthorized' };

function expected(
  peer: Peer,
  host: HostCase,
  fwd: FwdCase,
  key: KeyCase,
  origin: OriginCase,
  route: RouteCase,
): Expected {
  const local = peer.loopback && host.local && Object.keys(fwd.headers).length === 0;
  // The page's own origin (Origin naming the Host it was sent to) is not cross-site.
  const sameOrigin =
    origin.value !== undefined &&
    host.value !== undefined &&
    [`http://${host.value.toLowerCase()}`, `https://${host.value.toLowerCase()}`].includes(
      origin.value.toLowerCase(),
    );
  // Another local origin may read, but not open /ws (nor change anything).
  const localOnly =
    origin.value !== undefined &&
    origin.ok &&
    !origin.label.startsWith('allowlisted') &&
    !sameOrigin;
  if ((!origin.ok && !sameOrigin) || (localOnly && route.path === '/ws'))
    return { ok: false, code: 'forbidden_origin' };
  if (route.isPublic) return { ok: true, via: 'public', local };
  if (key.valid(route)) return { ok: true, via: 'key', local };
  if (local) return { ok: true, via: 'local', local };
  return { ok: false, code: 'unauthorized' };
}

function inputOf(
  peer: Peer,
  host: HostCase,
  fwd: FwdCase,
  key: KeyCase,
  origin: OriginCase,
  route: RouteCase,
): AuthInput {
  const headers: Record<string, string> = { ...fwd.headers, ...key.headers };
  if (host.value !== undefined) headers['host'] = host.value;
  if (origin.value !== undefined) headers['origin'] = origin.value;
  return {
    peerLoopback: isLoopbackBytes(addressBytes(peer.ip)),
    path: route.path,
    headers,
    queryKey: key.queryKey,
    isPublic: route.isPublic,
  };
}

// The full cross product would be millions of rows; the decision table uses a representative
// subset of each dimension (every rule and every key source stays covered). The full peer, Host
// and forwarding lists are checked against isLocalRequest, and every Origin against
// originAllowed, in the two tests below.
const tablePeers = peers.filter((p) =>
  ['127.0.0.1', '127.5.5.5', '::1', '::ffff:127.0.0.1', '10.0.0.2', '2001:db8::1'].includes(p.ip),
);
const tableHosts = hosts.filter((h) =>
  [
    'localhost',
    'localhost:8088',
    '127.0.0.1:x',
    '[::1]:x',
    'LOCALHOST.',
    'evil.example',
    'missing Host',
    'empty Host',
    '0.0.0.0',
    'localhost.evil.example',
    'two Host headers joined',
  ].includes(h.label),
);
const tableRoutes = routes.filter((r) => ['/api/health', '/api/status', '/ws'].includes(r.path));
const tableForwarding = forwarding.filter(
  (f) =>
    Object.keys(f.headers).length === 0 ||
    Object.values(f.headers)[0] === '' ||
    f.label.startsWith('x-forwarded-for:'),
);
const tableOrigins = origins.filter(
  (o) =>
    ![
      'https://app.example.evil.example',
      'http://localhost.evil.example',
      'empty Origin',
      'file://',
    ].includes(o.label),
);

test('isLocalRequest: every peer × Host × forwarding header', () => {
  let rows = 0;
  for (const peer of peers)
    for (const host of hosts)
      for (const fwd of forwarding) {
        rows++;
        const headers: Record<string, string> = { ...fwd.headers };
        if (host.value !== undefined) headers['host'] = host.value;
        const want = peer.loopback && host.local && Object.keys(fwd.headers).length === 0;
        assert.is(
          isLocalRequest({ peerLoopback: isLoopbackBytes(addressBytes(peer.ip)), headers }),
          want,
          `peer ${peer.ip} | Host ${host.label} | ${fwd.label}`,
        );
      }
  assert.is(rows, peers.length * hosts.length * forwarding.length);
});

test('originAllowed: every Origin against both allowlists', () => {
  for (const list of allowlists)
    for (const origin of origins) {
      assert.is(
        originAllowed(origin.value, list.set),
        origin.ok,
        `Origin ${origin.label} with ${list.label}`,
      );
    }
});

test('decide(): peer × Host × forwarding header × key source × Origin × route follows the rules', () => {
  const failures: string[] = [];
  let rows = 0;
  const counts = { public: 0, key: 0, local: 0, unauthorized: 0, forbidden_origin: 0 };
  for (const list of allowlists) {
    // With "*" in the set, the outcome must be exactly what it is without them.
    const originsHere = list.set.has('*')
      ? tableOrigins.filter((o) =>
          [
            'literal "*"',
            'no Origin',
            'allowlisted https://app.example',
            'foreign https://evil.example',
          ].includes(o.label),
        )
      : tableOrigins;
    for (const origin of originsHere) {
      for (const route of tableRoutes)
        for (const peer of tablePeers)
          for (const host of tableHosts)
            for (const fwd of tableForwarding)
              for (const key of keySources) {
                rows++;
                const want = expected(peer, host, fwd, key, origin, route);
                const got = decide(
                  inputOf(peer, host, fwd, key, origin, route),
                  keyCheck,
                  list.set,
                );
                let problem: string | undefined;
                if (want.ok) {
                  if (!got.ok)
                    problem = `want allow via ${want.via}, got ${got.error.status} ${got.error.code}`;
                  else if (got.via !== want.via || got.local !== want.local)
                    problem = `want via ${want.via} local=${want.local}, got via ${got.via} local=${got.local}`;
                  else counts[got.via]++;
                } else if (got.ok) {
                  problem = `want ${want.code}, got allow via ${got.via}`;
                } else if (got.error.code !== want.code) {
                  problem = `want ${want.code}, got ${got.error.code}`;
                } else {
                  counts[want.code]++;
                  const status = want.code === 'unauthorized' ? 401 : 403;
                  if (got.error.status !== status)
                    problem = `want status ${status}, got ${got.error.status}`;
                  else if (
                    want.code === 'unauthorized' &&
                    !/^Bearer\b/.test(got.error.headers?.['WWW-Authenticate'] ?? '')
                  )
                    problem = 'a 401 without WWW-Authenticate: Bearer';
                  else if (got.error.message.includes(KEY))
                    problem = 'the error message contains the key';
                }
                if (problem)
                  failures.push(
                    `[${list.label}] peer ${peer.ip} | Host ${host.label} | ${fwd.label} | ${key.label} | Origin ${origin.label} | ${route.label}: ${problem}`,
                  );
              }
    }
  }
  // Every outcome is reached many times, so the table really exercises each rule.
  for (const [k, n] of Object.entries(counts))
    assert.ok(n > 100, `outcome ${k} reached only ${n} times`);
  assert.ok(rows > 100_000, `only ${rows} rows`);
  assert.is(
    failures.length,
    0,
    `${failures.length} of ${rows} rows wrong, for example:\n${failures.slice(0, 12).join('\n')}`,
  );
});

// ---------------------------------------------------------------------------------------------
// A few rows spelled out, so a reader sees the rules without running the generator in their head.

const base = (over: Partial<AuthInput> & { headers?: Record<string, string> }): AuthInput => ({
  peerLoopback: true,
  path: '/api/status',
  queryKey: undefined,
  isPublic: false,
  ...over,
  headers: { host: '127.0.0.1:8088', ...over.headers },
});
const allow = new Set([ALLOWED]);

test('loopback + local Host + no forwarding header is local; any one missing is not', () => {
  const d = decide(base({}), keyCheck, allow);
  assert.ok(d.ok && d.via === 'local' && d.local);
  const remote = decide(base({ peerLoopback: false }), keyCheck, allow);
  assert.ok(!remote.ok && remote.error.code === 'unauthorized' && remote.error.status === 401);
  const rebinding = decide(base({ headers: { host: 'evil.example' } }), keyCheck, allow);
  assert.ok(!rebinding.ok && rebinding.error.code === 'unauthorized');
  const proxied = decide(base({ headers: { 'x-forwarded-for': '' } }), keyCheck, allow);
  assert.ok(
    !proxied.ok && proxied.error.code === 'unauthorized',
    'an empty X-Forwarded-For still withdraws the exemption',
  );
  const noHost = decide(
    { peerLoopback: true, path: '/api/status', queryKey: undefined, isPublic: false, headers: {} },
    keyCheck,
    allow,
  );
  assert.ok(!noHost.ok && noHost.error.code === 'unauthorized', 'no Host header is not local');
});

test('a forwarding header is never parsed: one naming loopback grants nothing to a remote peer', () => {
  for (const h of forwardingHeaders) {
    const d = decide(
      base({ peerLoopback: false, headers: { [h]: '127.0.0.1', host: 'localhost' } }),
      keyCheck,
      allow,
    );
    assert.ok(!d.ok && d.error.code === 'unauthorized', h);
    assert.not.ok(
      isLocalRequest({ peerLoopback: true, headers: { host: 'localhost', [h]: '' } }),
      `${h} (empty) on loopback`,
    );
  }
});

test('the key works from anywhere, through a proxy too; a public route needs nothing', () => {
  const d = decide(
    base({
      peerLoopback: false,
      headers: {
        host: 'evil.example',
        'x-forwarded-for': '1.2.3.4',
        authorization: `Bearer ${KEY}`,
      },
    }),
    keyCheck,
    allow,
  );
  assert.ok(d.ok && d.via === 'key' && !d.local);
  const pub = decide(
    base({
      peerLoopback: false,
      path: '/api/health',
      isPublic: true,
      headers: { host: 'evil.example' },
    }),
    keyCheck,
    allow,
  );
  assert.ok(pub.ok && pub.via === 'public' && !pub.local);
});

test('?access_key= is honoured on /ws only', () => {
  const ws = decide(
    base({ peerLoopback: false, path: '/ws', queryKey: KEY, headers: { host: 'evil.example' } }),
    keyCheck,
    allow,
  );
  assert.ok(ws.ok && ws.via === 'key');
  const api = decide(
    base({
      peerLoopback: false,
      path: '/api/status',
      queryKey: KEY,
      headers: { host: 'evil.example' },
    }),
    keyCheck,
    allow,
  );
  assert.ok(!api.ok && api.error.code === 'unauthorized');
  const wsSlash = decide(
    base({ peerLoopback: false, path: '/ws/', queryKey: KEY, headers: { host: 'evil.example' } }),
    keyCheck,
    allow,
  );
  assert.ok(!wsSlash.ok, 'only the exact /ws path');
  assert.equal(presentedKeys({ path: '/api/status', queryKey: KEY, headers: {} }), []);
  assert.equal(presentedKeys({ path: '/ws', queryKey: KEY, headers: {} }), [KEY]);
});

test('a foreign Origin is refused first: before the public route, the key and the local exemption', () => {
  const foreign = { origin: 'https://evil.example' };
  for (const input of [
    base({ headers: foreign }),
    base({ headers: { ...foreign, authorization: `Bearer ${KEY}` } }),
    base({ path: '/api/health', isPublic: true, headers: foreign }),
    base({ path: '/ws', queryKey: KEY, headers: foreign }),
  ]) {
    const d = decide(input, keyCheck, allow);
    assert.ok(!d.ok, `${input.path} with a foreign Origin was allowed`);
    assert.is(d.error.code, 'forbidden_origin');
    assert.is(d.error.status, 403);
  }
});

test('a literal "*" is never an allowed origin, even when "*" is in the allowlist set', () => {
  const poisoned = new Set([ALLOWED, '*']);
  assert.not.ok(originAllowed('*', poisoned), 'originAllowed("*")');
  assert.not.ok(originAllowed(' * ', poisoned), 'originAllowed(" * ")');
  assert.not.ok(originAllowed('https://evil.example', poisoned), '"*" is not a wildcard');
  const d = decide(base({ headers: { origin: '*' } }), keyCheck, poisoned);
  assert.ok(!d.ok && d.error.code === 'forbidden_origin', 'decide with Origin "*"');
  assert.ok(originAllowed(ALLOWED, poisoned), 'the real entry still counts');
  assert.ok(originAllowed(undefined, poisoned), 'no Origin is fine');
});

// ---------------------------------------------------------------------------------------------

test('parseCookies: pairs, spacing, quotes, percent-decoding, first one wins, junk skipped', () => {
  assert.is(parseCookies(undefined).size, 0);
  assert.is(parseCookies('').size, 0);
  const c = parseCookies(
    `a=1;b=2 ;  ${KEY_COOKIE}=${KEY}; d="quoted"; e=%41%20b; f=x=y; junk; a=second; g=%E0%A4%A; h=`,
  );
  assert.is(c.get('a'), '1', 'the first of two same-named cookies wins');
  assert.is(c.get('b'), '2');
  assert.is(c.get(KEY_COOKIE), KEY);
  assert.is(c.get('d'), 'quoted');
  assert.is(c.get('e'), 'A b');
  assert.is(c.get('f'), 'x=y', 'a value may contain "="');
  assert.not.ok(c.has('junk'), 'a part without "=" is skipped');
  assert.is(c.get('g'), '%E0%A4%A', 'a bad escape is kept raw, not thrown');
  assert.is(c.get('h'), '');
  assert.equal([...parseCookies(' x = 1 ').entries()], [['x', '1']]);
});

test('a cookie with an encoded key still matches; the same key in another cookie does not count', () => {
  const encoded = decide(
    base({
      peerLoopback: false,
      headers: { host: 'evil.example', cookie: `${KEY_COOKIE}=${encodeURIComponent(KEY)}` },
    }),
    keyCheck,
    allow,
  );
  assert.ok(encoded.ok && encoded.via === 'key');
  const spoof = decide(
    base({
      peerLoopback: false,
      headers: { host: 'evil.example', cookie: `x${KEY_COOKIE}=${KEY}` },
    }),
    keyCheck,
    allow,
  );
  assert.ok(!spoof.ok);
});

test('KeyCheck: right, wrong, shorter, longer and empty candidates; never throws on a length mismatch', () => {
  const k = new KeyCheck(KEY);
  assert.ok(k.matches(KEY));
  assert.ok(k.matches(String(KEY)), 'a different string object with the same text');
  assert.not.ok(k.matches(WRONG), 'same length, different key');
  assert.not.ok(
    k.matches(KEY.slice(0, -1) + (KEY.endsWith('f') ? 'e' : 'f')),
    'last character differs',
  );
  assert.not.ok(k.matches(KEY.slice(0, 32)), 'a prefix');
  assert.not.ok(k.matches(KEY + '0'), 'one character longer');
  assert.not.ok(k.matches(KEY.toUpperCase()), 'case matters');
  assert.not.ok(k.matches(''), 'empty');
  assert.not.ok(k.matches('x'.repeat(10_000)), 'much longer');
  assert.not.ok(new KeyCheck('short').matches(KEY), 'a short key against a long candidate');
  assert.ok(new KeyCheck('short').matches('short'));
});

test('presentedKeys reads Bearer, X-Access-Key and the cookie, trimmed; nothing else', () => {
  assert.equal(
    presentedKeys({
      path: '/api/status',
      queryKey: undefined,
      headers: { authorization: `Bearer   ${KEY}  ` },
    }),
    [KEY],
  );
  assert.equal(
    presentedKeys({
      path: '/api/status',
      queryKey: undefined,
      headers: { 'x-access-key': `  ${KEY} ` },
    }),
    [KEY],
  );
  assert.equal(
    presentedKeys({
      path: '/api/status',
      queryKey: undefined,
      headers: { authorization: `Token ${KEY}`, 'x-api-key': KEY },
    }),
    [],
  );
  assert.equal(
    presentedKeys({
      path: '/api/status',
      queryKey: undefined,
      headers: { authorization: `Bearer ${KEY} extra` },
    }),
    [],
  );
});

test.run();
