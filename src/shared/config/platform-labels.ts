/**
 * What each platform is called on screen. platformInfo (the Channels page's cards) and the Web
 * UI's session list read this one table; it imports nothing at run time, so the page's bundle
 * takes it without the config schemas.
 */
export const platformLabels = {
  telegram: 'Telegram',
  messenger: 'WeChat',
  slack: 'Slack',
  discord: 'Discord',
  whatsapp: 'WhatsApp',
} as const;

/** The platforms svc can connect; config/channels.ts gives each its schema and form (the compiler holds the two together). */
export type PlatformName = keyof typeof platformLabels;

/** A platform's name on screen; an id svc does not know (an older or newer server) as it is. */
export function platformLabel(id: string): string {
  return (platformLabels as Record<string, string>)[id] ?? id;
}
