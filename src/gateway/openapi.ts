import { z } from 'zod';
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
    const params: unknown[] = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (r.query) {
      const q = z.toJSONSchema(r.query, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) params.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema });
    }
    const op: Record<string, unknown> = {
      summary: r.summary,
      operationId: `${r.method.toLowerCase()}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.public ? { security: [] } : {}),
      responses: {
        default: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        '200': { description: 'Success' },
      },
    };
    if (r.body) {
      op.requestBody = { required: false, content: { 'application/json': { schema: z.toJSONSchema(r.body, { io: 'input', unrepresentable: 'any' }) } } };
    }
    paths[path] = { ...paths[path], [r.method.toLowerCase()]: op };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc API', version, description: 'The REST API of svc. Local requests need no key; others send the access key.' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { accessKeyHeader: [] }, { cookie: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        accessKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Access-Key' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'svc_access_key' },
      },
      schemas: { Error: errorBody },
    },
    paths,
  };
}
