import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendAudit, scrubSecrets } from '../../src/shared/audit.js';
import { redact } from '../../src/shared/log.js';

const root = mkdtempSync(join(tmpdir(), 'svc-audit-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('one JSON line per entry with an ISO timestamp, in a 0700 folder and a 0600 file', () => {
  const file = join(root, 'shape', 'logs', 'audit.log');
  assert.ok(
    appendAudit(file, {
      session_id: 's1',
      turn_id: 't1',
      tool: 'terminal',
      input: { command: 'curl https://x.org' },
      decision: 'ask',
      reason: 'This command reaches the network.',
    }),
  );
  assert.ok(
    appendAudit(file, {
      session_id: 's1',
      tool: 'terminal',
      input: { command: 'curl https://x.org' },
      decision: 'allow_once',
    }),
  );
  const [a, b] = lines(file);
  assert.equal(Object.keys(a!), [
    'ts',
    'session_id',
    'turn_id',
    'tool',
    'decision',
    'reason',
    'input',
  ]);
  assert.is(new Date(a!.ts as string).toISOString(), a!.ts);
  assert.equal(a!.input, { command: 'curl https://x.org' });
  assert.is(a!.decision, 'ask');
  assert.equal(Object.keys(b!), ['ts', 'session_id', 'tool', 'decision', 'input']);
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.is(statSync(join(root, 'shape', 'logs')).mode & 0o777, 0o700);
  for (const decision of [
    'deny',
    'allow_session',
    'denied_by_user',
    'withdrawn',
    'strict_denied',
  ] as const)
    assert.ok(appendAudit(file, { session_id: 's', tool: 'x', input: {}, decision }));
  assert.is(lines(file).length, 7);
});

test('an existing file with a looser mode is tightened to 0600', () => {
  const file = join(root, 'loose.log');
  writeFileSync(file, '', { mode: 0o644 });
  chmodSync(file, 0o644);
  appendAudit(file, { session_id: 's', tool: 't', input: {}, decision: 'deny' });
  assert.is(statSync(file).mode & 0o777, 0o600);
});

test('every string in the input is cut to 1,024 characters with a marker', () => {
  const file = join(root, 'cut.log');
  const long = 'a'.repeat(5000);
  appendAudit(file, {
    session_id: 's',
    tool: 'write_file',
    input: {
      path: '/x',
      content: long,
      nested: { list: [long, 'short'] },
      n: 3,
      ok: true,
      none: null,
    },
    decision: 'ask',
    reason: long,
  });
  const [e] = lines(file);
  const input = e!.input as {
    path: string;
    content: string;
    nested: { list: string[] };
    n: number;
    ok: boolean;
    none: null;
  };
  assert.is(input.content, `${'a'.repeat(1024)}…[truncated, 5000 chars in all]`);
  assert.is(input.nested.list[0], input.content);
  assert.is(input.nested.list[1], 'short');
  assert.is(input.path, '/x');
  assert.is(input.n, 3);
  assert.is(input.ok, true);
  assert.is(input.none, null);
  assert.ok((e!.reason as string).startsWith('a'.repeat(1024) + '…[truncated'));
});

test('secrets are scrubbed: registered ones and common key shapes', () => {
  redact('registered-secret-value-42');
  const file = join(root, 'secrets.log');
  const key = [
    '-----BEGIN OPENSSH PRIVATE KEY-----',
    'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ',
    '-----END OPENSSH PRIVATE KEY-----',
  ].join('\n');
  const secrets = [
    'registered-secret-value-42',
    'sk-proj-abcdefghijklmnopqrstuvwxyz012345',
    'sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA',
    'ghp_0123456789abcdefghijABCDEFGHIJklmnop',
    'AKIAIOSFODNN7EXAMPLE',
    'xoxb-123456789012-abcdefghijkl',
    'xoxp-123456789012-abcdefghijkl',
    'eyJhbGciOiJIUzI1NiJ9.payload.signature',
    'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ',
  ];
  appendAudit(file, {
    session_id: 's',
    tool: 'terminal',
    input: {
      command: `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature" -H "x-api-key: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA" https://x.org?k=registered-secret-value-42`,
      env: [
        'OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345',
        'GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJklmnop',
      ],
      aws: 'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
      slack: 'xoxb-123456789012-abcdefghijkl and xoxp-123456789012-abcdefghijkl',
      content: `before\n${key}\nafter`,
      cut: `${'x'.repeat(1020)}sk-proj-abcdefghijklmnopqrstuvwxyz012345`,
    },
    decision: 'deny',
    reason: 'token ghp_0123456789abcdefghijABCDEFGHIJklmnop in reason',
  });
  const text = readFileSync(file, 'utf8');
  for (const s of secrets) assert.not.ok(text.includes(s), `${s} leaked`);
  assert.not.ok(text.includes('sk-proj-abcd'), 'no half key is left by the cut');
  assert.ok(text.includes('Bearer [redacted]'));
  assert.ok(text.includes('[redacted private key]'));
  assert.ok(text.includes('before') && text.includes('after'));
  assert.is(
    scrubSecrets('plain text with sk- and ghp_ short'),
    'plain text with sk- and ghp_ short',
  );
});

test('rotated by size: audit.log.1 … .3 kept, the oldest dropped', () => {
  const dir = join(root, 'rotate');
  const file = join(dir, 'audit.log');
  const limit = 1000;
  for (let i = 0; i < 40; i++) {
    assert.ok(
      appendAudit(
        file,
        {
          session_id: `s${i}`,
          tool: 'terminal',
          input: { command: `echo ${i} ${'y'.repeat(150)}` },
          decision: 'ask',
        },
        { maxBytes: limit },
      ),
    );
  }
  for (const f of [file, `${file}.1`, `${file}.2`, `${file}.3`]) {
    assert.ok(existsSync(f), f);
    assert.ok(statSync(f).size <= limit, `${f} is ${statSync(f).size} bytes`);
    assert.is(statSync(f).mode & 0o777, 0o600);
  }
  assert.not.ok(existsSync(`${file}.4`));
  const newest = lines(file);
  assert.is(newest.at(-1)!.session_id, 's39');
  const older = lines(`${file}.1`);
  const lastOlder = Number((older.at(-1)!.session_id as string).slice(1));
  assert.is(
    lastOlder + 1,
    Number((newest[0]!.session_id as string).slice(1)),
    'no line is lost between files',
  );
});

test('a logging failure returns false and never throws', () => {
  const blocker = join(root, 'not-a-dir');
  writeFileSync(blocker, 'x');
  assert.is(
    appendAudit(join(blocker, 'logs', 'audit.log'), {
      session_id: 's',
      tool: 't',
      input: {},
      decision: 'deny',
    }),
    false,
  );
  const dirAsFile = join(root, 'dir-as-file');
  mkdirSync(dirAsFile);
  assert.is(
    appendAudit(dirAsFile, { session_id: 's', tool: 't', input: {}, decision: 'deny' }),
    false,
  );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.ok(
    appendAudit(join(root, 'cyclic.log'), {
      session_id: 's',
      tool: 't',
      input: cyclic,
      decision: 'deny',
    }),
  );
});

test.run();
