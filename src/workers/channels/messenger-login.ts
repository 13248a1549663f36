import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../shared/config/schema.js';
import { writeFileAtomic } from '../../shared/atomic-write.js';
import { redact } from '../../shared/log.js';
import type { Paths } from '../../shared/paths.js';
import type { Adapter } from './adapter.js';
import { LoginExpired, type QrFlow, type QrPlatform } from './login.js';
import { ContextTokens, credentialsSchema, type MessengerCredentials } from './messenger-state.js';

/** The platform allows this many fresh codes in one login before it gives up. */
const MAX_CODES = 3;
const POLL_MS = 2000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * The messenger's (WeChat iLink) part of the QR login: a code fetched, its status polled —
 * scanned, confirmed (the credentials saved 0600), or expired (a fresh code, up to the
 * platform's limit). The credentials never leave this process except to the platform.
 */
export class MessengerQr implements QrPlatform {
  readonly platform = 'messenger' as const;
  private readonly dir: string;
  readonly contexts: ContextTokens;

  constructor(
    paths: Paths,
    private readonly config: () => Config | undefined,
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

  account(): string | undefined {
    return this.credentials()?.user_id;
  }

  generation(): string {
    return this.credentials()?.saved_at ?? 'none';
  }

  unavailable(): string | undefined {
    return this.config()?.channels.messenger?.base_url ? undefined : 'WeChat is not configured';
  }

  async adapter(): Promise<Adapter | { needsLogin: string }> {
    const creds = this.credentials();
    const config = this.config()?.channels.messenger;
    if (!creds || !config)
      return { needsLogin: 'not logged in: scan the QR code (POST /api/channels/messenger/login)' };
    const { MessengerAdapter } = await import('./messenger.js');
    return new MessengerAdapter(creds, config, this.contexts);
  }

  async logout(): Promise<void> {
    rmSync(this.file, { force: true });
  }

  async login(flow: QrFlow): Promise<string> {
    const base = this.config()?.channels.messenger?.base_url;
    if (!base) throw new Error('WeChat is not configured');
    const { signal } = flow;
    const { fetchQr, qrStatus } = await import('./ilink.js');
    let host = base;
    const newCode = async () => {
      const qr = await fetchQr(base, signal);
      await flow.code(qr.url);
      return qr.id;
    };
    let qr = await newCode();
    while (!signal.aborted) {
      await sleep(POLL_MS, signal);
      if (signal.aborted) break;
      const st = await qrStatus(host, qr, signal);
      if (signal.aborted) break;
      if (st.status === 'scaned') flow.scanned();
      else if (st.status === 'scaned_but_redirect' && st.redirect_host)
        host = `https://${st.redirect_host}`;
      else if (st.status === 'expired') {
        if (flow.codes() >= MAX_CODES)
          throw new LoginExpired(
            `the QR code expired ${MAX_CODES} times without being confirmed; start again`,
          );
        host = base;
        qr = await newCode();
      } else if (st.status === 'confirmed') {
        if (!st.bot_token || !st.ilink_bot_id || !st.ilink_user_id)
          throw new Error('WeChat confirmed the login but sent no bot credentials');
        redact(st.bot_token);
        const creds: MessengerCredentials = {
          token: st.bot_token,
          base_url: st.baseurl || base,
          account_id: st.ilink_bot_id,
          user_id: st.ilink_user_id,
          saved_at: new Date().toISOString(),
        };
        writeFileAtomic(this.file, JSON.stringify(creds), 0o600);
        return st.ilink_user_id;
      }
    }
    throw new Error('cancelled');
  }
}
