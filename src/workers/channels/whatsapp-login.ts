import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../../shared/config/schema.js';
import { writeFileAtomic } from '../../shared/atomic-write.js';
import type { Paths } from '../../shared/paths.js';
import type { Adapter } from './adapter.js';
import { LoginExpired, type QrFlow, type QrPlatform } from './login.js';
import { phoneOf, WaAuthStore } from './whatsapp-auth.js';
import { loadWaLib } from './whatsapp-socket.js';

/** Baileys closes a login socket with this when its QR codes ran out unscanned (DisconnectReason.timedOut), or the connection was lost. */
const WA_TIMED_OUT = 408;
const loginRecord = z.object({ account: z.string(), saved_at: z.string() });

/**
 * WhatsApp's part of the QR login: a Baileys socket with fresh keys (in a staging folder) shows
 * its codes; once the phone links it (pair-success, then the protocol's restart and an open
 * connection), the keys replace any earlier ones under $SVC_HOME/channels/whatsapp (0700, files
 * 0600) and the adapter starts with them.
 */
export class WhatsappQr implements QrPlatform {
  readonly platform = 'whatsapp' as const;
  private readonly dir: string;
  private readonly store: WaAuthStore;

  constructor(
    paths: Paths,
    private readonly config: () => Config | undefined,
  ) {
    this.dir = join(paths.home, 'channels');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.store = new WaAuthStore(join(this.dir, 'whatsapp'));
  }

  private get recordFile(): string {
    return join(this.dir, 'whatsapp.json');
  }

  private record(): z.infer<typeof loginRecord> | undefined {
    try {
      return loginRecord.parse(JSON.parse(readFileSync(this.recordFile, 'utf8')));
    } catch {
      return undefined;
    }
  }

  account(): string | undefined {
    return this.store.account() !== undefined
      ? (this.record()?.account ?? this.store.account())
      : undefined;
  }

  generation(): string {
    return this.record()?.saved_at ?? 'none';
  }

  unavailable(): string | undefined {
    return this.config()?.channels.whatsapp ? undefined : 'WhatsApp is not configured';
  }

  async adapter(): Promise<Adapter | { needsLogin: string }> {
    if (!this.config()?.channels.whatsapp || !this.account())
      return {
        needsLogin:
          'not logged in: scan the QR code with WhatsApp (POST /api/channels/whatsapp/login)',
      };
    const [{ lib, baileys }, { WhatsappAdapter }] = await Promise.all([
      loadWaLib(),
      import('./whatsapp.js'),
    ]);
    return new WhatsappAdapter(lib, baileys, this.store);
  }

  async logout(): Promise<void> {
    this.store.remove();
    rmSync(this.recordFile, { force: true });
  }

  async login(flow: QrFlow): Promise<string> {
    const { lib, baileys } = await loadWaLib();
    const { closeCode, WA_RESTART_REQUIRED } = await import('./whatsapp.js');
    const staging = new WaAuthStore(join(this.dir, 'whatsapp-login'));
    staging.remove();
    const { state, saveCreds } = staging.open(baileys);
    try {
      // The phone links the device, then the protocol asks for a restart: a new socket with the same keys opens.
      for (let restarts = 0; restarts < 3; restarts++) {
        const sock = lib.makeSocket(state);
        const outcome = await new Promise<'open' | 'restart'>((resolve, reject) => {
          const cancelled = () => (sock.end(undefined), reject(new Error('cancelled')));
          if (flow.signal.aborted) return cancelled();
          flow.signal.addEventListener('abort', cancelled, { once: true });
          const settle = (f: () => void) => (
            flow.signal.removeEventListener('abort', cancelled), f()
          );
          sock.ev.on('creds.update', () => {
            // A late update after the keys moved (or the flow ended) has nowhere to go: it is dropped.
            if (!existsSync(staging.dir)) return;
            saveCreds();
            if (state.creds.me?.id) flow.scanned();
          });
          sock.ev.on('connection.update', (u) => {
            if (u.qr !== undefined) void flow.code(u.qr).catch(() => undefined);
            if (u.connection === 'open') settle(() => resolve('open'));
            else if (u.connection === 'close') {
              const code = closeCode(u.lastDisconnect?.error);
              if (code === WA_RESTART_REQUIRED) settle(() => resolve('restart'));
              // 408 is also a lost connection (no network): only after codes were shown did they run out.
              else if (code === WA_TIMED_OUT && !state.creds.me && flow.codes() > 0)
                settle(() =>
                  reject(
                    new LoginExpired(
                      `the QR codes (${flow.codes()} shown) expired without being scanned; start again`,
                    ),
                  ),
                );
              else
                settle(() =>
                  reject(
                    new Error(
                      `the connection closed: ${u.lastDisconnect?.error?.message ?? 'no reason given'}${code ? ` (${code})` : ''}`,
                    ),
                  ),
                );
            }
          });
        });
        if (outcome === 'restart') continue;
        const account = phoneOf(sock.user?.id ?? state.creds.me?.id ?? '');
        if (!account) throw new Error('WhatsApp opened the connection but named no account');
        saveCreds();
        sock.end(undefined);
        this.store.remove();
        renameSync(staging.dir, this.store.dir);
        writeFileAtomic(
          this.recordFile,
          JSON.stringify({ account, saved_at: new Date().toISOString() }),
          0o600,
        );
        return account;
      }
      throw new Error('WhatsApp asked for a restart too many times');
    } finally {
      if (existsSync(staging.dir)) staging.remove();
    }
  }
}
