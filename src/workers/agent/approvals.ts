import type { ApprovalDecision } from '../../shared/protocol/ipc.js';
import { approvalData } from '../../shared/event-summaries.js';
import { newId } from '../../shared/store/util.js';
import type { ToolContext } from './tools/registry.js';

interface Pending {
  sessionId: string;
  view: {
    approval_id: string;
    turn_id: string;
    call_id: string;
    tool: string;
    input: unknown;
    reason: string;
    sandbox_notice?: string;
  };
  resolve: (d: ApprovalDecision | 'expired') => void;
}

/**
 * Tool calls waiting for the user. An ask publishes `approval.requested` and pauses the call
 * until an answer arrives (over /ws or HTTP, through the supervisor); an interrupted turn
 * withdraws its pending approvals.
 */
export class Approvals {
  private readonly pending = new Map<string, Pending>();

  /**
   * `notice`: said once per session beside the question (the sandbox is off or unavailable).
   * `timeoutMs`: nobody may be watching (a scheduled run); unanswered by then it answers 'expired'.
   * `onAsked`: told the approval's id once it waits.
   */
  ask(
    ctx: ToolContext,
    info: {
      tool: string;
      input: unknown;
      reason: string;
      notice?: string;
      timeoutMs?: number;
      onAsked?: (id: string) => void;
    },
  ): Promise<ApprovalDecision | 'expired'> {
    const id = newId('ap');
    return new Promise<ApprovalDecision | 'expired'>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const withdraw = () => {
        clearTimeout(timer);
        if (!this.pending.delete(id)) return;
        ctx.emit('approval.withdrawn', { approval_id: id });
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error('interrupted'));
      };
      this.pending.set(id, {
        sessionId: ctx.sessionId,
        view: {
          approval_id: id,
          turn_id: ctx.turnId,
          call_id: ctx.callId,
          tool: info.tool,
          input: info.input,
          reason: info.reason,
          ...(info.notice ? { sandbox_notice: info.notice } : {}),
        },
        resolve: (d) => {
          clearTimeout(timer);
          ctx.signal.removeEventListener('abort', withdraw);
          resolve(d);
        },
      });
      ctx.signal.addEventListener('abort', withdraw, { once: true });
      const expires =
        info.timeoutMs === undefined
          ? {}
          : { expires_at: new Date(Date.now() + info.timeoutMs).toISOString() };
      ctx.emit(
        'approval.requested',
        approvalData({
          approval_id: id,
          tool: info.tool,
          input: info.input,
          reason: info.reason,
          ...(info.notice ? { sandbox_notice: info.notice } : {}),
          ...expires,
        }),
      );
      if (info.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const p = this.pending.get(id);
          if (!p) return;
          this.pending.delete(id);
          ctx.emit('approval.expired', {
            approval_id: id,
            timeout_seconds: Math.round(info.timeoutMs! / 1000),
          });
          p.resolve('expired');
        }, info.timeoutMs);
      }
      info.onAsked?.(id);
    });
  }

  /** What a session's turn is waiting for, oldest first. */
  list(sessionId: string): Pending['view'][] {
    return [...this.pending.values()].filter((p) => p.sessionId === sessionId).map((p) => p.view);
  }

  /** Answers an approval of that session; an id from another session is not found. */
  answer(sessionId: string, id: string, decision: ApprovalDecision): boolean {
    const p = this.pending.get(id);
    if (!p || p.sessionId !== sessionId) return false;
    this.pending.delete(id);
    p.resolve(decision);
    return true;
  }
}
