import { isDeepStrictEqual } from 'node:util';
import type { McpServer } from '../../shared/config/mcp.js';
import type { McpContent, McpStatus } from '../../shared/protocol/mcp.js';
import { Connection } from './connection.js';
import { killGroup } from './stdio-transport.js';

export interface ManagerEvents {
  status: (status: McpStatus) => void;
  /** The process groups of every running stdio server. */
  groups: (pgids: number[]) => void;
}

/**
 * Every configured server's connection. A config change is applied live: servers added are
 * connected, removed ones closed, changed ones reconnected with their new settings, and the
 * untouched ones keep their connection.
 */
export class Manager {
  private readonly connections = new Map<string, Connection>();
  private readonly calls = new Map<string, AbortController>();

  constructor(private readonly events: ManagerEvents) {}

  apply(servers: Record<string, McpServer>): void {
    for (const [name, conn] of this.connections) {
      const next = servers[name];
      if (next && isDeepStrictEqual(next, conn.server)) continue;
      this.connections.delete(name);
      void conn.close().then(() => this.reportGroups());
      if (!next) this.events.status({ name, status: 'disabled', error: null, connected_at: null, transport: null, tools: [] });
    }
    for (const [name, server] of Object.entries(servers)) {
      if (this.connections.has(name)) continue;
      const conn = new Connection(name, server, { changed: (s) => this.events.status(s), groups: () => this.reportGroups() });
      this.connections.set(name, conn);
      conn.start();
    }
  }

  statuses(): McpStatus[] {
    return [...this.connections.values()].map((c) => c.status());
  }

  get(name: string): Connection | undefined {
    return this.connections.get(name);
  }

  async call(callId: string, server: string, tool: string, args: Record<string, unknown>): Promise<{ content: McpContent[]; is_error: boolean }> {
    const conn = this.connections.get(server);
    if (!conn) return { content: [{ type: 'text', text: `There is no MCP server "${server}" (it may have been removed).` }], is_error: true };
    const ac = new AbortController();
    this.calls.set(callId, ac);
    try {
      return await conn.call(tool, args, ac.signal);
    } finally {
      this.calls.delete(callId);
    }
  }

  /** The SDK sends the server notifications/cancelled for the request. */
  cancel(callId: string): boolean {
    const ac = this.calls.get(callId);
    ac?.abort(new Error('interrupted'));
    return ac !== undefined;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }

  /** For process exit: synchronous, so it runs even when the event loop is going away. */
  killAllNow(): void {
    for (const c of this.connections.values()) if (c.pgid) killGroup(c.pgid, 'SIGKILL');
  }

  private reportGroups(): void {
    this.events.groups([...this.connections.values()].flatMap((c) => (c.pgid ? [c.pgid] : [])));
  }
}
