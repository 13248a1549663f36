import { readFileSync } from 'node:fs';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiDocument } from '../../src/release/api-document.js';
import { apiTypes, apiTypesFile } from '../../src/release/api-types.js';

/**
 * The OpenAPI document GET /api/openapi.json serves (built here from the same route table) passes
 * Redocly's recommended rules, the engine of `@redocly/cli lint`, and the Web UI's generated API
 * types (web/src/lib/api-schema.d.ts) are what openapi-typescript makes of it today. The Web UI's
 * type check (npm run build) then proves that a client generated from the document fits its use.
 */

const doc = apiDocument();

/**
 * Warnings the recommended rules give that are true of svc and not a fault of the document:
 * each with why. Any other warning fails the test, as does every error.
 */
const accepted: Array<{ rule: string; at: RegExp; why: string }> = [
  {
    rule: 'no-unused-components',
    at: /^#\/components\/schemas\/WsEvent\./,
    why: 'the /ws event frames are listed by x-ws-events, which OpenAPI does not follow',
  },
  {
    rule: 'operation-2xx-response',
    at: /^#\/paths\/~1ws\/get\/responses$/,
    why: '/ws answers 101 Switching Protocols: a WebSocket, not a 2xx',
  },
  {
    rule: 'operation-2xx-response',
    at: /^#\/paths\/~1api~1mcp~1oauth~1callback\/get\/responses$/,
    why: 'the OAuth callback sends the browser on with 303 (declared): a redirect, not a 2xx',
  },
  {
    rule: 'no-ambiguous-paths',
    at: /^#\/paths\/~1api~1workflows~1runs~1\{id\}$/,
    why: 'POST /api/workflows/{name}/run and GET /api/workflows/runs/{id}: no method has both',
  },
];

const where = (p: NormalizedProblem) => p.location[0]?.pointer ?? '(no location)';
const describe = (p: NormalizedProblem) => `${p.severity} ${p.ruleId} at ${where(p)}: ${p.message}`;

test("the served document passes Redocly's recommended rules", async () => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: 'openapi.json',
    config,
  });
  const faults = problems.filter(
    (p) =>
      p.severity === 'error' || !accepted.some((a) => a.rule === p.ruleId && a.at.test(where(p))),
  );
  for (const p of faults) console.error(describe(p));
  assert.is(faults.length, 0, `${faults.length} problems:\n${faults.map(describe).join('\n')}`);
});

test('web/src/lib/api-schema.d.ts is generated from the current document', async () => {
  const committed = readFileSync(apiTypesFile, 'utf8');
  const now = await apiTypes();
  if (committed === now) return;
  const a = committed.split('\n');
  const b = now.split('\n');
  const at = a.findIndex((line, i) => line !== b[i]);
  assert.unreachable(
    `web/src/lib/api-schema.d.ts is stale (routes changed): run \`npm run api-types\` and commit it.\nFirst difference, line ${at + 1}:\n  committed: ${a[at]}\n  generated: ${b[at]}`,
  );
});

test.run();
