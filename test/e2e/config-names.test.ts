import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { httpError } from '../fixtures/fake-provider.js';
import { http, removeHome, runCli, SLACK, tmpHome, waitFor } from '../helpers/server.js';
import { connectWs, KEY, startRig, type TurnRig } from '../helpers/turns.js';

/**
 * Config as a client meets it (issue 31): secrets masked in every answer that carries config
 * parts, and names that are keys of Object.prototype treated as the unknown names they are.
 * One server for the file.
 */

let rig: TurnRig;
test.before(async () => {
  rig = await startRig({ models: { oa: { protocol: 'openai' } } });
});
test.after(async () => {
  await rig?.stop();
});

const SECRETS = {
  model: KEY,
  telegram: '123456789:AAHsecretTelegramToken_0123456789',
  slackApp: 'xapp-1-A0SECRETAPP-0123456789-abcdef',
  slackBot: 'xoxb-0123456789-SECRETBOT-abcdef',
  discord: `MTAx${'S'.repeat(22)}.Gsecr3.${'T'.repeat(30)}`,
  mcpEnv: 'mcp-env-secret-value-0123',
  mcpHeader: 'Bearer mcp-header-secret-4567',
};
const leaks = (text: string) =>
  Object.entries(SECRETS)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => k);

test('GET /api/config and every other GET route answer no channel, model or MCP secret, nor does /ws', async () => {
  const ws = await connectWs(rig.port, ['server', 'channels', 'mcp', 'trash']);
  try {
    const saves: [string, string, unknown][] = [
      [
        'POST',
        '/api/channels/telegram',
        {
          enabled: false,
          bot_token: SECRETS.telegram,
        },
      ],
      [
        'POST',
        '/api/channels/slack',
        {
          enabled: false,
          app_token: SECRETS.slackApp,
          bot_token: SECRETS.slackBot,
        },
      ],
      [
        'POST',
        '/api/channels/discord',
        {
          enabled: false,
          bot_token: SECRETS.discord,
        },
      ],
      [
        'POST',
        '/api/mcp/servers',
        {
          name: 'local',
          command: 'true',
          enabled: false,
          env: { API_TOKEN: SECRETS.mcpEnv },
        },
      ],
      [
        'POST',
        '/api/mcp/servers',
        {
          name: 'remote',
          url: 'http://127.0.0.1:9/mcp',
          enabled: false,
          headers: { Authorization: SECRETS.mcpHeader },
        },
      ],
    ];
    for (const [method, path, body] of saves) {
      const r = await api(rig.port, method, path, body);
      assert.ok(r.status < 300, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const config = await api(rig.port, 'GET', '/api/config');
    assert.is(config.status, 200);
    assert.equal(leaks(JSON.stringify(config.body)), [], 'GET /api/config leaks');
    assert.is(config.body.channels.telegram.bot_token, `********${SECRETS.telegram.slice(-4)}`);
    assert.is(config.body.channels.slack.app_token, `********${SECRETS.slackApp.slice(-4)}`);

    // Every GET route of the OpenAPI document, its parameters filled with the configured names.
    const doc = await api(rig.port, 'GET', '/api/openapi.json');
    const paths = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)
      .filter(([, ops]) => 'get' in ops)
      .map(([p]) =>
        p
          .replace('{platform}', 'telegram')
          .replace('{name}', 'local')
          .replace(/\{[a-z_]+\}/g, 'x'),
      );
    assert.ok(paths.length > 30, `${paths.length} GET routes`);
    for (const path of [...paths, '/api/channels/slack', '/api/mcp/servers/remote']) {
      // As text: not every route answers JSON (/api/metrics).
      const r = await http({ port: rig.port, path });
      assert.equal(leaks(r.text), [], `GET ${path} leaks`);
    }
    // Disconnecting moves the configuration to the trash: its listing masks too.
    assert.is((await api(rig.port, 'DELETE', '/api/channels/discord')).status, 200);
    assert.equal(leaks(JSON.stringify((await api(rig.port, 'GET', '/api/trash')).body)), []);
    assert.equal(leaks(JSON.stringify(ws.frames)), [], '/ws frames leak');
  } finally {
    ws.close();
  }
});

test('a config answer sent back (masked) keeps the real secrets', async () => {
  const shown = (await api(rig.port, 'GET', '/api/channels/telegram')).body.fields;
  const back = await api(rig.port, 'POST', '/api/channels/telegram', shown);
  assert.is(back.status, 200, JSON.stringify(back.body));
  const slack = (await api(rig.port, 'GET', '/api/config')).body.channels.slack;
  assert.is((await api(rig.port, 'POST', '/api/channels/slack', slack)).status, 200);
  const patched = await api(rig.port, 'PATCH', '/api/config/models/oa', {
    api_key: `********${KEY.slice(-4)}`,
  });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  // config.yml still holds the real values (a turn would fail with the mask as its key).
  const yml = readFileSync(`${rig.server.home}/config.yml`, 'utf8');
  for (const v of [SECRETS.telegram, SECRETS.slackApp, SECRETS.slackBot, KEY])
    assert.ok(yml.includes(v), 'the saved secret is the real one');
  assert.not.ok(yml.includes('********'), 'no mask was saved');
});

test('a failed turn is one line in svc logs: reason and ids, never the key', async () => {
  rig.fake.enqueue(httpError(401));
  const turn = await api(rig.port, 'POST', '/api/chat', { message: 'hello?' });
  assert.is(turn.body.status, 'failed', JSON.stringify(turn.body));
  const line = await waitFor(
    async () => {
      const r = await runCli(['logs', '--process', 'supervisor'], { SVC_HOME: rig.server.home });
      return r.stdout
        .split('\n')
        .find((l) => l.includes('a turn failed') && l.includes(turn.body.session_id));
    },
    10_000,
    'the failed turn in svc logs',
  );
  assert.match(line, turn.body.turn_id);
  assert.match(line, /reason=\S+/);
  assert.not.match(line, KEY);
});

// ---- names that are keys of Object.prototype ----

const NAMES = [...Object.getOwnPropertyNames(Object.prototype), '__proto__'].filter(
  (n, i, all) => all.indexOf(n) === i,
);

/** One request, timed: a name must be answered at once, never left to a deadline (a 504). */
async function timed(method: string, path: string, body?: unknown) {
  const started = Date.now();
  const r = await api(rig.port, method, path, body);
  return { ...r, ms: Date.now() - started };
}

test('every route with a name in its path answers a prototype key as an unknown name (4xx, at once) and changes nothing', async () => {
  const before = (await api(rig.port, 'GET', '/api/config')).body;
  const doc = await api(rig.port, 'GET', '/api/openapi.json');
  const ops = Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)
    .filter(([p]) => p.includes('{'))
    .flatMap(([p, methods]) => Object.keys(methods).map((m) => [m.toUpperCase(), p] as const));
  assert.ok(ops.length > 40, `${ops.length} operations with a name in the path`);
  const wrong: string[] = [];
  for (const name of NAMES)
    for (const [method, template] of ops) {
      const path = template.replace(/\{[a-z_]+\}/g, encodeURIComponent(name));
      const r = await timed(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
      if (r.status < 400 || r.status >= 500 || r.ms > 2000 * SLACK)
        wrong.push(`${method} ${path}: ${r.status} in ${r.ms} ms ${JSON.stringify(r.body)}`);
    }
  assert.equal(wrong, []);
  assert.equal((await api(rig.port, 'GET', '/api/config')).body, before, 'the config is unchanged');
});

test('a prototype key named in a body is refused with a clear 4xx; the models still work', async () => {
  const wrong: string[] = [];
  for (const name of NAMES) {
    const cases: [string, string, unknown, number[]][] = [
      ['DELETE', `/api/config/models/${encodeURIComponent(name)}`, undefined, [404]],
      ['PUT', '/api/config/models/lite', { model_id: name }, [400]],
      ['PUT', '/api/config/models/default', { model_id: name }, [400]],
      ['POST', '/api/config/test', { model_id: name }, [400]],
      [
        'POST',
        '/api/config/models',
        { id: name, provider: 'custom', model: 'x', base_url: 'http://127.0.0.1:9' },
        [400],
      ],
      ['POST', '/api/mcp/servers', { name, command: 'true', enabled: false }, [400]],
      ['POST', '/api/chat', { model_id: name }, [400, 404]],
    ];
    for (const [method, path, body, want] of cases) {
      const r = await timed(method, path, body);
      const message = String(r.body?.error?.message ?? '');
      if (
        !want.includes(r.status) ||
        r.ms > 2000 * SLACK ||
        !/reserve|no model entry|There is no|a model id is|a server name/i.test(message)
      )
        wrong.push(
          `${method} ${path} ${JSON.stringify(body)}: ${r.status} in ${r.ms} ms ${message}`,
        );
    }
  }
  assert.equal(wrong, []);
  const config = (await api(rig.port, 'GET', '/api/config')).body;
  assert.equal(
    config.models.map((m: { id: string }) => m.id),
    ['oa'],
  );
  assert.is(config.slots.lite, undefined);
  const yml = readFileSync(`${rig.server.home}/config.yml`, 'utf8');
  assert.not.ok(/constructor|toString|hasOwnProperty|isPrototypeOf|valueOf/.test(yml), yml);
});

test('svc doctor calls a config.yml that names a prototype key invalid', async () => {
  const home = tmpHome();
  try {
    for (const yml of [
      'models:\n  m: {provider: openai, model: gpt-4o}\nslots:\n  lite: constructor\n',
      'models:\n  toString: {provider: openai, model: gpt-4o}\n',
      'mcp:\n  servers:\n    hasOwnProperty: {command: "true"}\n',
    ]) {
      writeFileSync(join(home, 'config.yml'), yml, { mode: 0o600 });
      const r = await runCli(['doctor', '--json'], { SVC_HOME: home }, 60_000);
      const checks = JSON.parse(r.stdout).checks as {
        id: string;
        status: string;
        message: string;
      }[];
      const config = checks.find((c) => c.id === 'config');
      assert.is(config?.status, 'fail', `${yml}: ${JSON.stringify(config)}`);
      assert.match(config?.message ?? '', /reserve|not under models/);
    }
  } finally {
    removeHome(home);
  }
});

test.run();
