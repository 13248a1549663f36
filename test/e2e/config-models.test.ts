import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { http, removeHome, startServer, waitFor, type RunningServer } from '../helpers/server.js';

const SECRET = 'sk-test-secret-value-1234567890';
const USER_CONFIG = '# my own notes about this file\nlog:\n  level: info # keep this comment\n';
let server: RunningServer;

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  http({
    port: server.port,
    method,
    path,
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const configText = () => readFileSync(join(server.home, 'config.yml'), 'utf8');

test.before(async () => {
  server = await startServer({ config: USER_CONFIG });
});
test.after(async () => {
  await server.stop();
  removeHome(server.home);
});

test('GET /api/providers lists the catalog with protocol, address and key variable', async () => {
  const res = await api('GET', '/api/providers');
  assert.is(res.status, 200);
  const ids = res.json().items.map((p: { id: string }) => p.id);
  for (const id of ['openai', 'anthropic', 'deepseek', 'ollama', 'custom'])
    assert.ok(ids.includes(id), `${id} is listed`);
  const openai = res.json().items.find((p: { id: string }) => p.id === 'openai');
  assert.is(openai.protocol, 'openai');
  assert.is(openai.key_env, 'OPENAI_API_KEY');
});

test('creating a model entry writes config.yml, keeps the comments and mode 0600, never returns the key', async () => {
  const res = await api('POST', '/api/config/models', {
    id: 'main',
    provider: 'openai',
    model: 'gpt-test',
    api_key: SECRET,
    context_window: 128000,
  });
  assert.is(res.status, 201);
  assert.is(res.json().id, 'main');
  assert.is(res.json().api_key_set, true);
  assert.not.ok(res.text.includes(SECRET));
  const text = configText();
  assert.ok(text.includes('# my own notes about this file'));
  assert.ok(text.includes('# keep this comment'));
  assert.is(parse(text).models.main.api_key, SECRET);
  assert.is(statSync(join(server.home, 'config.yml')).mode & 0o777, 0o600);
});

test('a new entry can use the key another entry of its provider saved (api_key_from), never shown', async () => {
  const lite = await api('POST', '/api/config/models', {
    id: 'lite-shared',
    provider: 'openai',
    model: 'gpt-test-mini',
    api_key_from: 'main',
  });
  assert.is(lite.status, 201, lite.text);
  assert.is(lite.json().api_key_set, true);
  assert.not.ok(lite.text.includes(SECRET));
  assert.is(parse(configText()).models['lite-shared'].api_key, SECRET);
  const refused = async (body: Record<string, unknown>, why: RegExp) => {
    const r = await api('POST', '/api/config/models', { provider: 'openai', model: 'm', ...body });
    assert.is(r.status, 400, r.text);
    assert.match(r.json().error.message, why);
    assert.not.ok(r.text.includes(SECRET));
  };
  await refused({ api_key_from: 'nope' }, /there is no model entry "nope"/);
  await refused({ api_key_from: 'main', api_key: 'sk-other' }, /either api_key or api_key_from/);
  await refused(
    { provider: 'anthropic', api_key_from: 'main' },
    /shared only between entries of one provider/,
  );
  await refused({ api_key_from: '__proto__' }, /./);
  const keyless = await api('POST', '/api/config/models', {
    id: 'keyless',
    provider: 'openai',
    model: 'm',
  });
  assert.is(keyless.status, 201, keyless.text);
  await refused({ api_key_from: 'keyless' }, /has no API key saved/);
  assert.not.ok(Object.hasOwn(parse(configText()).models, 'm'), 'nothing refused was written');
  for (const id of ['lite-shared', 'keyless'])
    assert.is((await api('DELETE', `/api/config/models/${id}`)).status, 200);
});

test('an id is made from the model name when none is given, and a taken id is a 409', async () => {
  const res = await api('POST', '/api/config/models', {
    provider: 'anthropic',
    model: 'Claude Test 1',
  });
  assert.is(res.status, 201);
  assert.is(res.json().id, 'claude-test-1');
  assert.is(res.json().api_key_set, false);
  const again = await api('POST', '/api/config/models', {
    id: 'main',
    provider: 'openai',
    model: 'x',
  });
  assert.is(again.status, 409);
  assert.is(again.json().error.code, 'conflict');
});

test('bad entries are 400s that name the field', async () => {
  const cases: Array<[unknown, string]> = [
    [{ provider: 'nope', model: 'x' }, 'provider'],
    [{ provider: 'openai' }, 'model'],
    [{ provider: 'openai', model: 'x', base_url: 'ftp://x' }, 'base_url'],
    [{ provider: 'openai', model: 'x', context_window: -5 }, 'context_window'],
    [{ provider: 'openai', model: 'x', id: 'default' }, 'id'],
    [{ provider: 'openai', model: 'x', id: 'has space' }, 'id'],
    [{ provider: 'openai', model: 'x', colour: 'blue' }, ''],
    [{ provider: 'custom', model: 'x' }, 'base_url'],
    [{ provider: 'openai', model: 'x', protocol: 'anthropic' }, 'protocol'],
  ];
  for (const [body, field] of cases) {
    const res = await api('POST', '/api/config/models', body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.json().error.code, 'invalid_request');
    if (field)
      assert.ok(
        JSON.stringify(res.json().error.details).includes(field),
        `${JSON.stringify(body)} names ${field}: ${res.text}`,
      );
  }
  assert.not.ok(configText().includes('colour'));
});

test('PATCH changes fields, null removes one, and the key stays write-only', async () => {
  const res = await api('PATCH', '/api/config/models/main', {
    model: 'gpt-test-2',
    context_window: null,
  });
  assert.is(res.status, 200);
  assert.is(res.json().model, 'gpt-test-2');
  assert.is(res.json().context_window, null);
  assert.is(res.json().api_key_set, true);
  assert.is(parse(configText()).models.main.context_window, undefined);
  const forget = await api('PATCH', '/api/config/models/claude-test-1', {
    api_key: 'sk-other-secret-000000',
  });
  assert.is(forget.json().api_key_set, true);
  const cleared = await api('PATCH', '/api/config/models/claude-test-1', { api_key: null });
  assert.is(cleared.json().api_key_set, false);
  assert.is((await api('PATCH', '/api/config/models/ghost', { model: 'x' })).status, 404);
  assert.is((await api('PATCH', '/api/config/models/main', { provider: 'nope' })).status, 400);
});

test('slots: set with PUT or POST, must name an entry, and protect their model from deletion', async () => {
  const put = await api('PUT', '/api/config/models/default', { model_id: 'main' });
  assert.is(put.status, 200);
  assert.is(put.json().model_id, 'main');
  const post = await api('POST', '/api/config/models/lite', { model_id: 'claude-test-1' });
  assert.is(post.status, 200);
  assert.is((await api('GET', '/api/config/models/lite')).json().model_id, 'claude-test-1');
  const missing = await api('PUT', '/api/config/models/default', { model_id: 'ghost' });
  assert.is(missing.status, 404);
  const del = await api('DELETE', '/api/config/models/main');
  assert.is(del.status, 409);
  assert.match(del.json().error.message, /default slot/);
  assert.equal(parse(configText()).slots, { default: 'main', lite: 'claude-test-1' });
});

test('GET /api/config shows the effective config with every secret redacted', async () => {
  const res = await api('GET', '/api/config');
  assert.is(res.status, 200);
  assert.not.ok(res.text.includes(SECRET));
  assert.not.ok(res.text.includes(server.key()));
  const body = res.json();
  assert.equal(body.slots, { default: 'main', lite: 'claude-test-1' });
  assert.ok(body.models.find((m: { id: string }) => m.id === 'main').api_key_set);
});

test('model entries survive a restart and the key never shows in the log', async () => {
  const restart = await api('POST', '/api/restart');
  assert.is(restart.status, 202);
  await waitFor(
    async () => (await api('GET', '/api/status')).json().restarts === 1,
    10_000,
    'the restart',
  );
  const res = await api('GET', '/api/config/models');
  assert.equal(
    res
      .json()
      .items.map((m: { id: string }) => m.id)
      .sort(),
    ['claude-test-1', 'main'],
  );
  assert.not.ok(server.output().includes(SECRET));
});

test('deleting an entry outside any slot removes it from config.yml', async () => {
  await api('PUT', '/api/config/models/lite', { model_id: null });
  const del = await api('DELETE', '/api/config/models/claude-test-1');
  assert.is(del.status, 200);
  assert.is(parse(configText()).models['claude-test-1'], undefined);
  assert.is((await api('DELETE', '/api/config/models/claude-test-1')).status, 404);
});

test.run();
