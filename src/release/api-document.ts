import { resolvePaths } from '../shared/paths.js';
import { openAndMigrate } from '../shared/store/db.js';
import type { Deps } from '../gateway/deps.js';
import { openApiDocument } from '../gateway/openapi.js';
import { allRoutes } from '../gateway/routes/index.js';

/** A part of Deps that building the route table must not touch: any use of it throws, naming it. */
function untouchable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_, key) {
      throw new Error(`${name}.${String(key)} was used while only documenting the routes`);
    },
  });
}

/**
 * The OpenAPI document GET /api/openapi.json serves, built in this process from the same route
 * table (no server, no home folder): route modules prepare their statements on an empty
 * in-memory database and name their folders; nothing else of Deps is used before a request. For the API types of the
 * Web UI (npm run api-types) and the tests that lint the document and check those types.
 */
export function apiDocument(): Record<string, unknown> {
  const { db } = openAndMigrate(':memory:');
  try {
    const deps: Deps = {
      db,
      endpoint: untouchable('endpoint'),
      // Route modules name their folders up front; nothing is created or read there.
      paths: resolvePaths({ SVC_HOME: '/nonexistent/svc-api-document' }),
      config: untouchable('config'),
      publish: untouchable('publish'),
      draining: untouchable('draining'),
      hub: untouchable('hub'),
      startedAt: 0,
    };
    // As served: the JSON text, read back (undefined fields gone).
    return JSON.parse(JSON.stringify(openApiDocument(allRoutes(deps)))) as Record<string, unknown>;
  } finally {
    db.close();
  }
}
