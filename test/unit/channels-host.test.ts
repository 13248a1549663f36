import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Adapter, AdapterEvents } from '../../src/workers/channels/adapter.js';
import { AdapterHost } from '../../src/workers/channels/host.js';
import { waitFor } from '../helpers/server.js';

/**
 * The adapter host's crash loop (issue 14): an adapter that keeps failing is restarted with
 * backoff, then given up on after ten failures in a row with the reason in its status; another
 * platform's host is untouched; saving the configuration (a new start) tries again. The waits
 * are shortened here; the real ones (2 s up to a minute) are the host's default.
 */

/** An adapter whose connection fails as soon as it starts, or (when `healthy`) stays up until stopped. */
function adapter(platform: 'telegram' | 'messenger', healthy: () => boolean): Adapter {
  let stop: () => void = () => undefined;
  return {
    platform,
    canEdit: false,
    hasButtons: false,
    textCap: 4096,
    run: (events: AdapterEvents) =>
      new Promise<void>((resolve, reject) => {
        if (!healthy()) return reject(new Error('401 Unauthorized'));
        events.connected('bot');
        stop = resolve;
      }),
    stop: async () => stop(),
    sendText: async () => null,
    editText: async () => undefined,
    sendFile: async () => null,
    typing: async () => undefined,
  };
}

test('ten failures in a row: the host gives up and says why; the other platform keeps running; a new start tries again', async () => {
  let good = false;
  let created = 0;
  const failing = new AdapterHost(
    'telegram',
    {
      create: async () => {
        created++;
        return adapter('telegram', () => good);
      },
      message: async () => undefined,
      connected: () => undefined,
      changed: () => undefined,
    },
    [1, 2, 3],
  );
  const other = new AdapterHost('messenger', {
    create: async () => adapter('messenger', () => true),
    message: async () => undefined,
    connected: () => undefined,
    changed: () => undefined,
  });
  failing.start();
  other.start();
  try {
    await waitFor(
      () => /gave up/.test(failing.status(null).error ?? ''),
      10_000,
      'the host to give up',
    );
    const s = failing.status(null);
    assert.is(s.state, 'error');
    assert.match(
      s.error ?? '',
      /^gave up after 10 failures in a row; last: 401 Unauthorized\. Save the configuration again to retry\.$/,
    );
    assert.is(created, 10, 'ten starts, then no more');
    assert.is(s.restarts, 9);
    assert.is(other.status(null).state, 'running', 'the other platform is untouched');
    assert.ok(other.live(), 'and takes sends');

    // Saving the configuration again starts it afresh.
    good = true;
    failing.start();
    await waitFor(
      () => failing.status(null).state === 'running',
      10_000,
      'the retried adapter to connect',
    );
    assert.is(failing.status(null).error, null);
  } finally {
    await failing.stop();
    await other.stop();
  }
});

test.run();
