import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { api } from '../helpers/api.js';
import { removeHome, startServer, type RunningServer } from '../helpers/server.js';

/**
 * Browser recordings over the API: YAML files under $SVC_HOME/browser/recordings, written with
 * PUT (bad YAML answers its line and column, a schema error its step and field, a path-like name
 * is refused), listed, read, deleted to the trash and restored from it.
 */

let server: RunningServer;
const file = (name: string) => join(server.home, 'browser', 'recordings', `${name}.yml`);

const GREET = `description: Greets someone on the test page
params:
  - name: who
    description: The name to greet
    default: World
steps:
  - action: navigate
    value: "{{site}}/"
  - action: type
    target: "#name"
    value: "{{who}}"
  - action: click
    target: role=button[name="Send"]
  - action: wait
    value: Hello, {{who}}
`;
const VALID = GREET.replace('params:\n', 'params:\n  - name: site\n');

test.before(async () => {
  server = await startServer();
});
test.after(async () => {
  await server?.stop();
  if (server) removeHome(server.home);
});

test('PUT writes a recording; it is listed and read back with its parsed form', async () => {
  const r = await api(server.port, 'PUT', '/api/browser/recordings/greet', { yaml: VALID });
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.is(readFileSync(file('greet'), 'utf8'), VALID);
  const list = await api(server.port, 'GET', '/api/browser/recordings');
  assert.equal(
    list.body.recordings.map((x: { name: string; steps: number; description: string }) => [
      x.name,
      x.steps,
      x.description,
    ]),
    [['greet', 4, 'Greets someone on the test page']],
  );
  assert.equal(
    list.body.recordings[0].params.map((p: { name: string }) => p.name),
    ['site', 'who'],
  );
  const one = await api(server.port, 'GET', '/api/browser/recordings/greet');
  assert.is(one.status, 200);
  assert.is(one.body.yaml, VALID);
  assert.is(one.body.recording.steps[2].target, 'role=button[name="Send"]');
  assert.is(one.body.recording.params[1].default, 'World');
  const again = await api(server.port, 'PUT', '/api/browser/recordings/greet', { yaml: VALID });
  assert.is(again.status, 200, 'a replace answers 200');
});

test('bad YAML answers 400 with its line and column, and writes nothing', async () => {
  const r = await api(server.port, 'PUT', '/api/browser/recordings/broken', {
    yaml: 'description: x\nsteps:\n  - action: click\n   target: "#a"\n',
  });
  assert.is(r.status, 400, JSON.stringify(r.body));
  assert.match(r.body.error.message, /not valid YAML.*\(line 4, column \d+\)/);
  assert.is(r.body.error.details[0].line, 4);
  assert.ok(r.body.error.details[0].column >= 1);
  assert.not.ok(existsSync(file('broken')));
});

test('a schema error names the step and the field, with the line', async () => {
  const unknown = await api(server.port, 'PUT', '/api/browser/recordings/bad', {
    yaml: 'steps:\n  - action: navigate\n    value: http://x.test/\n  - action: fly\n    target: "#a"\n',
  });
  assert.is(unknown.status, 400);
  assert.match(
    unknown.body.error.message,
    /step 2, action: unknown action; one of navigate, snapshot, click/,
  );
  assert.is(unknown.body.error.details[0].step, 2);
  assert.is(unknown.body.error.details[0].line, 4);
  const missing = await api(server.port, 'PUT', '/api/browser/recordings/bad', {
    yaml: 'steps:\n  - action: click\n',
  });
  assert.is(missing.status, 400);
  assert.match(missing.body.error.message, /step 1, target: click needs a target/);
  const param = await api(server.port, 'PUT', '/api/browser/recordings/bad', {
    yaml: 'steps:\n  - action: navigate\n    value: "{{nope}}"\n',
  });
  assert.is(param.status, 400);
  assert.match(param.body.error.message, /step 1, value: \{\{nope\}\} is not a declared param/);
  const extra = await api(server.port, 'PUT', '/api/browser/recordings/bad', {
    yaml: 'steps:\n  - action: back\n    colour: red\n',
  });
  assert.is(extra.status, 400);
  assert.match(extra.body.error.message, /step 1: unknown field colour/);
  assert.not.ok(existsSync(file('bad')));
});

test('a name is 1-64 of [A-Za-z0-9._-], never a path', async () => {
  for (const name of ['..', '.hidden', '..%2Fescape', 'a%2Fb', 'x'.repeat(65), 'sp%20ace']) {
    const r = await api(server.port, 'PUT', `/api/browser/recordings/${name}`, { yaml: VALID });
    assert.is(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error.message, /Invalid recording name/);
  }
  assert.not.ok(existsSync(join(server.home, 'browser', 'escape.yml')));
  const missing = await api(server.port, 'GET', '/api/browser/recordings/nothing-here');
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'not_found');
});

test('DELETE moves a recording to the trash; restoring brings it back as it was', async () => {
  const del = await api(server.port, 'DELETE', '/api/browser/recordings/greet');
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.not.ok(existsSync(file('greet')));
  assert.equal((await api(server.port, 'GET', '/api/browser/recordings')).body.recordings, []);
  const trash = await api(server.port, 'GET', '/api/trash');
  assert.ok(
    trash.body.items.some(
      (i: { id: string; name: string }) => i.id === del.body.trash_id && i.name === 'greet.yml',
    ),
  );
  const back = await api(server.port, 'POST', `/api/trash/${del.body.trash_id}/restore`, {});
  assert.is(back.status, 200, JSON.stringify(back.body));
  assert.is(readFileSync(file('greet'), 'utf8'), VALID);
  assert.is(
    (await api(server.port, 'GET', '/api/browser/recordings')).body.recordings[0].name,
    'greet',
  );
});

test.run();
