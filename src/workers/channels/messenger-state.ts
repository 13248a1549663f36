import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../../shared/atomic-write.js';

/*
 * The messenger's (WeChat iLink) saved state, apart from its adapter: the worker reads it while
 * the platform is only configured, and loads the adapter and the iLink client (undici) only when
 * the platform runs or logs in.
 */

/** What the QR login leaves behind (0600 under $SVC_HOME/channels); never in a response. */
export const credentialsSchema = z.object({
  token: z.string().min(1),
  base_url: z.string(),
  account_id: z.string(),
  user_id: z.string(),
  saved_at: z.string(),
});
export type MessengerCredentials = z.infer<typeof credentialsSchema>;

/**
 * Context tokens: every outbound message must carry the user's latest one, which only arrives on
 * their messages. Written through to a 0600 file so a restarted worker (or a cron delivery) can
 * still reach a user who wrote before.
 */
export class ContextTokens {
  private readonly map: Record<string, string>;
  constructor(private readonly file: string) {
    let m: Record<string, string> = {};
    try {
      m = z.record(z.string(), z.string()).parse(JSON.parse(readFileSync(file, 'utf8')));
    } catch {
      // none yet
    }
    this.map = m;
  }
  get(user: string): string | undefined {
    return this.map[user];
  }
  set(user: string, token: string): void {
    if (this.map[user] === token) return;
    this.map[user] = token;
    writeFileAtomic(this.file, JSON.stringify(this.map));
  }
}
