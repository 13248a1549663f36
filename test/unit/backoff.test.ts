import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Backoff } from '../../src/supervisor/backoff.js';

test('restart delays grow with repeated crashes', () => {
  const b = new Backoff([100, 500, 1000], 5, 60_000, 60_000);
  const t = 1_000_000;
  assert.equal(b.next(t), { delayMs: 100, crashLoop: false });
  assert.equal(b.next(t + 1000), { delayMs: 500, crashLoop: false });
  assert.equal(b.next(t + 2000), { delayMs: 1000, crashLoop: false });
  assert.equal(b.next(t + 3000), { delayMs: 1000, crashLoop: false });
});

test('five crashes within a minute are a crash loop with a long pause, not a spin', () => {
  const b = new Backoff([100, 500], 5, 60_000, 60_000);
  const t = 5_000_000;
  for (let i = 0; i < 4; i++) assert.not.ok(b.next(t + i * 100).crashLoop);
  assert.equal(b.next(t + 500), { delayMs: 60_000, crashLoop: true });
});

test('crashes older than the window are forgotten', () => {
  const b = new Backoff([100, 500], 5, 60_000, 60_000);
  const t = 9_000_000;
  for (let i = 0; i < 4; i++) b.next(t + i);
  assert.equal(b.next(t + 61_000), { delayMs: 100, crashLoop: false });
  assert.is(b.recent, 1);
});

test.run();
