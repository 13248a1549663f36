import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chooseEngine, createEngine } from '../../src/gateway/engine/pick.js';
import { WsHub } from '../../src/gateway/ws/hub.js';
import { waitFor } from '../helpers/server.js';

/**
 * A client that stops reading must be told to resync, not silently skipped. The real hub on the
 * real HTTP engine (SVC_HTTP_ENGINE picks it, as for svc serve), and a raw TCP client that can
 * stop reading (WebSocket clients cannot).
 */
const engineName = chooseEngine();

interface Frame {
  topic?: string;
  type: string;
  seq?: number;
}

class RawClient {
  private buf = Buffer.alloc(0);
  readonly frames: Frame[] = [];
  constructor(readonly sock: Socket) {}

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const sock = connect(port, '127.0.0.1');
      const c = new RawClient(sock);
      let upgraded = false;
      sock.on('error', reject);
      sock.on('data', (d: Buffer) => {
        c.buf = Buffer.concat([c.buf, d]);
        if (!upgraded) {
          const end = c.buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          if (!c.buf.subarray(0, 12).toString().includes('101'))
            return reject(new Error(c.buf.toString()));
          upgraded = true;
          c.buf = c.buf.subarray(end + 4);
          resolve(c);
        }
        c.parse();
      });
      sock.write(
        'GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
  }

  send(obj: unknown): void {
    const payload = Buffer.from(JSON.stringify(obj));
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    const head =
      payload.length < 126
        ? Buffer.from([0x81, 0x80 | payload.length])
        : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
    this.sock.write(Buffer.concat([head, mask, masked]));
  }

  private parse(): void {
    for (;;) {
      if (this.buf.length < 2) return;
      let len = this.buf[1]! & 127;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) return;
      const opcode = this.buf[0]! & 15;
      if (opcode === 1)
        this.frames.push(JSON.parse(this.buf.subarray(off, off + len).toString()) as Frame);
      this.buf = this.buf.subarray(off + len);
    }
  }
}

const LAG = 'session:s_lag';
const MARK = 'session:s_mark';

test(`a client that stops reading is told to resync, and gets nothing more on that topic (${engineName} engine)`, async () => {
  const engine = await createEngine(engineName);
  const hub = new WsHub(engine, {
    frameLimit: 1 << 20,
    authorize: () => ({ ok: true, via: 'local', local: true }),
  });
  const port = await engine.listen('127.0.0.1', 0);
  const slow = await RawClient.open(port);
  const fast = await RawClient.open(port);
  for (const c of [slow, fast]) c.send({ type: 'subscribe', topics: [LAG] });
  await waitFor(
    () =>
      slow.frames.some((f) => f.type === 'subscribed') &&
      fast.frames.some((f) => f.type === 'subscribed'),
    5000,
    'both subscribed',
  );

  slow.sock.pause(); // stops reading: the kernel buffers fill, then the server's
  const big = 'x'.repeat(64 * 1024);
  const total = 600; // about 38 MB: far past the kernel buffers and the 4 MB lag limit
  const fastGot = () => fast.frames.filter((f) => f.topic === LAG).length;
  for (let i = 0; i < total; i++) {
    // Streamed text is the one kind of event above 4 KB; a new turn id each time keeps each its own frame.
    hub.publish(LAG, 'turn.text_delta', { turn_id: `t${i}`, delta: big });
    // A reading client stays well under the lag limit: at most 20 events (1.3 MB) in flight.
    // Waiting for it (not a fixed yield) keeps a loaded machine from making it lag as well.
    if (i % 20 === 19)
      await waitFor(
        () => fastGot() >= i + 1 - 20 || fast.frames.some((f) => f.type === 'resync'),
        20_000,
        'the fast client to keep up',
      );
  }
  assert.not.ok(
    fast.frames.some((f) => f.type === 'resync'),
    'the reading client is never told to resync',
  );
  await waitFor(
    () => fast.frames.filter((f) => f.topic === LAG).length === total,
    20_000,
    'the fast client to get every event',
  );
  slow.sock.resume();
  await waitFor(
    () => slow.frames.some((f) => f.type === 'resync'),
    20_000,
    'the slow client to be told to resync',
  );

  const resyncAt = slow.frames.findIndex((f) => f.type === 'resync');
  const before = slow.frames.slice(0, resyncAt).filter((f) => f.topic === LAG);
  assert.ok(
    before.length > 0 && before.length < total,
    `some events arrived before the resync (${before.length})`,
  );
  assert.equal(
    before.map((f) => f.seq),
    before.map((_, i) => i + 1),
    'what arrived before the resync has no gap',
  );
  assert.is(slow.frames[resyncAt]!.topic, LAG);

  // Nothing more on the topic after the resync. One more event on it (the fast client gets it),
  // then one on a topic the slow client subscribes to now: frames on a socket keep their order,
  // so once that marker is in, anything the hub sent the slow client on LAG would be in too.
  hub.publish(LAG, 'turn.text_delta', { turn_id: 'after-resync', delta: 'late' });
  await waitFor(() => fastGot() === total + 1, 20_000, 'the event after the resync (fast client)');
  const acks = () => slow.frames.filter((f) => f.type === 'subscribed').length;
  const acked = acks();
  slow.send({ type: 'subscribe', topics: [MARK] });
  await waitFor(() => acks() > acked, 5000, `the slow client subscribed to ${MARK}`);
  hub.publish(MARK, 'turn.text_delta', { turn_id: 'marker', delta: 'marker' });
  await waitFor(
    () => slow.frames.some((f) => f.topic === MARK),
    20_000,
    'the marker (slow client)',
  );
  assert.is(
    slow.frames.slice(resyncAt + 1).filter((f) => f.topic === LAG).length,
    0,
    'nothing more on the topic after the resync',
  );
  const fastSeqs = fast.frames.filter((f) => f.topic === LAG).map((f) => f.seq);
  assert.equal(
    fastSeqs,
    Array.from({ length: total + 1 }, (_, i) => i + 1),
    'the fast client was not held back and missed nothing',
  );

  slow.sock.destroy();
  fast.sock.destroy();
  hub.closeAll(1001, 'test over');
  engine.stopListening();
});

test.run();
