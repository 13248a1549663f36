import { Agent, type Dispatcher } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { probeModel } from '../../src/workers/agent/providers/index.js';
import {
  httpError,
  startFakeProvider,
  type FakeProtocol,
  type FakeProvider,
} from '../fixtures/fake-provider.js';

const KEY = 'sk-probe-key-13579';
let fake: FakeProvider;

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY, models: ['known-model'] });
});
test.after(async () => {
  await fake.close();
});
test.before.each(() => fake.reset());

const entry = (protocol: FakeProtocol, apiKey = KEY) => ({
  protocol,
  baseUrl: fake.baseUrl(protocol),
  apiKey,
});
const protocols: FakeProtocol[] = ['openai', 'anthropic'];

test('success: ok with a latency, after one minimal request', async () => {
  for (const protocol of protocols) {
    fake.reset();
    const r = await probeModel(entry(protocol), 'known-model');
    assert.equal(Object.keys(r).sort(), ['latency_ms', 'ok']);
    assert.ok(r.ok && Number.isInteger(r.latency_ms) && r.latency_ms >= 0);
    assert.is(fake.requests.length, 1);
    const body = fake.requests[0]!.body!;
    const maxTokens = body.max_tokens as number;
    assert.ok(maxTokens >= 1 && maxTokens <= 8, `${protocol}: max tokens ${maxTokens}`);
    assert.equal((body.messages as unknown[]).length, 1);
    assert.is(body.stream, false);
    assert.is(body.tools, undefined);
  }
});

test('a wrong key: bad_key, and the key is not in the message', async () => {
  for (const protocol of protocols) {
    const wrong = `sk-wrong-${protocol}-24680`;
    const r = await probeModel(entry(protocol, wrong), 'known-model');
    assert.is(r.ok, false);
    if (r.ok) return;
    assert.is(r.reason, 'bad_key');
    assert.not.match(r.message, wrong);
    assert.match(r.message, /key/);
  }
});

test('no key at all: bad_key', async () => {
  const r = await probeModel(
    { protocol: 'openai', baseUrl: fake.baseUrl('openai') },
    'known-model',
  );
  assert.equal(r.ok ? 'ok' : r.reason, 'bad_key');
});

test('an unknown model: unknown_model, naming it', async () => {
  for (const protocol of protocols) {
    const r = await probeModel(entry(protocol), 'no-such-model');
    assert.is(r.ok, false);
    if (r.ok) return;
    assert.is(r.reason, 'unknown_model', protocol);
    assert.match(r.message, '"no-such-model"');
  }
});

/** An undici Agent that counts the requests sent through it: each attempt, retries included. */
class CountingAgent extends Agent {
  sent = 0;
  override dispatch(o: Dispatcher.DispatchOptions, h: Dispatcher.DispatchHandler): boolean {
    this.sent++;
    return super.dispatch(o, h);
  }
}

test('an unreachable host: unreachable, after one attempt (no retries in a probe)', async () => {
  const closed = await startFakeProvider();
  const url = closed.url;
  await closed.close();
  const dispatcher = new CountingAgent();
  const r = await probeModel({ protocol: 'anthropic', baseUrl: url, apiKey: KEY }, 'known-model', {
    dispatcher,
  });
  await dispatcher.close();
  assert.equal(r.ok ? 'ok' : r.reason, 'unreachable');
  assert.is(dispatcher.sent, 1, 'one attempt');
});

test('a provider that does not answer in time: unreachable, within the probe timeout', async () => {
  fake.enqueue({ parts: [{ stall: true }] });
  // The stall never ends: only the probe's own deadline answers this.
  const r = await probeModel(entry('openai'), 'known-model', { timeoutMs: 400 });
  assert.equal(r.ok ? 'ok' : [r.reason, r.message], [
    'unreachable',
    `127.0.0.1:${fake.port} did not answer within 400 ms.`,
  ]);
});

test('a base URL that is not a URL: unreachable, saying why', async () => {
  const r = await probeModel(
    { protocol: 'openai', baseUrl: 'api.example.com/v1', apiKey: KEY },
    'known-model',
  );
  assert.is(r.ok, false);
  if (r.ok) return;
  assert.is(r.reason, 'unreachable');
  assert.match(r.message, 'not a valid URL');
});

test('rate limited, server error and a reply that is not the protocol: each its reason, no retries', async () => {
  const cases: Array<[Parameters<FakeProvider['enqueue']>[0], string]> = [
    [httpError(429, { retryAfter: 1 }), 'rate_limited'],
    [httpError(500), 'server_error'],
    [httpError(529), 'server_error'],
    [httpError(200, { body: '<html>login page</html>' }), 'bad_response'],
  ];
  for (const [script, reason] of cases) {
    fake.reset();
    fake.enqueue(script);
    const r = await probeModel(entry('openai'), 'known-model');
    assert.equal(r.ok ? 'ok' : r.reason, reason);
    assert.is(fake.requests.length, 1);
  }
});

test.run();
