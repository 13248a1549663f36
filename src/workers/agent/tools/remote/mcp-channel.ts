import { createConnection, type Socket } from 'node:net';
import { log } from '../../../../shared/log.js';
import { Endpoint } from '../../../../shared/protocol/endpoint.js';
import { mcpDirectWelcome } from '../../../../shared/protocol/mcp.js';
import { SocketLink } from '../../../../shared/protocol/socket-link.js';

/** After a failed attempt, calls go through the supervisor this long before the next one. */
const RETRY_MS = 1000;
const CONNECT_TIMEOUT_MS = 3000;

/**
 * How this agent worker reaches the mcp worker: a direct channel (a unix socket whose address and
 * single-use token come from the mcp worker through the supervisor), which saves each call the
 * two hops through the supervisor; until it is open, or when it cannot be, the supervisor relays
 * as before. A channel that closes (the mcp worker stopped or was restarted) fails what was in
 * flight on it, like the relay does, and the next call brokers a new one.
 */
export class McpChannel {
  private direct: Endpoint | undefined;
  private connecting: Promise<Endpoint | undefined> | undefined;
  private failedAt = 0;

  constructor(private readonly relay: Endpoint) {}

  async endpoint(): Promise<Endpoint> {
    if (this.direct) return this.direct;
    if (Date.now() - this.failedAt < RETRY_MS) return this.relay;
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return (await this.connecting) ?? this.relay;
  }

  private async connect(): Promise<Endpoint | undefined> {
    let socket: Socket | undefined;
    try {
      const offer = await this.relay.request('mcp.direct', {});
      socket = createConnection(offer.path);
      const link = new SocketLink(socket);
      const s = socket;
      await new Promise<void>((resolve, reject) => {
        s.once('connect', resolve);
        s.once('close', () => reject(new Error('the direct channel closed')));
      });
      link.send({ token: offer.token });
      if (!mcpDirectWelcome.safeParse(await link.first(CONNECT_TIMEOUT_MS)).success)
        throw new Error('the mcp worker did not accept the channel');
      const endpoint = new Endpoint(link, 'agent', 'mcp');
      s.once('close', () => {
        endpoint.close('the mcp worker closed the direct channel');
        if (this.direct === endpoint) this.direct = undefined;
      });
      if (s.destroyed) return undefined;
      s.unref(); // an idle channel keeps nobody alive
      this.direct = endpoint;
      return endpoint;
    } catch (err) {
      socket?.destroy();
      this.failedAt = Date.now();
      // No mcp worker (no enabled server) is ordinary; anything else is worth a line.
      if (!/no mcp process/.test((err as Error).message))
        log.warn('no direct channel to the mcp worker; calls go through the supervisor', {
          error: (err as Error).message,
        });
      return undefined;
    }
  }
}
