import { resolvePaths } from '../shared/paths.js';
import { openAndMigrate } from '../shared/store/db.js';
import type { Deps } from '../gateway/deps.js';
import { openApiDocument } from '../gateway/openapi.js';
import { allRoutes } from '../gateway/routes/index.js';
import type { Route } from '../gateway/route.js';

/** A part of Deps that building the route table must not touch: any use of it throws, naming it. */
function untouchable<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_, key) {
      throw new Error(`${name}.${String(key)} was used while only documenting the routes`);
    },
  });
}

/**
 * The route table as the gateway builds it, in this process (no server, no home folder): route
 * modules prepare their statements on an empty in-memory database and name their folders;
 * nothing else of Deps is used before a request. `use` reads it while the database is open.
 */
export function withRouteTable<T>(use: (routes: Route[]) => T): T {
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
    return use(allRoutes(deps));
  } finally {
    db.close();
  }
}

/**
 * The OpenAPI document GET /api/openapi.json serves, built in this process from the same route
 * table. For the API types of the Web UI (npm run api-types) and the tests that lint the
 * document and check those types.
 */
export function apiDocument(): Record<string, unknown> {
  // As served: the JSON text, read back (undefined fields gone).
  return withRouteTable(
    (routes) => JSON.parse(JSON.stringify(openApiDocument(routes))) as Record<string, unknown>,
  );
}
