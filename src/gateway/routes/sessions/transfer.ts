import { z } from 'zod';
import {
  exportDocument,
  exportMarkdown,
  importDocument,
  sessionDocument,
} from '../../../shared/sessions/transfer.js';
import { requireSession } from '../../../shared/store/sessions.js';
import type { Deps } from '../../deps.js';
import { sessionImported } from '../../../shared/protocol/answers.js';
import { route, type Route } from '../../route.js';

/** A file name from a title: what a person recognises, nothing a shell or a filesystem minds. */
const fileName = (title: string, ext: string) =>
  `${
    title
      .replace(/[^\p{L}\p{N} _-]+/gu, '')
      .trim()
      .replace(/\s+/g, '-')
      .slice(0, 60) || 'chat'
  }.${ext}`;

/** A chat out of svc as Markdown or JSON, and a JSON one back in as a new session. */
export function sessionTransferRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/sessions/:id/export',
      summary:
        'The chat as a file: format=md (Markdown to read and share; tool calls and outputs folded) or format=json (the default: what POST /api/sessions/import takes back, attachments inline up to 512 KiB in all, else by name).',
      query: z.strictObject({ format: z.enum(['md', 'json']).default('json') }),
      response: sessionDocument,
      produces: 'text/markdown',
      handler: ({ params, query }) => {
        const session = requireSession(deps.db, params.id);
        const doc = exportDocument(deps.db, deps.paths, session);
        const md = query.format === 'md';
        const name = fileName(session.title, md ? 'md' : 'json');
        return {
          body: md ? Buffer.from(exportMarkdown(doc)) : doc,
          headers: {
            ...(md ? { 'Content-Type': 'text/markdown; charset=utf-8' } : {}),
            'Content-Disposition': `attachment; filename="${name}"`,
          },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/api/sessions/import',
      summary:
        'A chat exported as JSON becomes a new session (new ids, attachments stored as uploads): 201 {session, missing_attachments}. The session is interactive with no working folder, whatever the file says.',
      body: sessionDocument,
      status: 201,
      response: sessionImported,
      handler: async ({ body }) => {
        const models = deps.config().models;
        const r = await importDocument(deps.db, deps.paths, body, (id) =>
          Object.hasOwn(models, id),
        );
        deps.publish('sessions', 'session.created', r.session);
        return { status: 201, body: { session: r.session, missing_attachments: r.missing } };
      },
    }),
  ];
}
