import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolvePaths } from '../../src/shared/paths.js';
import { RELAUNCH_ENV, serveArgs, startFromRecord } from '../../src/shared/upgrade/relaunch.js';
import { waitFor } from '../helpers/server.js';

const home = mkdtempSync(join(tmpdir(), 'svc-relaunch-'));
const paths = resolvePaths({ SVC_HOME: home });

test('a process started from a relaunch record is told so (it then waits for its port), in its home', async () => {
  const pid = startFromRecord(
    paths,
    {
      exec: process.execPath,
      args: [
        '-e',
        `console.log(JSON.stringify({ relaunch: process.env.${RELAUNCH_ENV}, home: process.env.SVC_HOME }))`,
      ],
      daemonized: true,
      url: null,
    },
    false,
  );
  assert.ok(pid > 0);
  const line = await waitFor(
    () => (existsSync(paths.serveLog) ? readFileSync(paths.serveLog, 'utf8').trim() : ''),
    10_000,
    'the started process to write to logs/serve.log',
  );
  assert.equal(JSON.parse(line), { relaunch: '1', home: paths.home });
});

test('the relaunch keeps the bound address and drops -d', () => {
  assert.equal(
    serveArgs(['serve', '-d', '--addr', '127.0.0.1:0', '--cors', 'x'], '127.0.0.1:4242'),
    ['--cors', 'x', '--addr', '127.0.0.1:4242'],
  );
});

test.after(() => rmSync(home, { recursive: true, force: true }));

test.run();
