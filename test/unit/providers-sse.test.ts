import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SseParser, type SseEvent } from '../../src/workers/agent/providers/index.js';

/** Feeds `chunks` to a fresh parser and returns every event, the end flush included. */
function parse(chunks: Array<Uint8Array | string>): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out;
}

const bytes = (s: string) => new TextEncoder().encode(s);

// Every feature at once: CRLF, CR and LF line ends, a comment, multi-line data, named events,
// an id, a field without a colon, no space after the colon, and multi-byte UTF-8 (2, 3 and 4 bytes).
const stream =
  ': hello, a comment\r\n' +
  'event: message_start\r\n' +
  'data: {"a":"é"}\r\n\r\n' +
  'data: line one\n' +
  'data: line two\n' +
  'id: 7\n\n' +
  'event: delta\rdata:no-space €\r\r' +
  'data\n\n' +
  'data: 🙂 end\n\n';

const expected: SseEvent[] = [
  { event: 'message_start', data: '{"a":"é"}' },
  { event: 'message', data: 'line one\nline two', id: '7' },
  { event: 'delta', data: 'no-space €', id: '7' },
  { event: 'message', data: '', id: '7' },
  { event: 'message', data: '🙂 end', id: '7' },
];

test('parses a stream delivered whole', () => {
  assert.equal(parse([bytes(stream)]), expected);
});

test('the same events whatever the byte position of a single split', () => {
  const all = bytes(stream);
  for (let i = 0; i <= all.length; i++) {
    assert.equal(parse([all.subarray(0, i), all.subarray(i)]), expected, `split at byte ${i}`);
  }
});

test('the same events when every byte arrives alone', () => {
  const all = bytes(stream);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < all.length; i++) chunks.push(all.subarray(i, i + 1));
  assert.equal(parse(chunks), expected);
});

test('the same events for every pair of split positions', () => {
  const all = bytes(stream);
  for (let i = 0; i <= all.length; i += 3) {
    for (let j = i; j <= all.length; j += 2) {
      assert.equal(
        parse([all.subarray(0, i), all.subarray(i, j), all.subarray(j)]),
        expected,
        `splits at ${i} and ${j}`,
      );
    }
  }
});

test('a CR at the end of one chunk and LF at the start of the next are one line end', () => {
  assert.equal(parse(['data: a\r', '\n\r', '\ndata: b\r\n\r\n']), [
    { event: 'message', data: 'a' },
    { event: 'message', data: 'b' },
  ]);
});

test('comments and empty blocks produce no events; the event name resets after each event', () => {
  assert.equal(parse([': ping\n\n:\n\nevent: x\n\ndata: 1\n\n']), [
    { event: 'message', data: '1' },
  ]);
});

test('a leading byte-order mark is ignored', () => {
  assert.equal(
    parse([new Uint8Array([0xef, 0xbb]), new Uint8Array([0xbf]), bytes('data: x\n\n')]),
    [{ event: 'message', data: 'x' }],
  );
});

test('an event left open when the stream ends is still delivered', () => {
  assert.equal(parse(['data: [DONE]']), [{ event: 'message', data: '[DONE]' }]);
  assert.equal(parse(['data: [DONE]\n']), [{ event: 'message', data: '[DONE]' }]);
});

test('only the first space after the colon is removed', () => {
  assert.equal(parse(['data:  two spaces\n\n']), [{ event: 'message', data: ' two spaces' }]);
});

test.run();
