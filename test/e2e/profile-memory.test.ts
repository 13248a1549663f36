import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { openDb, type Db } from '../../src/shared/store/db.js';
import { memoryTools } from '../../src/workers/agent/tools/session/memory.js';
import { ToolRegistry, type ToolContext } from '../../src/workers/agent/tools/registry.js';
import { api } from '../helpers/api.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let port: number;
let db: Db;
let ctx: ToolContext;
const tools = new ToolRegistry(memoryTools());
const call = (name: string, args: Record<string, unknown>) =>
  tools.call(name, JSON.stringify(args), ctx);

test.before(async () => {
  server = await startServer();
  port = server.port;
  db = openDb(join(server.home, 'svc.db'));
  ctx = {
    sessionId: 's_mem',
    turnId: 'turn_1',
    callId: 'call_1',
    workingDir: null,
    signal: new AbortController().signal,
    db,
    paths: resolvePaths({ SVC_HOME: server.home }),
    emit: () => {},
  };
});
test.after(async () => {
  db.close();
  await server.stop();
  removeHome(server.home);
});

test('profile files that do not exist read as empty', async () => {
  for (const name of ['soul', 'user']) {
    const r = await api(port, 'GET', `/api/profile/${name}`);
    assert.is(r.status, 200);
    assert.equal(r.body, {
      name,
      path: join(server.home, `${name}.md`),
      exists: false,
      content: '',
      size: 0,
      updated_at: null,
      truncated: false,
    });
  }
  assert.equal((await api(port, 'GET', '/api/memories')).body, {
    index: '',
    index_truncated: false,
    files: [],
  });
});

test('profile files are read with their size and time; a huge one is cut at 256 KiB', async () => {
  writeFileSync(join(server.home, 'soul.md'), '# Soul\nCalm, precise, brief. ✓\n');
  const soul = (await api(port, 'GET', '/api/profile/soul')).body;
  assert.equal(
    [soul.exists, soul.content, soul.size, soul.truncated],
    [
      true,
      '# Soul\nCalm, precise, brief. ✓\n',
      Buffer.byteLength('# Soul\nCalm, precise, brief. ✓\n'),
      false,
    ],
  );
  assert.ok(
    Math.abs(Date.parse(soul.updated_at) - statSync(join(server.home, 'soul.md')).mtimeMs) < 1000,
  );
  // 'é' is two bytes: the cut at 256 KiB falls inside one and must not leave a broken character.
  writeFileSync(join(server.home, 'user.md'), `x${'é'.repeat(200_000)}`);
  const user = (await api(port, 'GET', '/api/profile/user')).body;
  assert.is(user.truncated, true);
  assert.is(user.size, 400_001);
  assert.ok(Buffer.byteLength(user.content) <= 256 * 1024);
  assert.ok(user.content.length > 100_000);
  assert.not.match(user.content, '\uFFFD');
});

test('memory_write saves a private note and keeps MEMORY.md as an index', async () => {
  const r = await call('memory_write', {
    name: 'build-setup',
    content: '# Build setup\nRun npm ci, then npx tsc -p .',
    description: 'How the project builds',
  });
  assert.not.ok(r.isError, r.output);
  const file = join(server.home, 'memory', 'build-setup.md');
  assert.equal(r.wrote, [file]);
  assert.is(readFileSync(file, 'utf8'), '# Build setup\nRun npm ci, then npx tsc -p .\n');
  assert.is(statSync(file).mode & 0o777, 0o600);
  await call('memory_write', {
    name: 'user-prefs',
    content: '## Preferences\nThe user prefers tabs over spaces and short answers.',
  });
  const indexFile = join(server.home, 'memory', 'MEMORY.md');
  assert.is(statSync(indexFile).mode & 0o777, 0o600);
  assert.is(
    readFileSync(indexFile, 'utf8'),
    '# Memory\n\n- [build-setup](build-setup.md) — How the project builds\n- [user-prefs](user-prefs.md) — Preferences\n',
  );
  // Rewriting a note replaces its line (keeping the description) and leaves the user's own lines alone.
  writeFileSync(indexFile, `${readFileSync(indexFile, 'utf8')}\n## Always\n- answer in English\n`);
  await call('memory_write', { name: 'build-setup', content: 'Run npm ci, then npm test.' });
  const index = readFileSync(indexFile, 'utf8');
  assert.is(index.match(/build-setup\.md/g)!.length, 1);
  assert.match(index, '- [build-setup](build-setup.md) — How the project builds\n');
  assert.match(index, '## Always\n- answer in English\n');
  assert.is(readFileSync(file, 'utf8'), 'Run npm ci, then npm test.\n');
});

test('memory_write refuses names that are not slugs', async () => {
  for (const name of ['../escape', 'Build Setup', 'MEMORY', 'memory', 'a/b', '', '-x']) {
    const r = await call('memory_write', { name, content: 'x' });
    assert.ok(r.isError, name);
  }
  assert.ok(
    (await call('memory_write', { name: 'big', content: 'x'.repeat(64 * 1024 + 1) })).isError,
  );
});

test('GET /api/memories gives the index and lists the notes', async () => {
  const r = await api(port, 'GET', '/api/memories');
  assert.is(r.status, 200);
  assert.match(r.body.index, '- [user-prefs](user-prefs.md) — Preferences');
  assert.is(r.body.index_truncated, false);
  assert.equal(
    r.body.files.map((f: { name: string; file: string }) => [f.name, f.file]),
    [
      ['build-setup', 'build-setup.md'],
      ['user-prefs', 'user-prefs.md'],
    ],
  );
  const f = r.body.files[0];
  assert.is(f.size, statSync(join(server.home, 'memory', 'build-setup.md')).size);
  assert.ok(!Number.isNaN(Date.parse(f.updated_at)));
});

test('memory_search ranks notes by matched terms and shows matching lines', async () => {
  mkdirSync(join(server.home, 'memory'), { recursive: true });
  await call('memory_write', {
    name: 'deploy',
    content: 'Deploy with npm run deploy.\nThe server needs NODE_ENV=production.\nNothing else.',
  });
  const r = await call('memory_search', { query: 'NPM Production' });
  assert.not.ok(r.isError);
  const order = [...r.output.matchAll(/^(\S+\.md) \(/gm)].map((m) => m[1]);
  assert.is(order[0], 'deploy.md', r.output);
  assert.ok(order.includes('build-setup.md'));
  assert.match(r.output, 'deploy.md (2/2 terms');
  assert.match(r.output, '  2: The server needs NODE_ENV=production.');
  assert.not.match(r.output, 'Nothing else');
  const one = await call('memory_search', { query: 'npm', max_results: 1 });
  assert.match(one.output, '(showing 1)');
  assert.match((await call('memory_search', { query: 'kubernetes' })).output, 'No memory matches');
  assert.match((await call('memory_search', { query: 'english' })).output, 'MEMORY.md');
});

test.run();
