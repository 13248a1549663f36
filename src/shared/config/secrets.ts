import { redact } from '../log.js';
import { mcpSecretValues } from './mcp.js';
import { channelSecretValues } from './channels.js';
import type { Config } from './schema.js';

/** Every secret a config holds is scrubbed from this process's log lines from now on. */
export function redactConfigSecrets(config: Config): void {
  redact(config.access_key);
  for (const entry of Object.values(config.models)) redact(entry.api_key);
  for (const value of mcpSecretValues(config.mcp.servers)) redact(value);
  for (const value of channelSecretValues(config.channels)) redact(value);
}
