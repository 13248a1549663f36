import type { PlatformName } from '../../shared/config/channels.js';
import { log } from '../../shared/log.js';
import type { ChannelStatus } from '../../shared/protocol/channels.js';
import type { Adapter, InboundMessage } from './adapter.js';

/** Waits after the n-th crash in a row; past the last, the host gives up and says so. */
const DELAYS_MS = [2000, 5000, 15_000, 30_000, 60_000];
const GIVE_UP_AFTER = 10;
/** An adapter that ran this long before failing starts the count afresh. */
const HEALTHY_MS = 5 * 60_000;

export interface HostHooks {
  /** A fresh adapter each start (a crashed one is never reused); undefined: it cannot start yet (needs_login, with why). */
  create: () => Promise<Adapter | { needsLogin: string }>;
  message: (adapter: Adapter, m: InboundMessage) => Promise<void>;
  /** Called each time an adapter connects (the conversations pick up unanswered messages then). */
  connected: (adapter: Adapter) => void;
  /** The state changed (for the Web UI's live status). */
  changed: () => void;
}

/**
 * Runs one platform's adapter: starts it, restarts it with backoff when it fails, gives up after
 * a crash loop and reports every step in its status. One platform's failures never touch another.
 */
export class AdapterHost {
  private adapter: Adapter | undefined;
  private state: ChannelStatus['state'] = 'stopped';
  private error: string | null = null;
  private connectedSince: string | null = null;
  private account: string | null = null;
  private crashes = 0;
  private restarts = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly platform: PlatformName,
    private readonly hooks: HostHooks,
    /** The waits between restarts (the last repeats); a test shortens them to see the give-up. */
    private readonly delaysMs: readonly number[] = DELAYS_MS,
  ) {}

  start(): void {
    this.stopped = false;
    this.launch();
  }

  /** The running adapter, for sends; undefined when it is not connected. */
  live(): Adapter | undefined {
    return this.state === 'running' ? this.adapter : undefined;
  }

  status(lastMessageAt: string | null): ChannelStatus {
    return {
      platform: this.platform,
      state: this.state,
      error: this.error,
      connected_since: this.connectedSince,
      last_message_at: lastMessageAt,
      restarts: this.restarts,
      account: this.account,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const a = this.adapter;
    this.adapter = undefined;
    this.state = 'stopped';
    this.connectedSince = null;
    await a?.stop().catch(() => undefined);
  }

  private launch(): void {
    if (this.stopped) return;
    this.state = 'starting';
    this.hooks.create().then(
      (made) => this.run(made),
      (err: Error) => {
        this.state = 'error';
        this.error = `cannot start: ${err.message}`;
        this.hooks.changed();
      },
    );
  }

  private run(made: Adapter | { needsLogin: string }): void {
    if (this.stopped) return;
    if ('needsLogin' in made) {
      this.state = 'needs_login';
      this.error = made.needsLogin;
      this.hooks.changed();
      return;
    }
    const adapter = made;
    this.adapter = adapter;
    this.state = 'starting';
    const startedAt = Date.now();
    adapter
      .run({
        connected: (account) => {
          if (this.adapter !== adapter) return;
          this.state = 'running';
          this.error = null;
          this.account = account;
          this.connectedSince = new Date().toISOString();
          log.info(`${this.platform} connected`, { account });
          this.hooks.connected(adapter);
          this.hooks.changed();
        },
        message: (m) => this.hooks.message(adapter, m),
      })
      .then(
        () => {
          if (this.adapter === adapter && !this.stopped)
            this.failed(adapter, new Error('the connection ended'), startedAt);
        },
        (err: Error) => this.failed(adapter, err, startedAt),
      );
  }

  private failed(adapter: Adapter, err: Error, startedAt: number): void {
    if (this.adapter !== adapter || this.stopped) return;
    void adapter.stop().catch(() => undefined);
    this.adapter = undefined;
    this.connectedSince = null;
    if (Date.now() - startedAt > HEALTHY_MS) this.crashes = 0;
    this.crashes++;
    this.state = 'error';
    this.hooks.changed();
    if (this.crashes >= GIVE_UP_AFTER) {
      this.error = `gave up after ${this.crashes} failures in a row; last: ${err.message}. Save the configuration again to retry.`;
      log.error(`${this.platform} adapter gave up`, { failures: this.crashes, error: err.message });
      return;
    }
    const delay = this.delaysMs[Math.min(this.crashes - 1, this.delaysMs.length - 1)]!;
    this.error = `${err.message} (trying again in ${Math.round(delay / 1000)} s)`;
    log.warn(`${this.platform} adapter failed; restarting it`, {
      error: err.message,
      in_ms: delay,
    });
    this.timer = setTimeout(() => {
      this.restarts++;
      this.launch();
    }, delay);
  }
}
