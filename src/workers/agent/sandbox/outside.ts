import type { TurnOrigin } from '../../../shared/protocol/ipc.js';
import type { SandboxStatus } from '../../../shared/sandbox/status.js';
import type { Decision } from '../permissions/index.js';
import { UNATTENDED } from './index.js';

/** The pseudo-tool whose rules in permissions.yml let a command leave the sandbox without asking. */
export const OUTSIDE_TOOL = 'terminal_outside';

/**
 * What the permission engine says about a command that asks to run outside the sandbox: never in
 * cron or channel turns, never past a deny, and otherwise an ask that even auto mode puts to the
 * user, unless one of your `terminal_outside` rules allows that command by name.
 */
export function stepOutside(
  base: Decision,
  byName: Decision,
  why: string,
  origin: TurnOrigin | undefined,
  status: SandboxStatus,
): Decision {
  // Without a running sandbox every command already runs outside; the engine's answer stands.
  if (status.state !== 'on' || base.verdict === 'deny') return base;
  if (origin !== undefined && UNATTENDED.has(origin)) {
    return {
      verdict: 'deny',
      reason: `Refused: ${origin} turns never run commands outside the sandbox (nobody is there to approve it); asked for: ${why}`,
      rule: 'sandbox: unattended',
      hard: true,
    };
  }
  if (byName.verdict === 'allow' && byName.rule?.includes(`: ${OUTSIDE_TOOL} #`)) return base;
  return {
    verdict: 'ask',
    reason: `This command asks to run outside the sandbox, where it can write anywhere you can, read svc's home and your key folders, and use any network. Its reason: ${why}`,
    rule: 'sandbox: outside',
    hard: false,
    askAlways: true,
  };
}
