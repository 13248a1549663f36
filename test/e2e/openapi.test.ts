import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiDocument } from '../../src/release/api-document.js';
import { wsEvents } from '../../src/shared/protocol/events.js';
import { http, removeHome, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
test.before(async () => {
  server = await startServer();
});
test.after(async () => {
  await server.stop();
  removeHome(server.home);
});

test('GET /api/openapi.json documents every route with its methods', async () => {
  const res = await http({ port: server.port, path: '/api/openapi.json' });
  assert.is(res.status, 200);
  const doc = res.json();
  assert.is(doc.openapi, '3.1.0');
  const expected: Array<[string, string]> = [
    ['/api/health', 'get'],
    ['/api/version', 'get'],
    ['/api/status', 'get'],
    ['/api/restart', 'post'],
    ['/api/openapi.json', 'get'],
  ];
  for (const [path, method] of expected)
    assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`);
  assert.equal(doc.paths['/api/health'].get.security, [], 'health is marked public');
  assert.is(
    doc.paths['/api/status'].get.security,
    undefined,
    'status inherits the key requirement',
  );
  const restartBody = doc.paths['/api/restart'].post.requestBody.content['application/json'].schema;
  assert.ok(restartBody.properties.reason, 'the restart body schema is included');
});

test('channels, MCP, skills, workflows and uploads: each answer, its status and the bodies their handlers check', async () => {
  const doc = (await http({ port: server.port, path: '/api/openapi.json' })).json();
  const families = /^\/api\/(channels|mcp|skills|workflows|upload)/;
  let ops = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    if (!families.test(path)) continue;
    for (const [method, op] of Object.entries<any>(item)) {
      ops++;
      const ok = Object.entries<any>(op.responses).filter(([s]) => /^(2..|303)$/.test(s));
      assert.ok(ok.length > 0, `${method} ${path} declares its success answer`);
      for (const [status, r] of ok) {
        if (status === '204' || status === '303') continue;
        const content = Object.entries<any>(r.content ?? {});
        assert.ok(content.length > 0, `${method} ${path} ${status} has a content`);
        const json = r.content['application/json'];
        if (json) assert.ok(Object.keys(json.schema).length > 0, `${method} ${path}: a schema`);
      }
    }
  }
  assert.ok(ops >= 38, `${ops} operations of these families`);
  const status = (path: string, method: string) =>
    Object.keys(doc.paths[path][method].responses).filter((s) => /^[23]/.test(s));
  assert.equal(status('/api/upload', 'post'), ['201']);
  assert.equal(status('/api/skills/import', 'post'), ['201']);
  assert.equal(status('/api/mcp/servers', 'post'), ['201']);
  assert.equal(status('/api/workflows/{name}/run', 'post'), ['202']);
  assert.equal(status('/api/mcp/oauth/callback', 'get'), ['303']);
  const page = doc.paths['/api/mcp/oauth/callback'].get.responses['400'].content;
  assert.ok(page['text/html'] && page['application/json'], 'its own failures are a page');
  assert.ok(doc.paths['/api/skills/{name}/export'].get.responses['200'].content['application/zip']);

  const upload = doc.paths['/api/upload'].post.requestBody;
  assert.is(upload.required, true);
  const parts = upload.content['multipart/form-data'].schema;
  assert.equal(parts.required, ['file']);
  assert.is(parts.properties.file.items.contentMediaType, 'application/octet-stream');
  const skill = doc.paths['/api/skills/import'].post.requestBody.content;
  assert.equal(skill['multipart/form-data'].schema.required, ['file']);
  assert.equal(skill['application/json'].schema.required, ['source']);

  const mcp = doc.paths['/api/mcp/servers'].post.requestBody;
  assert.is(mcp.required, true);
  const kinds = mcp.content['application/json'].schema.anyOf as any[];
  assert.equal(
    kinds.map((k) => k.required),
    [['name', 'command'], ['name', 'url'], ['mcpServers']],
    'a local server, a remote one, or an import document',
  );
  assert.is(kinds[0].additionalProperties, false, 'a local server takes no url or headers');
  assert.ok(kinds[0].properties.url === undefined && kinds[1].properties.env === undefined);
  for (const k of kinds.slice(0, 2))
    for (const [name, f] of Object.entries<any>(k.properties))
      assert.ok(f.description, `POST /api/mcp/servers: ${name} is described`);

  const channel = doc.paths['/api/channels/{platform}'].post.requestBody;
  const forms = channel.content['application/json'].schema.anyOf as any[];
  assert.is(forms.length, 5, 'one body per platform');
  const telegram = forms.find((f) => f.description.startsWith('Telegram'));
  assert.equal(telegram.required, ['bot_token']);
  assert.match(telegram.properties.bot_token.description, /Bot token: .*secret/);
  assert.equal(forms.find((f) => f.description.startsWith('Slack')).required, [
    'app_token',
    'bot_token',
  ]);
  const answered = doc.components.schemas.Channel.oneOf.find(
    (c: any) => c.properties.platform.const === 'telegram',
  );
  assert.is(
    answered.properties.fields.properties.bot_token.pattern,
    '^\\*{8}[\\s\\S]{0,4}$',
    'the answer shows a token masked',
  );
});

test('the document lists every /ws event of the catalogue: its topics and the JSON Schema of its data', async () => {
  const doc = (await http({ port: server.port, path: '/api/openapi.json' })).json();
  const listed = doc['x-ws-events'] as Array<{
    type: string;
    topics: string[];
    summary: string;
    schema: { $ref: string };
  }>;
  assert.equal(
    listed.map((e) => e.type).sort(),
    Object.keys(wsEvents).sort(),
    'every catalogued type, and no other',
  );
  for (const e of listed) {
    const spec = wsEvents[e.type as keyof typeof wsEvents];
    assert.equal(
      e.topics,
      spec.topics.map((k) => (k === 'session' ? 'session:{id}' : k)),
      `${e.type}: its topics`,
    );
    const schema = doc.components.schemas[e.schema.$ref.replace('#/components/schemas/', '')];
    assert.ok(schema, `${e.type}: its frame schema is in components`);
    assert.equal(schema.properties.type, { const: e.type });
    assert.ok(
      schema.properties.data && typeof schema.properties.data === 'object',
      `${e.type}: the schema of its data`,
    );
  }
  const result = doc.components.schemas['WsEvent.turn.tool_result'].properties.data;
  assert.ok(
    ['call_id', 'output', 'truncated', 'message'].every((k) => k in result.properties),
    'a data schema names its fields',
  );
  assert.ok(doc.paths['/ws']?.get?.responses['101'], '/ws is documented as the WebSocket upgrade');
  assert.match(doc.paths['/ws'].get.description, /4096 bytes/);
});

test('the served document is the one built in-process (what unit/openapi-client lints and the Web UI types come from)', async () => {
  const served = (await http({ port: server.port, path: '/api/openapi.json' })).json();
  assert.equal(served, apiDocument());
});

test('the route map is not shown to a keyless remote client', async () => {
  const res = await http({
    port: server.port,
    path: '/api/openapi.json',
    headers: { Host: 'evil.example' },
  });
  assert.is(res.status, 401);
});

test.run();
