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
import { forkEntry } from '../../src/supervisor/spawn-child.js';
import { waitFor } from '../helpers/server.js';

const slow = fileURLToPath(new URL('../fixtures/agent-slow-start.js', import.meta.url));
const config = configSchema.parse({});

test("a worker that loads slower than a request's deadline still gets its start", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-agent-pool-'));
  const out = join(dir, 'out');
  const loads = deadlineMs('child.start') + 1000;
  const pool = new AgentPool({
    spawn: () =>
      new Child(
        'agent',
        forkEntry(slow, { ...process.env, SLOW_START_MS: String(loads), IPC_TEST_OUT: out }),
      ),
    config: () => config,
    turnsOn: () => 0,
    accepting: () => true,
    stopGraceMs: 2000,
  });
  try {
    assert.ok(pool.pick(true), 'a worker is started');
    await waitFor(
      () => existsSync(out) && readFileSync(out, 'utf8') === 'started\n',
      loads + 10_000,
      `the worker to get its start once loaded (after ${loads} ms)`,
    );
  } finally {
    await pool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
