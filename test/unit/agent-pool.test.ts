import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configSchema } from '../../src/shared/config/schema.js';
import { deadlineMs } from '../../src/shared/protocol/routes.js';
import { AgentPool } from '../../src/supervisor/agent-pool.js';
import { Child } from '../../src/supervisor/child-process.js';
import { ExitLog } from '../../src/supervisor/exit-log.js';
import { Services } from '../../src/supervisor/services.js';
import { forkEntry } from '../../src/supervisor/spawn-child.js';
import { waitFor } from '../helpers/server.js';

const slow = fileURLToPath(new URL('../fixtures/agent-slow-start.js', import.meta.url));
const config = configSchema.parse({});

test("a worker that loads slower than a request's deadline still gets its start (agent and service alike)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-pool-'));
  const loads = deadlineMs('child.start') + 1000;
  const slowChild = (role: 'agent' | 'browser', out: string) =>
    new Child(
      role,
      forkEntry(slow, {
        ...process.env,
        SVC_ROLE: role,
        SLOW_START_MS: String(loads),
        IPC_TEST_OUT: out,
      }),
    );
  const startedIn = (out: string, what: string) =>
    waitFor(
      () => existsSync(out) && readFileSync(out, 'utf8') === 'started\n',
      loads + 10_000,
      `the ${what} to get its start once loaded (after ${loads} ms)`,
    );
  const pool = new AgentPool({
    spawn: () => slowChild('agent', join(dir, 'agent')),
    config: () => config,
    turnsOn: () => 0,
    accepting: () => true,
    stopGraceMs: 2000,
  });
  // A service role (the browser worker once said "no browser is configured" for good when its
  // start was dropped this way): the same bound, and the first request waits for the start.
  const services = new Services({
    spawn: (role) => slowChild(role === 'agent' ? 'agent' : 'browser', join(dir, 'browser')),
    config: () => config,
    store: { cronWork: () => false },
    running: () => true,
    exits: new ExitLog(),
  });
  try {
    assert.ok(pool.pick(true), 'a worker is started');
    const [browser] = await Promise.all([
      services.ensure('browser'),
      startedIn(join(dir, 'agent'), 'agent worker'),
      startedIn(join(dir, 'browser'), 'browser worker'),
    ]);
    assert.is(browser?.state, 'running');
  } finally {
    await Promise.all([pool.stop(), ...services.all().map((c) => c.stop(2000))]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
