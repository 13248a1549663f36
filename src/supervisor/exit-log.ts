import type { ChildRole } from '../shared/protocol/ipc.js';

/** Per role: how often it was started again after an unexpected exit, and how the last one ended (for `svc status`). */
export class ExitLog {
  private readonly counts = new Map<ChildRole, number>();
  private readonly last = new Map<ChildRole, string>();

  exited(role: ChildRole, how: string): void {
    this.last.set(role, `${how} at ${new Date().toISOString()}`);
  }

  restarted(role: ChildRole): void {
    this.counts.set(role, (this.counts.get(role) ?? 0) + 1);
  }

  restarts(role: ChildRole): number | undefined {
    return this.counts.get(role);
  }

  lastExit(role: ChildRole): string | undefined {
    return this.last.get(role);
  }
}
