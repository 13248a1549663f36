import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFakeProvider, type FakeProvider } from '../fixtures/fake-provider.js';
import { api } from '../helpers/api.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

const KEY = 'sk-fake-provider-key-123456';
let fake: FakeProvider;
let server: RunningServer;
const call = (method: string, path: string, body?: unknown) => api(server.port, method, path, body);

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test.before(async () => {
  fake = await startFakeProvider({ apiKey: KEY, models: ['fake-model'] });
  server = await startServer();
});
test.after(async () => {
  await server.stop();
  await fake.close();
  removeHome(server.home);
});

test('a fresh server starts in no_model and refuses to complete onboarding', async () => {
  const status = await call('GET', '/api/onboard/status');
  assert.is(status.status, 200);
  assert.is(status.body.state, 'no_model');
  const done = await call('POST', '/api/onboard/complete', {});
  assert.is(done.status, 409);
  assert.match(done.body.error.message, /model/);
  assert.equal((await call('GET', '/api/onboard/complete')).body, {
    completed: false,
    completed_at: null,
  });
});

test('POST /api/config/test: a working provider, model and key', async () => {
  const res = await call('POST', '/api/config/test', {
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake-model',
    api_key: KEY,
  });
  assert.is(res.status, 200);
  assert.is(res.body.ok, true);
  assert.type(res.body.latency_ms, 'number');
  const sent = fake.requests.at(-1)!;
  assert.is(sent.headers['authorization'], `Bearer ${KEY}`);
});

test('POST /api/config/test: a bad key says so, and never echoes the key', async () => {
  const res = await call('POST', '/api/config/test', {
    provider: 'custom',
    protocol: 'anthropic',
    base_url: fake.baseUrl('anthropic'),
    model: 'fake-model',
    api_key: 'sk-wrong-key-000000000',
  });
  assert.is(res.body.ok, false);
  assert.is(res.body.reason, 'bad_key');
  assert.not.ok(JSON.stringify(res.body).includes('sk-wrong-key-000000000'));
});

test('POST /api/config/test: an unknown model says so', async () => {
  const res = await call('POST', '/api/config/test', {
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'no-such-model',
    api_key: KEY,
  });
  assert.is(res.body.ok, false);
  assert.is(res.body.reason, 'unknown_model');
  assert.type(res.body.message, 'string');
});

test('POST /api/config/test: an unreachable host says so', async () => {
  const port = await closedPort();
  const res = await call('POST', '/api/config/test', {
    provider: 'custom',
    protocol: 'openai',
    base_url: `http://127.0.0.1:${port}/v1`,
    model: 'fake-model',
    api_key: KEY,
  });
  assert.is(res.body.ok, false);
  assert.is(res.body.reason, 'unreachable');
});

test('POST /api/config/test validates its body', async () => {
  assert.is((await call('POST', '/api/config/test', { model_id: 'ghost' })).status, 404);
  assert.is(
    (await call('POST', '/api/config/test', { provider: 'custom', model: 'x' })).status,
    400,
  );
  assert.is((await call('POST', '/api/config/test', { nothing: true })).status, 400);
});

test('onboarding: model configured → tested → profile written → done', async () => {
  await call('POST', '/api/config/models', {
    id: 'main',
    provider: 'custom',
    protocol: 'openai',
    base_url: fake.baseUrl('openai'),
    model: 'fake-model',
    api_key: 'sk-wrong-key-000000000',
  });
  await call('PUT', '/api/config/models/default', { model_id: 'main' });
  assert.is((await call('GET', '/api/onboard/status')).body.state, 'model_configured');

  const failed = await call('POST', '/api/config/test', { model_id: 'main' });
  assert.is(failed.body.reason, 'bad_key');
  const afterFail = (await call('GET', '/api/onboard/status')).body;
  assert.is(afterFail.state, 'model_configured');
  assert.is(afterFail.last_test.ok, false);
  assert.is((await call('POST', '/api/onboard/complete', {})).status, 409);

  await call('PATCH', '/api/config/models/main', { api_key: KEY });
  const ok = await call('POST', '/api/config/test', { model_id: 'main' });
  assert.is(ok.body.ok, true);
  assert.is((await call('GET', '/api/onboard/status')).body.state, 'model_tested');

  const profile = await call('POST', '/api/onboard/status', {
    soul: '# Soul\nBe brief.',
    user: '# User\nLikes tea.',
  });
  assert.is(profile.status, 200);
  assert.is(profile.body.state, 'profile_written');
  assert.is(readFileSync(join(server.home, 'soul.md'), 'utf8'), '# Soul\nBe brief.');
  assert.ok(existsSync(join(server.home, 'user.md')));

  const done = await call('POST', '/api/onboard/complete', {});
  assert.is(done.status, 200);
  assert.is(done.body.state, 'done');
  assert.is((await call('GET', '/api/onboard/complete')).body.completed, true);
});

test('changing the default model after a passing test needs a new test', async () => {
  const fresh = await startServer();
  try {
    const c = (m: string, p: string, b?: unknown) => api(fresh.port, m, p, b);
    await c('POST', '/api/config/models', {
      id: 'm',
      provider: 'custom',
      protocol: 'openai',
      base_url: fake.baseUrl('openai'),
      model: 'fake-model',
      api_key: KEY,
    });
    await c('PUT', '/api/config/models/default', { model_id: 'm' });
    assert.ok((await c('POST', '/api/config/test', { model_id: 'm' })).body.ok);
    assert.is((await c('GET', '/api/onboard/status')).body.state, 'model_tested');
    await c('PATCH', '/api/config/models/m', { model: 'other-model' });
    assert.is((await c('GET', '/api/onboard/status')).body.state, 'model_configured');
  } finally {
    await fresh.stop();
    removeHome(fresh.home);
  }
});

test('the profile step validates its body', async () => {
  assert.is((await call('POST', '/api/onboard/status', { soul: 5 })).status, 400);
  assert.is((await call('POST', '/api/onboard/status', { soul: 'x'.repeat(70_000) })).status, 400);
  assert.is((await call('POST', '/api/onboard/status', { other: 'x' })).status, 400);
});

test.run();
