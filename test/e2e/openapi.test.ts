import { test } from 'uvu';
import * as assert from 'uvu/assert';
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
  for (const [path, method] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`);
  assert.equal(doc.paths['/api/health'].get.security, [], 'health is marked public');
  assert.is(doc.paths['/api/status'].get.security, undefined, 'status inherits the key requirement');
  const restartBody = doc.paths['/api/restart'].post.requestBody.content['application/json'].schema;
  assert.ok(restartBody.properties.reason, 'the restart body schema is included');
});

test('the route map is not shown to a keyless remote client', async () => {
  const res = await http({ port: server.port, path: '/api/openapi.json', headers: { Host: 'evil.example' } });
  assert.is(res.status, 401);
});

test.run();
