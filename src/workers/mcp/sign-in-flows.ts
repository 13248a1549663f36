/** How long a sign-in may take between Sign in and the authorization server's redirect back. */
const TTL_MS = 10 * 60_000;
const MAX_FLOWS = 32;

export interface SignInFlow {
  name: string;
  redirectUrl: string;
  verifier: string;
}

/**
 * The sign-ins under way, by their OAuth `state` (32 random bytes, the only thing the callback
 * trusts): single use, forgotten after 10 minutes, one per server (a new Sign in replaces the last).
 * Memory only: a restarted worker forgets them, and the user signs in again.
 */
export class SignInFlows {
  private readonly flows = new Map<string, SignInFlow & { expires: number }>();

  add(state: string, flow: SignInFlow): void {
    this.prune();
    for (const [k, f] of this.flows) if (f.name === flow.name) this.flows.delete(k);
    if (this.flows.size >= MAX_FLOWS) this.flows.delete(this.flows.keys().next().value!);
    this.flows.set(state, { ...flow, expires: Date.now() + TTL_MS });
  }

  /** The flow of this state, removed: a second use finds nothing. */
  take(state: string): SignInFlow | undefined {
    this.prune();
    const f = this.flows.get(state);
    this.flows.delete(state);
    return f;
  }

  private prune(): void {
    const now = Date.now();
    for (const [k, f] of this.flows) if (f.expires <= now) this.flows.delete(k);
  }
}
