import { summaryContent } from '../../shared/protocol/message-content.js';
import type { Db } from '../../shared/store/db.js';
import {
  messageRowsAfter,
  systemRowsNewestFirst,
  toMessage,
  type Message,
} from '../../shared/store/messages.js';

/**
 * The part of a session's transcript a turn works with: the latest compaction summary and the
 * messages after what it covers (or after `sinceSeq`, for a workflow step). Loaded once per turn
 * from indexes, then kept in step by reading only the rows appended since, so a step costs the
 * same at 1,000 or 50,000 stored messages.
 */
export class LiveWindow {
  private rows: Message[];
  private lastSeq: number;

  constructor(
    private readonly db: Db,
    readonly sessionId: string,
    sinceSeq = 0,
  ) {
    const start = Math.max(sinceSeq, latestSummaryEnd(db, sessionId, sinceSeq));
    this.rows = messageRowsAfter(db, sessionId, start).map(toMessage);
    this.lastSeq = this.rows[this.rows.length - 1]?.seq ?? start;
  }

  /** The window's messages, oldest first (a summary among them stands for what it covers). */
  get messages(): readonly Message[] {
    return this.rows;
  }

  /** Takes in the rows appended since the last look; a new summary drops what it covers. */
  sync(): void {
    const fresh = messageRowsAfter(this.db, this.sessionId, this.lastSeq).map(toMessage);
    if (fresh.length === 0) return;
    this.lastSeq = fresh[fresh.length - 1]!.seq;
    let cut = -1;
    for (const m of fresh) {
      const s = m.role === 'system' ? summaryContent.safeParse(m.content) : undefined;
      if (s?.success) cut = Math.max(cut, s.data.summary_of.to_seq);
    }
    this.rows =
      cut < 0 ? this.rows.concat(fresh) : this.rows.concat(fresh).filter((m) => m.seq > cut);
  }
}

/** The seq the newest summary after `afterSeq` covers up to, or 0 when there is none. */
function latestSummaryEnd(db: Db, sessionId: string, afterSeq: number): number {
  for (const r of systemRowsNewestFirst(db, sessionId, afterSeq)) {
    const s = summaryContent.safeParse(JSON.parse(r.content));
    if (s.success) return s.data.summary_of.to_seq;
  }
  return 0;
}
