import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { answerMismatch } from '../../src/gateway/answer-check.js';
import { route } from '../../src/gateway/route.js';

const item = z.object({ id: z.string(), n: z.number() });
const r = route({
  method: 'POST',
  path: '/api/things',
  summary: 'a thing',
  status: 201,
  response: item,
  others: { 202: { description: 'later', schema: z.object({ status: z.literal('queued') }) } },
  handler: () => ({ status: 201, body: { id: 'a', n: 1 } }),
});

test('an answer its schema describes passes, JSON text included', () => {
  assert.is(answerMismatch(r, { status: 201, body: { id: 'a', n: 1 } }), undefined);
  assert.is(
    answerMismatch(r, {
      status: 201,
      body: Buffer.from('{"id":"a","n":2}'),
      headers: { 'Content-Type': 'application/json' },
    }),
    undefined,
  );
  assert.is(answerMismatch(r, { status: 202, body: { status: 'queued' } }), undefined);
  assert.is(
    answerMismatch(r, { status: 409, body: { error: {} } }),
    undefined,
    'errors are not 2xx',
  );
});

test('a wrong type, a missing field, an unnamed field and an undeclared status are named', () => {
  assert.match(answerMismatch(r, { status: 201, body: { id: 'a', n: '1' } }) ?? '', /^n: /);
  assert.match(answerMismatch(r, { status: 201, body: { id: 'a' } }) ?? '', /^n: /);
  assert.match(
    answerMismatch(r, { status: 201, body: { id: 'a', n: 1, secret: 'x' } }) ?? '',
    /does not name: secret/,
  );
  assert.match(answerMismatch(r, { body: { id: 'a', n: 1 } }) ?? '', /answered 200/);
  assert.match(answerMismatch(r, { status: 201, body: 'text' }) ?? '', /not JSON/);
});

test.run();
