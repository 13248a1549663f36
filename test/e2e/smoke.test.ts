import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { http, removeHome, startServer } from '../helpers/server.js';

test('svc serve starts and answers /api/health without a key', async () => {
  const server = await startServer();
  try {
    const res = await http({ port: server.port, path: '/api/health' });
    assert.is(res.status, 200);
    assert.is(res.json().status, 'ok');
  } finally {
    await server.stop();
    removeHome(server.home);
  }
});

test.run();
