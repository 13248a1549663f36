import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Child } from '../../src/supervisor/child-process.js';
import { roleSpecs } from '../../src/supervisor/roles.js';
import { forkEntry } from '../../src/supervisor/spawn-child.js';
import { waitFor } from '../helpers/server.js';

/**
 * Issue 37: a worker that goes quiet gives its garbage back. The child is a real process started
 * with the cron role's V8 flags, left holding ~60 MB of dead objects; the test plays the
 * supervisor and asks for its stats (as liveness pings and `svc status` do, which are not work).
 */
const peer = fileURLToPath(new URL('../fixtures/idle-gc-peer.js', import.meta.url));

test('an idle worker collects what a burst of work left behind, pings and stats notwithstanding', async () => {
  const child = new Child(
    'cron',
    forkEntry(peer, { ...process.env, SVC_ROLE: 'cron' }, 'inherit', [
      ...(roleSpecs.cron.v8Flags ?? []),
      // V8's own reducer would collect too, some seconds later: off, so what is seen is ours.
      '--no-memory-reducer',
    ]),
  );
  try {
    const heap = async () =>
      (await child.endpoint.request('child.stats', {}, { to: 'cron' })).heap_used_bytes ?? 0;
    const first = await waitFor(async () => (await heap()) || undefined, 10_000, 'stats');
    assert.ok(first > 40e6, `the objects are counted at first (${first} bytes)`);
    // The work that drops them; then only stats requests, every 100 ms.
    await child.endpoint.request('worker.echo', { text: 'drop' }, { to: 'cron' });
    const dropped = await heap();
    assert.ok(dropped > 40e6, `dead but not yet collected (${dropped} bytes)`);
    const later = await waitFor(
      async () => {
        const h = await heap();
        await new Promise((r) => setTimeout(r, 100));
        return h < 20e6 ? h : undefined;
      },
      10_000,
      'the heap to shrink while idle',
    );
    assert.ok(later < first / 2, `${first} -> ${later} bytes`);
  } finally {
    await child.stop(2000);
  }
});

test.run();
