import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiErrorOf } from '../../src/gateway/error-map.js';
import { ApiError, StoreError } from '../../src/shared/errors.js';
import { IpcCallError } from '../../src/shared/protocol/endpoint.js';

/** One mapping from any failure to the error shape of docs/api.md#errors, used by HTTP, SSE and /ws alike. */

test('an ApiError is answered as it is', () => {
  const e = new ApiError('not_found', 'No session s_1.');
  assert.is(apiErrorOf(e), e);
});

test("another process's refusal keeps its code; a drain is a 503 with Retry-After", () => {
  const drain = apiErrorOf(new IpcCallError('draining', 'svc is restarting'), 7);
  assert.is(drain.status, 503);
  assert.equal(drain.headers, { 'Retry-After': '7' });
  assert.is(apiErrorOf(new IpcCallError('turn_in_progress', 'a turn runs')).status, 409);
  assert.is(apiErrorOf(new IpcCallError('not_found', 'gone')).code, 'not_found');
});

test('a lost or slow process is 503 or 504 with a next step; its internal code never reaches the client', () => {
  assert.is(apiErrorOf(new IpcCallError('timeout', 'agent.run took too long')).status, 504);
  const gone = apiErrorOf(new IpcCallError('no_route', 'the agent process exited'));
  assert.is(gone.code, 'unavailable');
  assert.match(gone.message, /Try again\.$/);
  assert.is(apiErrorOf(new IpcCallError('internal', 'boom')).code, 'unavailable');
});

test("the store's refusals read as the client errors of their kind, details kept", () => {
  const conflict = apiErrorOf(new StoreError('conflict', 'Taken.', { reason: 'original_taken' }));
  assert.equal(
    [conflict.status, conflict.code, conflict.details],
    [409, 'conflict', { reason: 'original_taken' }],
  );
  assert.is(apiErrorOf(new StoreError('invalid', 'Bad.')).status, 400);
  assert.is(apiErrorOf(new StoreError('not_found', 'Gone.')).status, 404);
});

test('a full disk is a 507; any other error is internal and says nothing of its details', () => {
  const full = Object.assign(new Error('SQLITE_FULL: database or disk is full'), {
    code: 'SQLITE_FULL',
  });
  assert.is(apiErrorOf(full).status, 507);
  const other = apiErrorOf(new Error('secret path /home/u/.svc/x and a stack'));
  assert.is(other.code, 'internal');
  assert.is(other.status, 500);
  assert.not.match(other.message, /secret|\/home/);
});

test.run();
