import { z } from 'zod';
import type { Deps } from '../deps.js';
import { openApiDocument } from '../openapi.js';
import { route, type Route } from '../route.js';
import { artifactRoutes } from './sessions/artifacts.js';
import { chatRoutes } from './sessions/chat.js';
import { modelRoutes } from './models.js';
import { onboardRoutes } from './onboard.js';
import { setupRoutes } from './setup.js';
import { goalRoutes } from './sessions/goal.js';
import { sessionRoutes } from './sessions/sessions.js';
import { sessionTransferRoutes } from './sessions/transfer.js';
import { sessionTurnsRoutes } from './sessions/turns.js';
import { trashRoutes } from './trash.js';
import { uploadRoutes } from './uploads.js';
import { systemRoutes } from './system.js';
import { taskRoutes } from './tasks/tasks.js';
import { profileRoutes } from './profile.js';
import { skillRoutes } from './skills.js';
import { workflowRoutes } from './workflows.js';
import { mcpRoutes } from './mcp/servers.js';
import { mcpOAuthRoutes } from './mcp/oauth.js';
import { channelRoutes } from './channels.js';
import { browserRoutes } from './browser/status.js';
import { browserRecordingRoutes } from './browser/recordings.js';
import { versionRoutes } from './version.js';
import { usageRoutes } from './usage.js';
import { metricsRoutes } from './metrics.js';
import { backupRoutes } from './backups.js';
import { searchRoutes } from './search.js';

/** An OpenAPI 3.1 document: its parts beyond these are OpenAPI's own. */
const openApiView = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

/** Every API route, in one table; the OpenAPI document is generated from it. */
export function allRoutes(deps: Deps): Route[] {
  const routes: Route[] = [
    ...systemRoutes(deps),
    ...chatRoutes(deps, deps.hub),
    ...artifactRoutes(deps),
    ...modelRoutes(deps),
    ...onboardRoutes(deps),
    ...setupRoutes(deps),
    ...sessionRoutes(deps),
    ...sessionTransferRoutes(deps),
    ...sessionTurnsRoutes(deps),
    ...goalRoutes(deps),
    ...trashRoutes(deps),
    ...uploadRoutes(deps),
  ];
  routes.push(...taskRoutes(deps), ...profileRoutes(deps));
  routes.push(...skillRoutes(deps), ...workflowRoutes(deps));
  routes.push(...mcpRoutes(deps), ...mcpOAuthRoutes(deps));
  routes.push(...channelRoutes(deps));
  routes.push(...browserRoutes(deps), ...browserRecordingRoutes(deps));
  routes.push(...versionRoutes(deps), ...backupRoutes(deps));
  routes.push(...usageRoutes(deps), ...metricsRoutes(deps));
  routes.push(...searchRoutes(deps));
  routes.push(
    route({
      method: 'GET',
      path: '/api/openapi.json',
      summary: 'This document: every route with its request and answer schemas.',
      response: openApiView,
      handler: () => ({ body: openApiDocument(routes) }),
    }),
  );
  return routes;
}
