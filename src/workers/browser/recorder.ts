import type { Page } from 'playwright-core';
import { isRef, type BrowserStep } from '../../shared/browser/steps.js';

/** Steps that change or wait for the page; looking (snapshot, screenshot, listing tabs) is not kept. */
function worthKeeping(step: BrowserStep): boolean {
  if (step.action === 'snapshot' || step.action === 'screenshot') return false;
  return !(step.action === 'tabs' && (step.value ?? 'list') === 'list');
}

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * A ref ("e12") lives only until the page changes, so a kept step names its element the way the
 * snapshot showed it: role and accessible name (`role=button[name="Send"]`). Falls back to the
 * ref when the snapshot has no name for it.
 */
export async function stableTarget(page: Page, ref: string): Promise<string> {
  const snap = await page.ariaSnapshot({ mode: 'ai', timeout: 5000 }).catch(() => '');
  const line = snap.split('\n').find((l) => l.includes(`[ref=${ref}]`));
  const m = line ? /-\s+([a-z]+)\s+"((?:[^"\\]|\\.)*)"/.exec(line) : null;
  if (!m) return ref;
  return `role=${m[1]}[name=${quote(m[2]!.replace(/\\"/g, '"'))}]`;
}

/** Sessions that record, with what they did so far. */
export class Recorder {
  private readonly sessions = new Map<string, BrowserStep[]>();

  start(sessionId: string): void {
    this.sessions.set(sessionId, []);
  }

  recording(sessionId: string | undefined): boolean {
    return sessionId !== undefined && this.sessions.has(sessionId);
  }

  /** Before the action runs: refs resolve against the page as it is now. */
  async prepare(
    page: Page,
    sessionId: string | undefined,
    step: BrowserStep,
  ): Promise<BrowserStep | null> {
    if (!this.recording(sessionId) || !worthKeeping(step)) return null;
    return step.target !== undefined && isRef(step.target)
      ? { ...step, target: await stableTarget(page, step.target) }
      : step;
  }

  keep(sessionId: string | undefined, step: BrowserStep | null): void {
    if (step && sessionId !== undefined) this.sessions.get(sessionId)?.push(step);
  }

  stop(sessionId: string): { steps: BrowserStep[]; was_recording: boolean } {
    const steps = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    return { steps: steps ?? [], was_recording: steps !== undefined };
  }
}
