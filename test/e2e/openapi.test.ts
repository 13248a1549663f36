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
