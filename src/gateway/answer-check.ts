import type { z } from 'zod';
import { issueDetails } from '../shared/errors.js';
import type { Reply } from './http.js';
import type { Route } from './route.js';

/**
 * Tests set SVC_CHECK_RESPONSES=1 so every JSON answer is checked against the schema its route
 * declares: the e2e suite then proves the OpenAPI document tells the truth. Never in production:
 * a check costs a parse per answer, and a client is better served by the answer than by a 500.
 */
export const checkingAnswers = process.env.SVC_CHECK_RESPONSES === '1';

/** What is wrong with a route's answer against its declaration, or undefined when it matches. */
export function answerMismatch(route: Route, reply: Reply): string | undefined {
  const status = reply.status ?? 200;
  if (status < 200 || status > 299) return undefined;
  if (route.response === undefined && route.others === undefined)
    return 'it declares no response schema';
  const main = route.status ?? 200;
  const other = route.others?.[status as keyof NonNullable<Route['others']>];
  if (status !== main && !other) return `it answered ${status}, which it does not declare`;
  const schema = status === main ? route.response : other?.schema;
  if (!schema) return undefined; // declared without a JSON body: 204, a file, a stream
  const json = jsonOf(reply);
  if (json === NOT_JSON)
    return (status === main ? route.produces : other?.contentType)
      ? undefined
      : 'it answered a body that is not JSON where a schema is declared';
  const result = (schema as z.ZodType).safeParse(json.value);
  if (!result.success)
    return issueDetails(result.error)
      .slice(0, 5)
      .map((i) => `${i.path || '(the body)'}: ${i.message}`)
      .join('; ');
  const extra: string[] = [];
  extraKeys(json.value, result.data, '', extra);
  if (extra.length > 0) return `fields its schema does not name: ${extra.slice(0, 8).join(', ')}`;
  return undefined;
}

const NOT_JSON = Symbol('not json');

/** The body as the client reads it: a JSON round trip (undefined fields gone), or JSON text parsed. */
function jsonOf(reply: Reply): { value: unknown } | typeof NOT_JSON {
  const body = reply.body;
  if (body instanceof Uint8Array || typeof body === 'string') {
    const type = Object.entries(reply.headers ?? {}).find(
      ([k]) => k.toLowerCase() === 'content-type',
    )?.[1];
    if (!type?.startsWith('application/json')) return NOT_JSON;
    return { value: JSON.parse(Buffer.from(body).toString('utf8')) as unknown };
  }
  return { value: body === undefined ? undefined : (JSON.parse(JSON.stringify(body)) as unknown) };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys the answer has that the parsed value dropped: fields a (non-loose) schema does not name. */
function extraKeys(input: unknown, output: unknown, path: string, out: string[]): void {
  if (Array.isArray(input) && Array.isArray(output)) {
    for (const [i, v] of input.entries()) extraKeys(v, output[i], `${path}[${i}]`, out);
    return;
  }
  if (!isRecord(input) || !isRecord(output)) return;
  for (const k of Object.keys(input)) {
    const p = path ? `${path}.${k}` : k;
    if (!(k in output)) out.push(p);
    else extraKeys(input[k], output[k], p, out);
  }
}
