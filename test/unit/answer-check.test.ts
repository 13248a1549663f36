import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { z } from 'zod';
import { answerMismatch } from '../../src/gateway/answer-check.js';
import { route } from '../../src/gateway/route.js';
import { apiDocument, withRouteTable } from '../../src/release/api-document.js';

/** Every zod schema the answer modules export, by name. */
async function answerSchemas(): Promise<Map<string, z.ZodType>> {
  const dir = fileURLToPath(new URL('../../src/shared/protocol/', import.meta.url));
  const files = [
    join(dir, 'answers.js'),
    ...readdirSync(join(dir, 'answers'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(dir, 'answers', f)),
  ];
  const out = new Map<string, z.ZodType>();
  for (const f of files)
    for (const [name, v] of Object.entries((await import(f)) as Record<string, unknown>))
      if (v instanceof z.ZodType) out.set(`${f.slice(dir.length)}: ${name}`, v);
  return out;
}

/** Whether a z.lazy's schema has been built (zod keeps it on the definition once built). */
const built = (s: z.ZodType) =>
  (s._zod.def as { _cachedInner?: unknown })._cachedInner !== undefined;

// First in this file: the document built by the tests below builds every answer.
test('answer schemas are built on first use, not when the gateway builds its route table', async () => {
  const schemas = await answerSchemas();
  assert.ok(schemas.size > 50, `found only ${schemas.size} answer schemas`);
  const eager = [...schemas].filter(([, s]) => s._zod.def.type !== 'lazy').map(([n]) => n);
  assert.equal(eager, [], `wrap these in z.lazy (a start builds them for nothing): ${eager}`);
  withRouteTable(() => undefined);
  const early = [...schemas].filter(([, s]) => built(s)).map(([n]) => n);
  assert.equal(early, [], `built while the route table was: ${early}`);
  apiDocument(); // the document's reader builds them: proof the check above can see a build
  assert.ok([...schemas.values()].filter(built).length > 50);
});

const item = z.object({ id: z.string(), n: z.number() });
const r = route({
  method: 'POST',
  path: '/api/things',
  summary: 'a thing',
  status: 201,
  response: item,
  others: { 202: { description: 'later', schema: z.object({ status: z.literal('queued') }) } },
  handler: () => ({ status: 201, body: { id: 'a', n: 1 } }),
});

test('an answer its schema describes passes, JSON text included', () => {
  assert.is(answerMismatch(r, { status: 201, body: { id: 'a', n: 1 } }), undefined);
  assert.is(
    answerMismatch(r, {
      status: 201,
      body: Buffer.from('{"id":"a","n":2}'),
      headers: { 'Content-Type': 'application/json' },
    }),
    undefined,
  );
  assert.is(answerMismatch(r, { status: 202, body: { status: 'queued' } }), undefined);
  assert.is(
    answerMismatch(r, { status: 409, body: { error: {} } }),
    undefined,
    'errors are not 2xx',
  );
});

test('a wrong type, a missing field, an unnamed field and an undeclared status are named', () => {
  assert.match(answerMismatch(r, { status: 201, body: { id: 'a', n: '1' } }) ?? '', /^n: /);
  assert.match(answerMismatch(r, { status: 201, body: { id: 'a' } }) ?? '', /^n: /);
  assert.match(
    answerMismatch(r, { status: 201, body: { id: 'a', n: 1, secret: 'x' } }) ?? '',
    /does not name: secret/,
  );
  assert.match(answerMismatch(r, { body: { id: 'a', n: 1 } }) ?? '', /answered 200/);
  assert.match(answerMismatch(r, { status: 201, body: 'text' }) ?? '', /not JSON/);
});

test('an answer of a route that declares none is refused', () => {
  // The type requires a declaration; a route built around it (a cast, plain JS) is still caught.
  const bare = { ...r, response: undefined, others: undefined } as unknown as typeof r;
  assert.match(answerMismatch(bare, { body: { a: 1 } }) ?? '', /declares no response schema/);
  assert.is(answerMismatch(bare, { status: 404, body: { error: {} } }), undefined);
});

test('every operation of the route table declares its 2xx answer', () => {
  const undeclared = withRouteTable((routes) =>
    routes
      .filter((x) => x.response === undefined && x.others === undefined)
      .map((x) => `${x.method} ${x.path}`),
  );
  assert.equal(undeclared, [], `without a declared answer: ${undeclared.join(', ')}`);
});

interface Answer {
  $ref?: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
}

test('the document gives each 2xx answer its schema and each error the one error shape', () => {
  const doc = apiDocument() as {
    paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
    components: { responses: Record<string, Answer> };
  };
  const isError = (a: Answer) => {
    const shared = a.$ref?.startsWith('#/components/responses/')
      ? doc.components.responses[a.$ref.slice('#/components/responses/'.length)]
      : a;
    return shared?.content?.['application/json']?.schema?.$ref === '#/components/schemas/Error';
  };
  const faults: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const name = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses).map(Number);
      // A WebSocket answers 101; a browser sent on (OAuth) 303: neither has a body.
      if (!statuses.some((s) => s < 400)) faults.push(`${name}: no success answer`);
      for (const s of statuses) {
        const a = op.responses[String(s)]!;
        if (s >= 200 && s < 300 && s !== 204) {
          const types = Object.entries(a.content ?? {});
          if (types.length === 0 || types.some(([, c]) => !c.schema))
            faults.push(`${name}: ${s} has no schema`);
        }
        if (s >= 400 && !isError(a)) faults.push(`${name}: ${s} is not the error shape`);
      }
      if (!statuses.includes(500) && path !== '/ws') faults.push(`${name}: no 500`);
    }
  assert.equal(faults, [], faults.join('\n'));
});

test.run();
