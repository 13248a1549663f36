import { requireSession } from '../../../shared/store/sessions.js';
import { listTurns, type TurnRow } from '../../../shared/store/turns.js';
import { turnUsage } from '../../../shared/store/usage.js';
import { decodeCursor, encodeCursor } from '../../../shared/store/util.js';
import type { Deps } from '../../deps.js';
import { turnList } from '../../../shared/protocol/answers.js';
import { route, type Route } from '../../route.js';
import { badCursor, pageQuery } from './sessions.js';

/** A session's turns with what each spent: the Web UI's turn details, a script's accounting. */
export function sessionTurnsRoutes(deps: Deps): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/sessions/:id/turns',
      summary:
        "The session's turns, newest first, a page at a time (limit 1-200, cursor): {items: [{turn_id, status, origin, started_at, ended_at, first_seq (the seq of the message that started it; null for turns from before it was kept), stop_reason, spend, error? ({reason, message} of a failed turn), reason? (of an interrupted turn svc stopped itself)}], next_cursor}. `spend` is what the turn's model calls used and cost, as in GET /api/usage.",
      query: pageQuery,
      response: turnList,
      handler: ({ params, query: q }) => {
        requireSession(deps.db, params.id ?? '');
        let offset = 0;
        if (q.cursor !== undefined) {
          const c = decodeCursor(q.cursor);
          if (typeof c !== 'number' || !Number.isInteger(c) || c < 0) throw badCursor();
          offset = c;
        }
        const rows = listTurns(deps.db, params.id ?? '', { offset, limit: q.limit + 1 });
        const more = rows.length > q.limit;
        return {
          body: {
            items: rows.slice(0, q.limit).map((r) => ({
              turn_id: r.id,
              status: r.status,
              origin: r.origin,
              started_at: r.started_at,
              ended_at: r.ended_at,
              first_seq: r.first_seq,
              stop_reason: r.stop_reason,
              spend: turnUsage(deps.db, r.id),
              ...turnEnd(r),
            })),
            next_cursor: more ? encodeCursor(offset + q.limit) : null,
          },
        };
      },
    }),
  ];
}

/** How a turn that did not complete ended, from its row: a turn's answer and the turn list say it alike. */
export function turnEnd(row: Pick<TurnRow, 'status' | 'reason' | 'error'>): {
  error?: { reason: string; message: string };
  reason?: string;
} {
  if (row.status === 'failed')
    return { error: { reason: row.reason ?? 'failed', message: row.error ?? 'the turn failed' } };
  if (row.status === 'interrupted' && row.reason !== null) return { reason: row.reason };
  return {};
}
