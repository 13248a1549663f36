/**
 * When to restart a crashed child: quickly at first, slower on repeats, and a declared crash loop
 * (instead of spinning) when it keeps dying. A child that ran for a minute starts afresh.
 */
export class Backoff {
  private crashes: number[] = [];

  constructor(
    private readonly steps = [100, 500, 1000, 2000, 5000],
    private readonly loopCount = 5,
    private readonly windowMs = 60_000,
    private readonly loopPauseMs = 60_000,
  ) {}

  /** Records a crash at `now`; returns the delay before the next start and whether it is a crash loop. */
  next(now = Date.now()): { delayMs: number; crashLoop: boolean } {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    const n = this.crashes.length;
    if (n >= this.loopCount) return { delayMs: this.loopPauseMs, crashLoop: true };
    return {
      delayMs: this.steps[Math.min(n - 1, this.steps.length - 1)] ?? 1000,
      crashLoop: false,
    };
  }

  get recent(): number {
    return this.crashes.length;
  }
}
