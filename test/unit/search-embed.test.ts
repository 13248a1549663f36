import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configSchema } from '../../src/shared/config/schema.js';
import { openAndMigrate, type Db } from '../../src/shared/store/db.js';
import { appendMessage } from '../../src/shared/store/messages.js';
import { createSession } from '../../src/shared/store/sessions.js';
import { readEmbedMark } from '../../src/shared/store/vectors.js';
import { fillEmbeddings } from '../../src/supervisor/search-embed.js';
import { waitFor } from '../helpers/server.js';

/**
 * The background embedding fill (issue 36.5) over a real svc.db and a stand-in /v1/embeddings:
 * it stops and starts again where its mark is (a restart embeds nothing twice but the batch it
 * was waiting on), and a model with other vectors starts over.
 */

const dir = mkdtempSync(join(tmpdir(), 'svc-embed-'));
const sent: string[] = [];
/** While set, answers wait for it: the fill is caught with a batch under way. */
let held: Promise<void> | null = null;
let release = () => {};
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    const input = (JSON.parse(body) as { input: string[] }).input;
    sent.push(...input);
    if (held) await held;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        data: input.map((t, index) => ({ index, embedding: [t.length, 1, 0, 0] })),
        usage: { prompt_tokens: input.length },
      }),
    );
  });
});
let port = 0;
let db: Db;

test.before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  db = openAndMigrate(join(dir, 'svc.db')).db;
  const s = createSession(db, { title: 'many' }).id;
  for (let i = 0; i < 80; i++)
    appendMessage(db, s, { role: 'user', content: { text: `message number ${i}` } });
});
test.after(() => {
  db?.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const config = (model: string) =>
  configSchema.parse({
    models: { emb: { provider: 'custom', model, base_url: `http://127.0.0.1:${port}/v1` } },
    slots: { embeddings: 'emb' },
  });
const newest = () => (db.prepare('SELECT max(rowid) AS n FROM messages').get() as { n: number }).n;

test('the fill stops and goes on from its mark after a restart', async () => {
  held = new Promise((r) => (release = r));
  const first = fillEmbeddings(db, () => config('m1'));
  await waitFor(() => sent.length > 0, 10_000, 'a first request');
  // Let the first batch through, hold the second: the stop comes with it under way.
  const one = sent.length;
  release();
  held = new Promise((r) => (release = r));
  await waitFor(() => sent.length > one, 10_000, 'a second request');
  first.stop();
  release();
  held = null;
  const mark = readEmbedMark(db)!.mark;
  assert.ok(mark < newest(), `stopped part way: ${mark}`);
  const before = sent.length;
  const second = fillEmbeddings(db, () => config('m1'));
  await waitFor(() => readEmbedMark(db)?.mark === newest(), 10_000, 'the rest');
  second.stop();
  const again = sent.slice(before);
  const done = db
    .prepare('SELECT content FROM messages WHERE rowid <= ?')
    .all(mark)
    .map((r) => (JSON.parse((r as { content: string }).content) as { text: string }).text);
  // At most the one batch that was under way at the stop is sent again; nothing below the mark.
  assert.ok(again.length <= 80 - done.length + 32, `sent again: ${again.length}`);
  assert.not.ok(
    again.some((t) => done.includes(t) && again.indexOf(t) !== again.lastIndexOf(t)),
    'no text twice after the restart',
  );
  for (const t of done) assert.not.ok(again.includes(t), `${t} was embedded again`);
  const n = db.prepare('SELECT count(*) AS n FROM search_vec').get() as { n: number };
  assert.is(n.n, 80);
  const usage = db
    .prepare("SELECT count(*) AS n FROM usage_records WHERE origin = 'embedding'")
    .get() as { n: number };
  assert.ok(usage.n >= 3, `usage rows: ${usage.n}`);
});

test('another model starts over: its vectors replace the old ones', async () => {
  const before = sent.length;
  const fill = fillEmbeddings(db, () => config('m2'));
  await waitFor(
    () => readEmbedMark(db)?.model.includes('|m2|') && readEmbedMark(db)?.mark === newest(),
    10_000,
    'the new model to embed everything',
  );
  fill.stop();
  assert.is(sent.length - before, 80);
  const n = db.prepare('SELECT count(*) AS n FROM search_vec').get() as { n: number };
  assert.is(n.n, 80);
});

test.run();
