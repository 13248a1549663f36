import { z } from 'zod';
import {
  topicKinds,
  WS_EVENT_MAX_BYTES,
  wsEvents,
  type TopicKind,
} from '../shared/protocol/events.js';
import { errorStatus } from '../shared/errors.js';
import { version } from '../shared/version.js';
import type { Route } from './route.js';

const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

/** One shared answer per error status (components.responses), so each route only refers to it. */
const errorAnswer = (status: number) => ({ $ref: `#/components/responses/Error${status}` });

/** The error statuses svc answers, each with the codes behind it (src/shared/errors.ts). */
const errorStatuses: Record<string, string> = {};
for (const [code, status] of Object.entries(errorStatus))
  errorStatuses[status] = errorStatuses[status] ? `${errorStatuses[status]}, ${code}` : code;

/**
 * The error answers a route can give: what every route can meet (a foreign Origin is refused,
 * public routes included) plus what its shape allows.
 */
function errorsOf(r: Route): number[] {
  const out = new Set<number>([403, 500]);
  if (r.body || r.query || r.stream) out.add(400);
  if (!r.public) out.add(401);
  if (r.path.includes(':')) out.add(404);
  for (const s of Object.keys(r.errorPages ?? {})) out.add(Number(s));
  if (r.body) out.add(413).add(415);
  if (r.work ?? r.method !== 'GET') out.add(503).add(507);
  for (const s of r.errors ?? []) out.add(s);
  return [...out].sort((a, b) => a - b);
}

/**
 * zod → JSON Schema, with schemas named by `.meta({ id })` (Session, Message, …) moved to
 * components.schemas and referenced there, so a generated client names them.
 */
class SchemaSet {
  readonly named: Record<string, unknown> = {};
  of(schema: z.ZodType, io: 'input' | 'output'): unknown {
    const {
      $schema: _,
      $defs,
      ...rest
    } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as {
      $schema?: string;
      $defs?: Record<string, unknown>;
    } & Record<string, unknown>;
    for (const [id, def] of Object.entries($defs ?? {})) this.named[id] ??= this.refs(def);
    return this.refs(rest);
  }
  private refs(v: unknown): unknown {
    return JSON.parse(
      JSON.stringify(v).replaceAll('"#/$defs/', '"#/components/schemas/'),
    ) as unknown;
  }
}

/** The parts of the document its route's answer schema names; the rest is OpenAPI's own. */
export interface OpenApiDocument extends Record<string, unknown> {
  openapi: string;
  info: { title: string; version: string } & Record<string, unknown>;
  paths: Record<string, Record<string, unknown>>;
}

/** OpenAPI 3.1, generated from the same route table and zod schemas the gateway enforces. */
export function openApiDocument(routes: Route[]): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas = new SchemaSet();
  const errorAnswers: Record<string, unknown> = {};
  for (const status of [...new Set(routes.flatMap(errorsOf))].sort((a, b) => a - b))
    errorAnswers[`Error${status}`] = {
      description: errorStatuses[status] ?? 'An error',
      content: errorContent,
    };
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (r.query) {
      const q = schemas.of(r.query, 'input') as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(q.properties ?? {}))
        params.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.public ? { security: [] } : {}),
      responses: responsesOf(r, schemas),
    };
    if (r.body) {
      op.requestBody = {
        // The gateway reads a missing body as {}: the body is required when {} is refused.
        required: !r.body.safeParse({}).success,
        content: { 'application/json': { schema: schemas.of(r.body, 'input') } },
      };
    }
    if (r.requestBody) op.requestBody = r.requestBody();
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: op };
  }
  const ws = wsEventsDocument(schemas);
  paths['/ws'] = { get: ws.operation };
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version,
      description: 'The REST API of svc. Local requests need no key; others send the access key.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { accessKeyHeader: [] }, { cookie: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        accessKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Access-Key' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'svc_access_key' },
      },
      schemas: { Error: errorBody, ...schemas.named, ...ws.schemas },
      responses: errorAnswers,
    },
    paths,
    'x-ws-events': ws.list,
  };
}

/** A route's answers: its success status with its schema, its other 2xx answers, its errors. */
function responsesOf(r: Route, schemas: SchemaSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const main = r.status ?? 200;
  out[main] = {
    description:
      r.status === 201
        ? 'Created'
        : r.status === 202
          ? 'Accepted'
          : r.status === 303
            ? 'See Other: the browser is sent on (Location)'
            : 'Success',
    ...(r.response || r.produces
      ? {
          content: {
            ...(r.response
              ? { 'application/json': { schema: schemas.of(r.response, 'output') } }
              : {}),
            ...Object.fromEntries(
              [r.produces ?? []].flat().map((type) => [type, { schema: { type: 'string' } }]),
            ),
          },
        }
      : {}),
  };
  for (const [status, a] of Object.entries(r.others ?? {})) {
    out[status] = {
      description: a.description,
      ...(a.schema
        ? { content: { 'application/json': { schema: schemas.of(a.schema, 'output') } } }
        : a.contentType
          ? { content: { [a.contentType]: { schema: { type: 'string' } } } }
          : {}),
    };
  }
  for (const status of errorsOf(r)) {
    const page = r.errorPages?.[status];
    out[status] = page
      ? {
          description: `${errorStatuses[status]}; ${page}`,
          content: { ...errorContent, 'text/html': { schema: { type: 'string' } } },
        }
      : errorAnswer(status);
  }
  return out;
}

const topicName = (k: TopicKind) => (k === 'session' ? 'session:{id}' : k);

/**
 * The /ws events from the catalogue (src/shared/protocol/events.ts): each type with its topics
 * and the JSON Schema of its frame, so a client can script /ws from this document alone.
 */
function wsEventsDocument(set: SchemaSet) {
  const schemas: Record<string, unknown> = {};
  const list: Array<{ type: string; topics: string[]; summary: string; schema: { $ref: string } }> =
    [];
  for (const [type, spec] of Object.entries(wsEvents)) {
    const name = `WsEvent.${type}`;
    const topics = spec.topics.map(topicName);
    schemas[name] = {
      type: 'object',
      description: spec.summary,
      required: ['topic', 'type', 'seq', 'data'],
      properties: {
        topic:
          topics.length === 1
            ? { type: 'string', description: topics[0] }
            : { type: 'string', description: topics.join(' or ') },
        type: { const: type },
        seq: {
          type: 'integer',
          minimum: 0,
          description: 'numbered per topic; resume with {"type":"subscribe","since":{topic: seq}}',
        },
        data: set.of(spec.data, 'output'),
      },
    };
    list.push({
      type,
      topics,
      summary: spec.summary,
      schema: { $ref: `#/components/schemas/${name}` },
    });
  }
  const operation = {
    summary:
      'The WebSocket of live events (upgrade with the same auth as any route; ?access_key= is accepted here).',
    description: [
      'Client frames: {"type":"subscribe","topics":[...],"since":{topic:seq}}, {"type":"unsubscribe","topics":[...]}, {"type":"ping"},',
      '{"type":"turn","session_id","message":{"text","attachments"}}, {"type":"interrupt","session_id"}, {"type":"approve","session_id","approval_id","decision"}.',
      `Server frames: events {topic, type, seq, data} (every type is listed in x-ws-events), and subscribed, unsubscribed, resync, pong, error. Topics: ${topicKinds.map(topicName).join(', ')}.`,
      `Every event but a streamed delta is at most ${WS_EVENT_MAX_BYTES} bytes: long texts are cut (truncated: true) and the REST route its summary names answers them whole.`,
    ].join(' '),
    operationId: 'getWs',
    responses: {
      '101': { description: 'Switching Protocols: the WebSocket is open' },
      '400': { description: 'Not a WebSocket upgrade', content: errorContent },
      '401': { description: 'No access key', content: errorContent },
      '403': { description: 'A refused origin or host', content: errorContent },
    },
    'x-ws-events': list.map((e) => e.schema),
  };
  return { schemas, list, operation };
}
