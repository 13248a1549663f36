import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  collect,
  createProvider,
  ProviderError,
  type ChatRequest,
  type ProviderOptions,
  type RetryNotice,
} from '../../src/workers/agent/providers/index.js';
import {
  parseRetryAfter,
  retryDelayMs,
  defaultRetryPolicy,
} from '../../src/shared/providers/retry.js';
import {
  httpError,
  startFakeProvider,
  textReply,
  type FakeProvider,
} from '../fixtures/fake-provider.js';

const KEY = 'sk-retry-test-key';
let fake: FakeProvider;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY });
});
test.after(async () => {
  await fake.close();
});
test.before.each(() => fake.reset());

// A 10 ms base backoff: a retry that ignored Retry-After would come almost at once.
const fast: ProviderOptions = { retry: { baseDelayMs: 10 } };
const openai = (opts: ProviderOptions = fast) =>
  createProvider({ protocol: 'openai', baseUrl: fake.baseUrl('openai'), apiKey: KEY }, opts);
const anthropic = (opts: ProviderOptions = fast) =>
  createProvider({ protocol: 'anthropic', baseUrl: fake.baseUrl('anthropic'), apiKey: KEY }, opts);
const ask: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProviderError) return err;
    throw err;
  }
  throw new Error('expected a ProviderError');
}

const gap = (i: number) => fake.requests[i + 1]!.at - fake.requests[i]!.at;

test('429 with Retry-After: the retry waits at least that long, then succeeds', async () => {
  fake.enqueue(httpError(429, { retryAfter: 1 }), textReply('after ', 'the wait'));
  const notices: RetryNotice[] = [];
  const c = await collect(openai({ ...fast, onRetry: (n) => notices.push(n) }).stream(ask));
  assert.is(c.text, 'after the wait');
  assert.is(fake.requests.length, 2);
  // Recorded arrival times; a few ms of slack for timer granularity, far from the 10 ms backoff.
  assert.ok(gap(0) >= 980, `second request came ${gap(0).toFixed(0)} ms after the first`);
  assert.equal(
    notices.map((n) => [n.attempt, n.delayMs, n.error.kind]),
    [[1, 1000, 'rate_limited']],
  );
});

test('429 with an HTTP-date Retry-After on a non-streamed request', async () => {
  const when = new Date(Date.now() + 3000).toUTCString();
  fake.enqueue(httpError(429, { retryAfter: when }), { parts: [{ text: 'ok' }] });
  const c = await anthropic().complete(ask);
  assert.is(c.text, 'ok');
  // The retry does not come before the date (a lower bound: a loaded machine only makes it later;
  // a few ms for the clocks' rounding). A 429 that went out after the date is retried at once.
  const early = Date.parse(when) - fake.requests[1]!.at;
  assert.ok(early <= 20, `the retry came ${early.toFixed(0)} ms before the date`);
});

test('5xx answers are retried with backoff until one succeeds', async () => {
  fake.enqueue(httpError(503), httpError(500), httpError(529), { parts: [{ text: 'finally' }] });
  const c = await collect(anthropic().stream(ask));
  assert.is(c.text, 'finally');
  assert.is(fake.requests.length, 4);
});

test('502 and 504 are retried too, for non-streamed requests', async () => {
  fake.enqueue(httpError(502, { body: '<html>Bad Gateway</html>' }), httpError(504), {
    parts: [{ text: 'ok' }],
  });
  const c = await openai().complete(ask);
  assert.is(c.text, 'ok');
  assert.is(fake.requests.length, 3);
});

test('attempts are bounded: four 500s give up with kind server after exactly 4 requests', async () => {
  fake.enqueue(
    httpError(500),
    httpError(500),
    httpError(500),
    httpError(500),
    textReply('never reached'),
  );
  const err = await failure(collect(openai().stream(ask)));
  assert.is(err.kind, 'server');
  assert.is(err.status, 500);
  assert.is(fake.requests.length, 4);
  assert.is(fake.pending, 1);
});

test('the number of attempts is configurable', async () => {
  fake.enqueue(httpError(503), textReply('x'));
  const err = await failure(openai({ retry: { attempts: 1 } }).complete(ask));
  assert.is(err.kind, 'overloaded');
  assert.is(fake.requests.length, 1);
});

test('400, 401, 403 and 404 are never retried', async () => {
  for (const status of [400, 401, 403, 404]) {
    fake.reset();
    fake.enqueue(httpError(status), textReply('should not be reached'));
    const err = await failure(collect(anthropic().stream(ask)));
    assert.is(err.status, status);
    assert.is(fake.requests.length, 1, `HTTP ${status}`);
  }
});

test('a Retry-After longer than the maximum wait ends the retries at once', async () => {
  fake.enqueue(httpError(429, { retryAfter: 120 }), textReply('x'));
  const notices: RetryNotice[] = [];
  const err = await failure(
    collect(openai({ ...fast, onRetry: (n) => notices.push(n) }).stream(ask)),
  );
  assert.is(err.kind, 'rate_limited');
  assert.is(err.retryAfterMs, 120_000);
  assert.is(fake.requests.length, 1);
  assert.equal(notices, [], 'no retry was planned, so nothing waited out the 120 s');
});

test('a connection cut before any output is retried', async () => {
  fake.enqueue({ parts: [{ drop: true }] }, textReply('second try'));
  const c = await collect(openai().stream(ask));
  assert.is(c.text, 'second try');
  assert.is(fake.requests.length, 2);
});

test('an overloaded error event before any output is retried; after output it is not', async () => {
  fake.enqueue(
    { parts: [{ error: { type: 'overloaded_error', message: 'Overloaded' } }] },
    textReply('ok'),
  );
  assert.is((await collect(anthropic().stream(ask))).text, 'ok');
  assert.is(fake.requests.length, 2);
  fake.reset();
  fake.enqueue(
    {
      parts: [{ text: 'partial' }, { error: { type: 'overloaded_error', message: 'Overloaded' } }],
    },
    textReply('never'),
  );
  const err = await failure(collect(anthropic().stream(ask)));
  assert.is(err.kind, 'overloaded');
  assert.is(fake.requests.length, 1);
});

test('cancelling during a backoff wait ends at once with kind cancelled', async () => {
  fake.enqueue(httpError(429, { retryAfter: 5 }), textReply('x'));
  const ac = new AbortController();
  let waiting!: (n: RetryNotice) => void;
  const inWait = new Promise<RetryNotice>((resolve) => (waiting = resolve));
  let err: ProviderError | undefined;
  // The notice comes just before the 5 s wait starts; one turn later the wait is under way.
  const onRetry = (n: RetryNotice) => setImmediate(() => waiting(n));
  void failure(collect(openai({ ...fast, onRetry }).stream({ ...ask, signal: ac.signal }))).then(
    (e) => (err = e),
  );
  assert.is((await inWait).delayMs, 5000);
  ac.abort();
  // "At once": settled within one turn of the event loop, with no timer having fired.
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(err, 'the cancel ended the wait');
  assert.is(err.kind, 'cancelled');
  assert.is(fake.requests.length, 1);
});

test('an unreachable host is reported as unreachable after the retries', async () => {
  const closed = await startFakeProvider();
  const url = closed.url;
  await closed.close();
  const err = await failure(
    collect(
      createProvider(
        { protocol: 'openai', baseUrl: url },
        { retry: { attempts: 2, baseDelayMs: 10 } },
      ).stream(ask),
    ),
  );
  assert.is(err.kind, 'unreachable');
  assert.match(err.message, /Could not connect to 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
});

test('Retry-After parsing: seconds, fractions, HTTP dates, retry-after-ms, garbage', () => {
  const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
  assert.is(parseRetryAfter({ 'retry-after': '3' }, now), 3000);
  assert.is(parseRetryAfter({ 'retry-after': '0.5' }, now), 500);
  assert.is(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:28:07 GMT' }, now), 7000);
  assert.is(parseRetryAfter({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, now), 0);
  assert.is(parseRetryAfter({ 'retry-after-ms': '1234', 'retry-after': '9' }, now), 1234);
  assert.is(parseRetryAfter({ 'retry-after': 'soon' }, now), undefined);
  assert.is(parseRetryAfter({}, now), undefined);
});

test('backoff doubles, stays within its jitter band, and is capped', () => {
  const err = new ProviderError('server', 'x', { status: 500 });
  const policy = { ...defaultRetryPolicy, attempts: 10, random: () => 0 };
  const low = [1, 2, 3, 4, 5, 6, 7, 8].map((a) => retryDelayMs(err, a, policy));
  assert.equal(low, [250, 500, 1000, 2000, 4000, 8000, 15000, 15000]);
  const high = [1, 2, 3].map((a) => retryDelayMs(err, a, { ...policy, random: () => 1 }));
  assert.equal(high, [500, 1000, 2000]);
  assert.is(retryDelayMs(err, 10, policy), null, 'no attempts left');
  assert.is(retryDelayMs(new ProviderError('auth', 'x', { status: 401 }), 1, policy), null);
  assert.is(retryDelayMs(new ProviderError('stall', 'x'), 1, policy), null);
});

test.run();
