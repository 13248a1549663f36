/**
 * The labels of the Web UI's forms, by the API key each field sends. The forms show these words
 * and the routes' 400s name a field by them, so the message points at what the person sees. It
 * imports nothing, so the page's bundle takes it without the schemas. (The channel forms' labels
 * live with their platforms in config/channels.ts.)
 */

/** Add a server (MCP page), Local and Remote. */
export const mcpServerLabels = {
  name: 'Name',
  command: 'Command',
  args: 'Arguments',
  env: 'Environment',
  url: 'URL',
  headers: 'Headers',
} as const;

/** New schedule / Edit (Schedules page). */
export const cronTaskLabels = {
  name: 'Name',
  schedule: 'Schedule',
  timezone: 'Time zone',
  prompt: 'Prompt',
  permission_mode: 'Permissions',
  max_runtime_seconds: 'Max run time (seconds)',
  catch_up: 'Run once at start if a time was missed',
} as const;

/** The Connection card (Browser page). */
export const browserVerifyLabels = { port: 'DevTools port' } as const;

/** The test message form under a connected channel (Channels page). */
export const channelTestLabels = { chat_id: 'Chat id for a test message' } as const;
