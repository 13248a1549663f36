import type { PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';
import type { LoginState } from '../../shared/protocol/channels.js';
import type { Adapter } from './adapter.js';

const idle: LoginState = { status: 'idle', qr_url: null, qr_png: null, user_id: null, error: null, codes: 0, started_at: null };

/** The messenger's QR login (to come). */
export class MessengerLogin {
  constructor(
    private readonly paths: Paths,
    private readonly config: () => Config | undefined,
    private readonly changed: () => void,
  ) {}

  generation(_platform: PlatformName): string {
    return '';
  }

  adapter(): Adapter | { needsLogin: string } {
    void this.paths;
    void this.config;
    void this.changed;
    return { needsLogin: 'not logged in: scan the QR code (POST /api/channels/messenger/login)' };
  }

  start(_force: boolean): LoginState {
    return idle;
  }

  state(): LoginState {
    return idle;
  }

  cancel(): LoginState {
    return idle;
  }
}
