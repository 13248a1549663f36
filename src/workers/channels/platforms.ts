import type { PlatformName } from '../../shared/config/channels.js';
import type { Config } from '../../shared/config/schema.js';
import type { Paths } from '../../shared/paths.js';
import type { LoginState } from '../../shared/protocol/channels.js';
import type { Adapter } from './adapter.js';
import { QrLogin, type QrPlatform } from './login.js';
import { MessengerQr } from './messenger-login.js';
// whatsapp
import { WhatsappQr } from './whatsapp-login.js';

export { QrLogin };

/**
 * The QR-login platforms, each behind the one login flow (QrLogin). A platform's library is
 * loaded only when its flow or adapter starts.
 */
export function qrLogins(
  paths: Paths,
  config: () => Config | undefined,
  changed: () => void,
  publish: (s: LoginState) => void,
): Map<PlatformName, QrLogin> {
  const platforms: QrPlatform[] = [
    new MessengerQr(paths, config),
    // whatsapp
    new WhatsappQr(paths, config),
  ];
  return new Map(platforms.map((p) => [p.platform, new QrLogin(p, changed, publish)]));
}

/**
 * A fresh adapter for a platform from its configuration (or why it cannot run yet). A platform's
 * library is loaded the first time that platform starts, so the others do not pay for it.
 */
export async function createAdapter(
  platform: PlatformName,
  config: Config,
  _paths: Paths,
  logins: Map<PlatformName, QrLogin>,
): Promise<Adapter | { needsLogin: string }> {
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
  // discord
  if (platform === 'discord') {
    const c = config.channels.discord;
    if (!c) throw new Error('discord is not configured');
    return new (await import('./discord.js')).DiscordAdapter(c);
  }
  const login = logins.get(platform);
  if (!login) throw new Error(`${platform} has no adapter`);
  return login.qr.adapter();
}
