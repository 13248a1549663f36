import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { ApiError } from '../../../shared/errors.js';
import { servedType } from '../../../shared/mime.js';
import { getArtifact } from '../../../shared/store/artifacts.js';
import { requireSession } from '../../../shared/store/sessions.js';
import type { Deps } from '../../deps.js';
import { route, type Route } from '../../route.js';

const SERVE_MAX = 64 * 1024 * 1024;

/** Serves a file a session's tools wrote, so that it can never act as a page of our origin. */
export function artifactRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/sessions/:id/artifacts/:artifact_id',
      summary: "One artifact's current content (nosniff, sandboxed, never served as HTML).",
      response: null,
      produces: 'application/octet-stream',
      errors: [413],
      handler: ({ params }) => {
        requireSession(deps.db, params.id ?? '');
        const a = getArtifact(deps.db, params.id ?? '', params.artifact_id ?? '');
        if (!a)
          throw new ApiError(
            'not_found',
            `The session has no artifact ${params.artifact_id}; GET /api/sessions/${params.id}/artifacts lists them.`,
          );
        let size: number;
        try {
          const st = statSync(a.path);
          if (!st.isFile()) throw new Error('not a file');
          size = st.size;
        } catch {
          throw new ApiError(
            'not_found',
            `The artifact's file ${a.path} is gone (moved or deleted since it was written).`,
          );
        }
        if (size > SERVE_MAX)
          throw new ApiError(
            'too_large',
            `The artifact is ${size} bytes; files over ${SERVE_MAX} bytes are not served here.`,
          );
        const name = basename(a.path).replace(/[^\x20-\x7e]|["\\]/g, '_');
        return {
          body: readFileSync(a.path),
          headers: {
            'Content-Type': servedType(a.mime),
            'Content-Disposition': `inline; filename="${name}"`,
            'Content-Security-Policy': 'sandbox',
            'X-Content-Type-Options': 'nosniff',
            'Cache-Control': 'no-store',
          },
        };
      },
    }),
  ];
}
