import { log } from '../../shared/log.js';
import { platformInfo, type PlatformName } from '../../shared/config/channels.js';
import type { LoginState } from '../../shared/protocol/channels.js';
import type { Adapter } from './adapter.js';
import { importPackage } from '../../shared/import-package.js';

const FLOW_LIMIT_MS = 10 * 60_000;

/** What a QR-login platform gives one flow: where to show a code, and how to say it was scanned. */
export interface QrFlow {
  readonly signal: AbortSignal;
  /** A fresh code to scan (the text the QR encodes); shown as a URL and a PNG. */
  code(text: string): Promise<void>;
  scanned(): void;
  /** Codes shown so far in this flow. */
  codes(): number;
}

/** The platform gave up on its codes without a confirmation (the flow ends `expired`). */
export class LoginExpired extends Error {}

/**
 * One QR-login platform's part (the messenger's iLink polling, WhatsApp's Baileys socket): the
 * flow itself, where its credentials live (0600 under $SVC_HOME, never answered) and its adapter.
 */
export interface QrPlatform {
  readonly platform: PlatformName;
  /** The account of the saved credentials; undefined when not logged in. */
  account(): string | undefined;
  /** Changes whenever the credentials do, so the adapter restarts on a new login or a logout. */
  generation(): string;
  /** Why a flow cannot start now (the platform is not configured), or undefined. */
  unavailable(): string | undefined;
  /** Runs one login until confirmed (resolves with the account, credentials saved) or failed (rejects). */
  login(flow: QrFlow): Promise<string>;
  /** Removes the saved credentials. */
  logout(): Promise<void>;
  adapter(): Promise<Adapter | { needsLogin: string }>;
}

/**
 * A QR login, one flow at a time per platform, held in the channels worker (so it outlives a
 * gateway restart): codes shown as a URL and a PNG, scanned, confirmed (the platform saved its
 * credentials and its adapter restarts with them), expired, failed, cancelled; logout. The same
 * code path serves every QR platform; each plugs in its QrPlatform.
 */
export class QrLogin {
  private current: LoginState;
  private flow: AbortController | undefined;

  constructor(
    readonly qr: QrPlatform,
    /** Credentials changed: the adapter is restarted with them. */
    private readonly changed: () => void,
    /** The state, for the Web UI's live QR (the `channels` topic). */
    private readonly publish: (s: LoginState) => void = () => {},
  ) {
    this.current = {
      platform: qr.platform,
      status: 'idle',
      qr_url: null,
      qr_png: null,
      user_id: null,
      error: null,
      codes: 0,
      started_at: null,
    };
  }

  private get label(): string {
    return platformInfo[this.qr.platform].label;
  }

  state(): LoginState {
    if (this.current.status === 'idle') {
      const account = this.qr.account();
      if (account) return { ...this.current, status: 'logged_in', user_id: account };
    }
    // Confirmed once, but the credentials are gone since (unlinked from the phone): not logged in.
    if (this.current.status === 'confirmed' && !this.qr.account())
      return {
        ...this.current,
        status: 'idle',
        user_id: null,
        error: null,
        codes: 0,
        started_at: null,
      };
    return this.current;
  }

  /** Starts a flow, or answers the running one; waits a little for the first code so the answer can show it. */
  async start(force: boolean): Promise<LoginState> {
    if (this.flow && (this.current.status === 'pending' || this.current.status === 'scanned'))
      return this.current;
    const account = this.qr.account();
    if (account && !force)
      return {
        ...this.current,
        status: 'logged_in',
        user_id: account,
        qr_url: null,
        qr_png: null,
        error: null,
      };
    const why = this.qr.unavailable();
    if (why) return this.set({ status: 'failed', error: why });
    this.flow?.abort();
    const flow = new AbortController();
    this.flow = flow;
    this.set({
      status: 'pending',
      qr_url: null,
      qr_png: null,
      user_id: null,
      error: null,
      codes: 0,
      started_at: new Date().toISOString(),
    });
    const firstCode = new Promise<void>((resolve) => void this.run(flow, resolve).finally(resolve));
    await Promise.race([firstCode, new Promise((r) => setTimeout(r, 10_000))]);
    return this.current;
  }

  /** Cancels a running flow; with none running, logs out (the credentials are removed). */
  async cancel(): Promise<LoginState> {
    if (this.flow && (this.current.status === 'pending' || this.current.status === 'scanned')) {
      this.flow.abort();
      this.flow = undefined;
      return this.set({ status: 'cancelled', qr_url: null, qr_png: null });
    }
    if (this.qr.account()) {
      await this.qr.logout();
      log.info(`logged out of ${this.label}`);
      this.changed();
    }
    return this.set({
      status: 'idle',
      qr_url: null,
      qr_png: null,
      user_id: null,
      error: null,
      codes: 0,
      started_at: null,
    });
  }

  private set(patch: Partial<LoginState>): LoginState {
    this.current = { ...this.current, ...patch };
    this.publish(this.current);
    return this.current;
  }

  private async run(flow: AbortController, shown: () => void): Promise<void> {
    const signal = flow.signal;
    const limit = setTimeout(() => {
      if (signal.aborted) return;
      flow.abort();
      this.set({
        status: 'failed',
        error: 'the login took longer than 10 minutes; start again',
        qr_url: null,
        qr_png: null,
      });
    }, FLOW_LIMIT_MS);
    // Codes are shown in the order they came, even when one renders faster than the one before.
    let shownChain: Promise<void> = Promise.resolve();
    const ctx: QrFlow = {
      signal,
      codes: () => this.current.codes,
      scanned: () => {
        if (!signal.aborted && this.current.status !== 'scanned') this.set({ status: 'scanned' });
      },
      code: (text) => {
        const show = async () => {
          const { default: QRCode } = await importPackage<{ default: typeof import('qrcode') }>(
            'qrcode',
          ); // only a login needs it
          const png = await QRCode.toDataURL(text, {
            errorCorrectionLevel: 'M',
            margin: 2,
            width: 280,
          });
          if (signal.aborted) return;
          this.set({ status: 'pending', qr_url: text, qr_png: png, codes: this.current.codes + 1 });
          shown();
        };
        shownChain = shownChain.catch(() => undefined).then(show);
        return shownChain;
      },
    };
    try {
      const account = await this.qr.login(ctx);
      if (signal.aborted) return;
      log.info(`logged in to ${this.label}`, { user: account });
      this.set({ status: 'confirmed', user_id: account, qr_url: null, qr_png: null });
      this.changed();
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof LoginExpired)
        this.set({ status: 'expired', error: err.message, qr_url: null, qr_png: null });
      else
        this.set({
          status: 'failed',
          error: `${this.label} login failed: ${(err as Error).message}`,
          qr_url: null,
          qr_png: null,
        });
    } finally {
      clearTimeout(limit);
      if (this.flow === flow) this.flow = undefined;
    }
  }
}
