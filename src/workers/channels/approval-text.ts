import type { ApprovalDecision } from '../../shared/protocol/ipc.js';
import type { Button } from './adapter.js';

/** How an approval is asked in a chat and how the answer is read back. */

const DETAIL_CAP = 600;
const CODES: Record<string, ApprovalDecision> = { o: 'allow_once', s: 'allow_session', d: 'deny' };

export function approvalQuestion(tool: string, input: unknown, buttons: boolean): string {
  const i = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const pick = ['command', 'path', 'url', 'pattern']
    .map((k) => i[k])
    .find((v) => typeof v === 'string' && v.length > 0) as string | undefined;
  let detail = pick ?? JSON.stringify(input ?? {});
  if (detail.length > DETAIL_CAP) detail = `${detail.slice(0, DETAIL_CAP)}…`;
  const how = buttons
    ? ''
    : '\nReply "yes" (1) to allow once, "always" (2) to allow for this chat\'s session, anything else (3) to deny.';
  return `⚠️ Allow ${tool}: ${detail}?${how}`;
}

export function approvalButtons(approvalId: string): Button[] {
  return [
    { label: '✅ Allow once', data: `ap:${approvalId}:o` },
    { label: '🔁 Allow for session', data: `ap:${approvalId}:s` },
    { label: '❌ Deny', data: `ap:${approvalId}:d` },
  ];
}

export function parseButton(
  data: string,
): { approvalId: string; decision: ApprovalDecision } | undefined {
  const m = /^ap:([A-Za-z0-9_]{1,64}):([osd])$/.exec(data);
  return m ? { approvalId: m[1]!, decision: CODES[m[2]!]! } : undefined;
}

/** A reply word (or its number) on a platform without buttons; anything not a yes denies (fail closed). */
export function answerWord(text: string): ApprovalDecision {
  const t = text.trim().toLowerCase();
  if (['1', 'yes', 'y', 'ok', 'allow', '是', '可以', '同意', '允许'].includes(t))
    return 'allow_once';
  if (['2', 'always', 'always allow', '总是允许', '一直允许'].includes(t)) return 'allow_session';
  return 'deny';
}

export function decisionLabel(d: ApprovalDecision): string {
  return d === 'allow_once'
    ? 'Allowed once'
    : d === 'allow_session'
      ? 'Allowed for this session'
      : 'Denied';
}
