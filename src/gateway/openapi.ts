import { z } from 'zod';
import {
  topicKinds,
  WS_EVENT_MAX_BYTES,
  wsEvents,
  type TopicKind,
} from '../shared/protocol/events.js';
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

/** OpenAPI 3.1, generated from the same route table and zod schemas the gateway enforces. */
export function openApiDocument(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (r.query) {
      const q = z.toJSONSchema(r.query, { io: 'input', unrepresentable: 'any' }) as {
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
      responses: {
        default: {
          description: 'An error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
        '200': { description: 'Success' },
      },
    };
    if (r.body) {
      op.requestBody = {
        required: false,
        content: {
          'application/json': {
            schema: z.toJSONSchema(r.body, { io: 'input', unrepresentable: 'any' }),
          },
        },
      };
    }
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: op };
  }
  const ws = wsEventsDocument();
  paths['/ws'] = { get: ws.operation };
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc API',
      version,
      description: 'The REST API of svc. Local requests need no key; others send the access key.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { accessKeyHeader: [] }, { cookie: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        accessKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Access-Key' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'svc_access_key' },
      },
      schemas: { Error: errorBody, ...ws.schemas },
    },
    paths,
    'x-ws-events': ws.list,
  };
}

const topicName = (k: TopicKind) => (k === 'session' ? 'session:{id}' : k);

/**
 * The /ws events from the catalogue (src/shared/protocol/events.ts): each type with its topics
 * and the JSON Schema of its frame, so a client can script /ws from this document alone.
 */
function wsEventsDocument() {
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
        data: z.toJSONSchema(spec.data, { io: 'output', unrepresentable: 'any' }),
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
      default: {
        description: 'An error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
    'x-ws-events': list.map((e) => e.schema),
  };
  return { schemas, list, operation };
}
