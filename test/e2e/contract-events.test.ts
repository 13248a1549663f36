import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repoRoot } from '../helpers/server.js';
import {
  connectWs,
  newChat,
  sse,
  startRig,
  type TurnRig,
  type WsClient,
} from '../helpers/turns.js';

/**
 * The event shapes a release documented stay: fields are added, never moved or dropped. Each
 * release's SSE and /ws shapes are pinned in test/fixtures/contract/{sse,ws}-<major.minor>.json
 * (each event type's field names, and those of its `data`), and a real turn's streams must still
 * carry every field of every release's file. SVC_CONTRACT_RECORD=1 writes this release's files
 * from the run instead (for a new release; an existing file is never rewritten by hand).
 */

const dir = join(repoRoot, 'test', 'fixtures', 'contract');
const version = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }
).version;
const release = version.split('.').slice(0, 2).join('.');

interface Shape {
  fields: string[];
  data: string[];
}
interface Contract {
  release: string;
  /** Every event type of the stream, with its field names and those of its data. */
  events: Record<string, Shape>;
}

const keys = (v: unknown) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.keys(v) : [];

/** Each type's field names over all its events (a union: an optional field counts once seen). */
function shapes(events: { type: string; frame: unknown }[]): Record<string, Shape> {
  const out: Record<string, { fields: Set<string>; data: Set<string> }> = {};
  for (const e of events) {
    const s = (out[e.type] ??= { fields: new Set(), data: new Set() });
    for (const k of keys(e.frame)) s.fields.add(k);
    for (const k of keys((e.frame as { data?: unknown }).data)) s.data.add(k);
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([t, s]) => [t, { fields: [...s.fields].sort(), data: [...s.data].sort() }]),
  );
}

/** Every release's file of a stream holds; this release's lists every type the stream carries. */
function check(kind: 'sse' | 'ws', seen: Record<string, Shape>): void {
  const mine = join(dir, `${kind}-${release}.json`);
  if (process.env.SVC_CONTRACT_RECORD === '1' && !existsSync(mine)) {
    writeFileSync(mine, `${JSON.stringify({ release, events: seen }, null, 2)}\n`);
    console.log(`recorded ${mine}`);
  }
  assert.ok(
    existsSync(mine),
    `no ${kind} contract for release ${release}: record it with SVC_CONTRACT_RECORD=1 node dist/test/run.js contract-events`,
  );
  const files = readdirSync(dir).filter((f) => f.startsWith(`${kind}-`) && f.endsWith('.json'));
  for (const file of files) {
    const contract = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Contract;
    for (const [type, want] of Object.entries(contract.events)) {
      const got = seen[type];
      assert.ok(got, `${file}: the ${kind} stream no longer carries ${type}`);
      const lost = [
        ...want.fields.filter((f) => !got.fields.includes(f)),
        ...want.data.filter((f) => !got.data.includes(f)).map((f) => `data.${f}`),
      ];
      assert.equal(lost, [], `${file}: ${type} lost fields release ${contract.release} had`);
    }
  }
  const current = JSON.parse(readFileSync(mine, 'utf8')) as Contract;
  const unrecorded = Object.keys(seen).filter((t) => !(t in current.events));
  assert.equal(unrecorded, [], `${kind} event types missing from ${mine}`);
}

let rig: TurnRig;
test.before(async () => {
  rig = await startRig();
});
test.after(async () => {
  await rig?.stop();
});

/** One turn with reasoning, text and a tool call, then the reply. */
function script(): void {
  rig.fake.enqueue(
    {
      parts: [
        { reasoning: ['Weighing ', 'it.'] },
        { text: ['Let me ', 'check.'] },
        { toolCall: { id: 'c1', name: 'current_time', arguments: ['{"time_zone":"UTC"}'] } },
      ],
      usage: { input: 20, output: 10 },
    },
    { parts: [{ text: ['It is ', 'now.'] }], usage: { input: 30, output: 5 } },
  );
}

test('SSE and /ws: a real turn carries every field each release documented (turn.accepted: turn_id at the top too)', async () => {
  const id = await newChat(rig.port, { show_reasoning: true });
  const topic = `session:${id}`;
  const ws: WsClient = await connectWs(rig.port, [topic]);
  try {
    script();
    const s = await sse(rig.port, `/api/chat/${id}/turn`, { message: 'What time is it?' });
    assert.is(s.status, 200);
    const accepted = s.events[0]!;
    assert.is(accepted.event, 'turn.accepted');
    assert.match(accepted.data.turn_id, /^turn_/, 'the id at the top, as release 0.1.0 sent it');
    assert.is(accepted.data.data.turn_id, accepted.data.turn_id, 'and in data, as every event');
    await ws.waitEvent(
      (e) => e.type === 'turn.completed' && e.data.turn_id === accepted.data.turn_id,
      'the SSE turn on /ws',
    );
    // A second turn sent over /ws: its reply frame (turn.accepted) is part of the /ws contract.
    script();
    ws.send({ type: 'turn', session_id: id, message: { text: 'Again?' }, request_id: 'r1' });
    const reply = await ws.waitFrame((f) => f.request_id === 'r1', 'the turn reply frame');
    await ws.waitEvent(
      (e) => e.type === 'turn.completed' && e.data.turn_id === reply.turn_id,
      'the /ws turn completed',
    );
    check('sse', shapes(s.events.map((e) => ({ type: e.event, frame: e.data }))));
    check(
      'ws',
      shapes([
        ...ws.events.map((e) => ({ type: e.type, frame: e })),
        { type: `reply:${reply.type}`, frame: reply },
      ]),
    );
  } finally {
    ws.close();
  }
});

test.run();
