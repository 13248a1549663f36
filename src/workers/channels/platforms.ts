import type { PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';
import type { Adapter } from './adapter.js';
import { MessengerLogin } from './login.js';

export { MessengerLogin };

/**
 * A fresh adapter for a platform from its configuration (or why it cannot run yet). A platform's
 * library is loaded the first time that platform starts, so the others do not pay for it.
 */
export async function createAdapter(platform: PlatformName, config: Config, _paths: Paths, login: MessengerLogin): Promise<Adapter | { needsLogin: string }> {
  if (platform === 'telegram') {
    const c = config.channels.telegram;
    if (!c) throw new Error('telegram is not configured');
    const { TelegramAdapter } = await import('./telegram.js');
    return new TelegramAdapter(c);
  }
  // slack
  if (platform === 'slack') {
    const c = config.channels.slack;
    if (!c) throw new Error('slack is not configured');
    const { SlackAdapter } = await import('./slack.js');
    return new SlackAdapter(c);
  }
  return login.adapter();
}
