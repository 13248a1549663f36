import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import { writeFileAtomic } from '../../shared/atomic-write.js';
import { log, redact } from '../../shared/log.js';
import type { Paths } from '../../shared/paths.js';
import type { LoginState } from '../../shared/protocol/channels.js';
import type { Adapter } from './adapter.js';
import { fetchQr, qrStatus } from './ilink.js';
import { ContextTokens, credentialsSchema, MessengerAdapter, type MessengerCredentials } from './messenger.js';

/** The platform allows this many fresh codes in one login before it gives up. */
const MAX_CODES = 3;
const POLL_MS = 2000;
const FLOW_LIMIT_MS = 10 * 60_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * The messenger's QR login, one flow at a time, held in the channels worker (so it outlives a
 * gateway restart). A code is fetched, shown as a URL and a PNG, its status polled: scanned,
 * confirmed (the credentials are saved 0600 and the adapter starts), or expired (a fresh code, up
 * to the platform's limit). The credentials never leave this process except to the platform.
 */
export class MessengerLogin {
  private current: LoginState = { status: 'idle', qr_url: null, qr_png: null, user_id: null, error: null, codes: 0, started_at: null };
  private flow: AbortController | undefined;
  private readonly dir: string;
  readonly contexts: ContextTokens;

  constructor(
    paths: Paths,
    private readonly config: () => Config | undefined,
    /** Credentials changed: the messenger adapter is restarted with them. */
    private readonly changed: () => void,
    /** The state, for the Web UI's live QR (the `channels` topic). */
    private readonly publish: (s: LoginState) => void = () => {},
  ) {
    this.dir = join(paths.home, 'channels');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.contexts = new ContextTokens(join(this.dir, 'messenger-contexts.json'));
  }

  private get file(): string {
    return join(this.dir, 'messenger.json');
  }

  credentials(): MessengerCredentials | undefined {
    try {
      const c = credentialsSchema.parse(JSON.parse(readFileSync(this.file, 'utf8')));
      redact(c.token);
      return c;
    } catch {
      return undefined;
    }
  }

  /** Changes whenever the credentials do, so the adapter restarts on a new login or a logout. */
  generation(platform: PlatformName): string {
    return platform === 'messenger' ? (this.credentials()?.saved_at ?? 'none') : '';
  }

  adapter(): Adapter | { needsLogin: string } {
    const creds = this.credentials();
    const config = this.config()?.channels.messenger;
    if (!creds || !config) return { needsLogin: 'not logged in: scan the QR code (POST /api/channels/messenger/login)' };
    return new MessengerAdapter(creds, config, this.contexts);
  }

  state(): LoginState {
    if (this.current.status === 'idle') {
      const c = this.credentials();
      if (c) return { ...this.current, status: 'logged_in', user_id: c.user_id };
    }
    return this.current;
  }

  /** Starts a flow, or answers the running one; waits a little for the first code so the answer can show it. */
  async start(force: boolean): Promise<LoginState> {
    if (this.flow && (this.current.status === 'pending' || this.current.status === 'scanned')) return this.current;
    const creds = this.credentials();
    if (creds && !force) return { ...this.current, status: 'logged_in', user_id: creds.user_id, qr_url: null, qr_png: null, error: null };
    const base = this.config()?.channels.messenger?.base_url;
    if (!base) return this.set({ status: 'failed', error: 'WeChat is not configured' });
    this.flow?.abort();
    const flow = new AbortController();
    this.flow = flow;
    this.set({ status: 'pending', qr_url: null, qr_png: null, user_id: null, error: null, codes: 0, started_at: new Date().toISOString() });
    const firstCode = new Promise<void>((resolve) => void this.run(base, flow, resolve).finally(resolve));
    await Promise.race([firstCode, new Promise((r) => setTimeout(r, 10_000))]);
    return this.current;
  }

  /** Cancels a running flow; with none running, logs out (the credentials are removed). */
  cancel(): LoginState {
    if (this.flow && (this.current.status === 'pending' || this.current.status === 'scanned')) {
      this.flow.abort();
      this.flow = undefined;
      return this.set({ status: 'cancelled', qr_url: null, qr_png: null });
    }
    if (this.credentials()) {
      rmSync(this.file, { force: true });
      log.info('logged out of WeChat');
      this.changed();
    }
    return this.set({ status: 'idle', qr_url: null, qr_png: null, user_id: null, error: null, codes: 0, started_at: null });
  }

  private set(patch: Partial<LoginState>): LoginState {
    this.current = { ...this.current, ...patch };
    this.publish(this.current);
    return this.current;
  }

  private async run(base: string, flow: AbortController, shown: () => void): Promise<void> {
    const signal = flow.signal;
    const until = Date.now() + FLOW_LIMIT_MS;
    let host = base;
    try {
      let qr = await this.newCode(base, signal);
      shown();
      while (!signal.aborted) {
        if (Date.now() > until) return void this.set({ status: 'failed', error: 'the login took longer than 10 minutes; start again', qr_url: null, qr_png: null });
        await sleep(POLL_MS, signal);
        if (signal.aborted) return;
        const st = await qrStatus(host, qr, signal);
        if (signal.aborted) return;
        if (st.status === 'scaned' && this.current.status !== 'scanned') this.set({ status: 'scanned' });
        else if (st.status === 'scaned_but_redirect' && st.redirect_host) host = `https://${st.redirect_host}`;
        else if (st.status === 'expired') {
          if (this.current.codes >= MAX_CODES) return void this.set({ status: 'expired', error: `the QR code expired ${MAX_CODES} times without being confirmed; start again`, qr_url: null, qr_png: null });
          host = base;
          qr = await this.newCode(base, signal);
        } else if (st.status === 'confirmed') {
          if (!st.bot_token || !st.ilink_bot_id || !st.ilink_user_id) return void this.set({ status: 'failed', error: 'WeChat confirmed the login but sent no bot credentials', qr_url: null, qr_png: null });
          redact(st.bot_token);
          const creds: MessengerCredentials = { token: st.bot_token, base_url: st.baseurl || base, account_id: st.ilink_bot_id, user_id: st.ilink_user_id, saved_at: new Date().toISOString() };
          writeFileAtomic(this.file, JSON.stringify(creds), 0o600);
          log.info('logged in to WeChat', { user: st.ilink_user_id });
          this.set({ status: 'confirmed', user_id: st.ilink_user_id, qr_url: null, qr_png: null });
          this.changed();
          return;
        }
      }
    } catch (err) {
      if (!signal.aborted) this.set({ status: 'failed', error: `WeChat login failed: ${(err as Error).message}`, qr_url: null, qr_png: null });
    } finally {
      if (this.flow === flow) this.flow = undefined;
    }
  }

  private async newCode(base: string, signal: AbortSignal): Promise<string> {
    const qr = await fetchQr(base, signal);
    const { default: QRCode } = await import('qrcode'); // only a login needs it
    const png = await QRCode.toDataURL(qr.url, { errorCorrectionLevel: 'M', margin: 2, width: 280 });
    this.set({ status: 'pending', qr_url: qr.url, qr_png: png, codes: this.current.codes + 1 });
    return qr.id;
  }
}
