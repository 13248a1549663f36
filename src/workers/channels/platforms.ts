import type { PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';
import type { Adapter } from './adapter.js';
import { MessengerLogin } from './login.js';
import { TelegramAdapter } from './telegram.js';

export { MessengerLogin };

/** A fresh adapter for a platform from its configuration (or why it cannot run yet). */
export function createAdapter(platform: PlatformName, config: Config, _paths: Paths, login: MessengerLogin): Adapter | { needsLogin: string } {
  if (platform === 'telegram') {
    const c = config.channels.telegram;
    if (!c) throw new Error('telegram is not configured');
    return new TelegramAdapter(c);
  }
  return login.adapter();
}
