import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closest, unknownCommand, unknownOption } from '../../src/cli/suggest.js';

test('a near miss names what was meant; a far one names nothing', () => {
  assert.equal(closest('--jsn', ['--json', '--addr']), ['--json']);
  assert.equal(closest('--adr', ['--addr', '--access-key']), ['--addr']);
  assert.equal(closest('stat', ['serve', 'status']), ['status'], 'a prefix is close');
  assert.equal(closest('--frobnicate', ['--json', '--addr']), []);
  assert.equal(closest('servce', ['serve', 'service', 'status']), ['serve', 'service']);
  assert.equal(closest('--jsno', ['--json']), ['--json'], 'a swap is one edit');
});

test('flags from other servers point at what svc calls them', () => {
  const line = unknownOption('--port=9000', ['--addr'], 'serve');
  assert.match(line, /^unknown option --port; did you mean --addr HOST:PORT/);
  assert.match(line, /svc serve --help/);
  assert.not.match(line, /9000"/, 'the value given is not echoed as a flag');
  assert.is(unknownOption('--zzz', ['--json']), 'unknown option --zzz (see "svc --help")');
});

test('messages stay one line', () => {
  for (const m of [unknownOption('--port', []), unknownCommand('servce', ['serve', 'service'])])
    assert.not.match(m, /\n/);
});

test.run();
