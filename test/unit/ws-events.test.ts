import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import {
  capEvent,
  frameBytes,
  previewText,
  shrinkToFit,
  summarize,
  utf8Bytes,
} from '../../src/shared/protocol/event-cap.js';
import {
  deltaTypes,
  isDelta,
  topicKinds,
  WS_EVENT_MAX_BYTES,
  wsEventProblem,
  wsEvents,
  type Publish,
  type TopicKind,
  type WsEventType,
} from '../../src/shared/protocol/events.js';
import { typedPublish } from '../../src/shared/ws-publish.js';

/**
 * The /ws event catalogue (issue 11 item 3, issue 22's 4 KB cap): every type has topics, a
 * summary and a schema; a publish of a wrong shape does not compile; every type, given data far
 * over the cap, goes out within it (deltas aside) and still fits its schema.
 */

const types = Object.keys(wsEvents) as WsEventType[];

test('every event type has topics of known kinds, a summary and a zod schema', () => {
  assert.ok(types.length >= 50, `${types.length} types`);
  for (const t of types) {
    const spec = wsEvents[t];
    assert.ok(spec.topics.length > 0, `${t} has topics`);
    for (const k of spec.topics)
      assert.ok((topicKinds as readonly string[]).includes(k), `${t}: ${k} is a topic kind`);
    assert.ok(spec.summary.length > 10, `${t} says what it is`);
    assert.instance(spec.data, z.ZodType, `${t} has a schema`);
    // Its JSON Schema (what OpenAPI shows) can be made.
    assert.type(z.toJSONSchema(spec.data, { io: 'output', unrepresentable: 'any' }), 'object');
  }
  for (const k of topicKinds)
    assert.ok(
      types.some((t) => (wsEvents[t].topics as readonly TopicKind[]).includes(k)),
      `the ${k} topic has events`,
    );
  for (const d of deltaTypes) assert.ok(types.includes(d), `${d} is catalogued`);
});

test('a publish of a wrong type, topic or data shape does not compile (tsc checks this file)', () => {
  const sent: Array<[string, string, unknown]> = [];
  const publish: Publish = typedPublish((topic, type, data) => sent.push([topic, type, data]));
  publish('trash', 'trash.deleted', { id: 't_1' });
  publish('session:s_1', 'goal.cleared', { session_id: 's_1' });
  // @ts-expect-error: data of the wrong shape
  publish('trash', 'trash.deleted', { id: 1 });
  // @ts-expect-error: a field missing
  publish('trash', 'trash.emptied', {});
  // @ts-expect-error: a topic the type does not go to
  publish('tasks', 'trash.deleted', { id: 't_1' });
  // @ts-expect-error: a session event on a topic that is not a session's
  publish('sessions', 'turn.failed', { turn_id: 'u', status: 'failed', reason: 'x', message: 'y' });
  // @ts-expect-error: a type the catalogue does not have
  publish('server', 'server.exploded', {});
  assert.is(sent.length, 7, 'at run time each went through (the compiler is what refuses them)');
});

test('the check at the process boundary refuses what the catalogue does not list', () => {
  assert.is(wsEventProblem('trash', 'trash.deleted', { id: 't_1' }), null);
  assert.is(wsEventProblem('session:s_1', 'goal.cleared', { session_id: 's_1' }), null);
  assert.match(wsEventProblem('server', 'server.exploded', {}) ?? '', /unknown event type/);
  assert.match(
    wsEventProblem('tasks', 'trash.deleted', { id: 't_1' }) ?? '',
    /does not go to the topic tasks/,
  );
  assert.match(
    wsEventProblem('nowhere', 'trash.deleted', { id: 't_1' }) ?? '',
    /does not go to the topic/,
  );
  assert.match(wsEventProblem('trash', 'trash.deleted', { id: 7 }) ?? '', /trash.deleted: id:/);
});

/** Data of a JSON Schema's shape, every text `len` characters of multi-byte text, every list 30 long. */
function sample(schema: Record<string, any>, len: number, defs: Record<string, any>): unknown {
  if (schema.$ref) return sample(defs[String(schema.$ref).split('/').at(-1)!], len, defs);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) return sample(alts.find((a: any) => a.type !== 'null') ?? alts[0], len, defs);
  const type = Array.isArray(schema.type)
    ? schema.type.find((t: string) => t !== 'null')
    : schema.type;
  switch (type) {
    case 'string':
      return schema.pattern || schema.format
        ? undefined
        : `é☕${'x'.repeat(Math.min(len, (schema.maxLength ?? Infinity) - 2))}`;
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: 30 }, () => sample(schema.items ?? {}, len, defs));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries<any>(schema.properties ?? {})) {
        if (v.const === true && k === 'truncated') continue;
        out[k] = sample(v, len, defs);
      }
      if (
        schema.additionalProperties &&
        typeof schema.additionalProperties === 'object' &&
        Object.keys(out).length === 0
      ) {
        for (let i = 0; i < 5; i++) out[`k${i}`] = sample(schema.additionalProperties, len, defs);
      }
      return out;
    }
    default:
      return `any ${'z'.repeat(len)}`;
  }
}

test('every catalogued type, given data far over 4 KB, goes out within the cap and still fits its schema (deltas aside)', () => {
  const bounded: string[] = [];
  for (const t of types) {
    const spec = wsEvents[t];
    const json = z.toJSONSchema(spec.data, { io: 'output', unrepresentable: 'any' }) as Record<
      string,
      any
    >;
    const big = sample(json, 20_000, json.$defs ?? {});
    assert.ok(
      spec.data.safeParse(big).success,
      `${t}: the big sample fits the schema (${JSON.stringify(spec.data.safeParse(big).error?.issues[0])})`,
    );
    const topic = spec.topics[0] === 'session' ? 'session:s_0123456789' : spec.topics[0]!;
    // A type whose schema bounds it (draining: a number; upgrade: texts of at most 2,000 characters)
    // cannot get over the cap: its largest sample is within it.
    if (frameBytes(topic, t, big) <= WS_EVENT_MAX_BYTES) {
      bounded.push(t);
      continue;
    }
    const r = capEvent(topic, t, big);
    if (isDelta(t)) {
      assert.is(r.data, big, `${t} is a streamed delta: exempt`);
      continue;
    }
    assert.ok(r.over, `${t}: told it was over`);
    const frame = JSON.stringify({ topic, type: t, seq: 9_007_199_254_740_991, data: r.data });
    assert.ok(
      Buffer.byteLength(frame) <= WS_EVENT_MAX_BYTES,
      `${t}: ${Buffer.byteLength(frame)} bytes`,
    );
    assert.ok(
      spec.data.safeParse(r.data).success,
      `${t}: the cut data still fits its schema (${JSON.stringify(spec.data.safeParse(r.data).error?.issues[0])})`,
    );
    const small = sample(json, 3, json.$defs ?? {});
    if (frameBytes(topic, t, small) <= WS_EVENT_MAX_BYTES)
      assert.is(capEvent(topic, t, small).data, small, `${t}: small data goes out as it is`);
  }
  assert.ok(
    bounded.length < types.length / 4,
    `most types can carry long texts and were cut (bounded by their schema: ${bounded.join(', ')})`,
  );
});

test('cutting counts bytes, never splits a character, and keeps the shape', () => {
  const text = `${'☕'.repeat(2000)}🚀${'é'.repeat(2000)}`;
  for (const max of [10, 100, 1000, 3000]) {
    const p = previewText(text, max);
    assert.ok(p.truncated);
    assert.ok(
      utf8Bytes(JSON.stringify(p.text)) <= max,
      `${max}: ${utf8Bytes(JSON.stringify(p.text))}`,
    );
    assert.ok(p.text.endsWith('…'));
    assert.ok(text.startsWith(p.text.slice(0, -1)), 'a prefix');
    assert.not.match(p.text, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone high surrogate');
    if (max >= 100)
      assert.ok(
        p.text.length > max / 8,
        `${max}: not cut far more than needed (${p.text.length} characters)`,
      );
  }
  assert.equal(previewText('short', 100), { text: 'short', truncated: false });

  const v = {
    id: 'm_1',
    list: Array.from({ length: 500 }, (_, i) => ({ n: i, s: 'ab' })),
    body: { text: 'y'.repeat(10_000), note: 'z'.repeat(3000) },
  };
  const r = shrinkToFit(v, 2000);
  assert.ok(r.truncated);
  assert.ok(utf8Bytes(JSON.stringify(r.value)) <= 2000);
  const out = r.value as typeof v;
  assert.is(out.id, 'm_1', 'short values stay');
  assert.type(out.body.text, 'string');
  assert.ok(
    Array.isArray(out.list) && out.list.length < 500 && out.list[0]!.n === 0,
    'a long list keeps its head',
  );
  assert.is(v.body.text.length, 10_000, 'the original is untouched');

  // Ids are never cut, however many long texts crowd them (a provider's call id is about 30 characters).
  const crowded = {
    call_id: `toolu_${'7'.repeat(30)}`,
    items: Array.from({ length: 200 }, (_, i) => ({
      id: `turn_${'a'.repeat(21)}${i}`,
      text: 'w'.repeat(500),
    })),
  };
  const kept = shrinkToFit(crowded, 3000).value as typeof crowded;
  assert.is(kept.call_id, crowded.call_id);
  assert.ok(
    kept.items.length > 0 && kept.items.every((x, i) => x.id === crowded.items[i]!.id),
    'each kept item keeps its id',
  );

  const same = { a: 1 };
  assert.is(summarize(same, 100), same, 'what fits is passed through');
  assert.is(
    (summarize({ id: 'x', t: 'q'.repeat(5000) }, 500) as { truncated?: true }).truncated,
    true,
  );
});

test.run();
