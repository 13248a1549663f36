import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { McpServer } from '../../shared/config/mcp.js';
import { scrub } from '../../shared/log.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import type { McpContent, McpStatus } from '../../shared/protocol/mcp.js';
import { Connection } from './connection.js';
import { SignInFlows } from './sign-in-flows.js';
import { killGroup } from './stdio-transport.js';
import { own } from '../../shared/own.js';

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
  private readonly flows = new SignInFlows();

  /** `home`: $SVC_HOME, where OAuth tokens are kept. */
  constructor(
    private readonly events: ManagerEvents,
    private readonly home: string,
  ) {}

  apply(servers: Record<string, McpServer>): void {
    for (const [name, conn] of this.connections) {
      const next = own(servers, name);
      if (next && isDeepStrictEqual(next, conn.server)) continue;
      this.connections.delete(name);
      void conn.close().then(() => this.reportGroups());
      if (!next)
        this.events.status({
          name,
          status: 'disabled',
          error: null,
          connected_at: null,
          transport: null,
          tools: [],
          needs_auth: false,
          stderr_tail: null,
        });
    }
    for (const [name, server] of Object.entries(servers)) {
      if (this.connections.has(name)) continue;
      const conn = new Connection(
        name,
        server,
        { changed: (s) => this.events.status(s), groups: () => this.reportGroups() },
        this.home,
      );
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

  async call(
    callId: string,
    server: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ content: McpContent[]; is_error: boolean }> {
    const conn = this.connections.get(server);
    if (!conn)
      return {
        content: [
          { type: 'text', text: `There is no MCP server "${server}" (it may have been removed).` },
        ],
        is_error: true,
      };
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

  /** Starts the user's sign-in to a remote server; answers the authorization URL (null: refreshed instead). */
  async signInStart(name: string, redirectUrl: string): Promise<string | null> {
    const conn = this.connections.get(name);
    if (!conn) throw new IpcCallError('not_found', `There is no MCP server "${name}".`);
    if (!conn.server.enabled)
      throw new IpcCallError('conflict', `The MCP server "${name}" is disabled; enable it first.`);
    const state = randomBytes(32).toString('base64url');
    let started;
    try {
      started = await conn.startSignIn(redirectUrl, state);
    } catch (err) {
      throw new IpcCallError(
        'conflict',
        `Could not start the sign-in to "${name}": ${scrub((err as Error).message)}.`,
      );
    }
    if (!started) return null;
    this.flows.add(state, { name, redirectUrl, verifier: started.verifier });
    return started.url;
  }

  /** The authorization server's answer, by the state it carries (single use); then the server connects. */
  async signInFinish(
    state: string,
    code: string | undefined,
    error: string | undefined,
  ): Promise<{ name: string; status: McpStatus }> {
    const flow = this.flows.take(state);
    if (!flow)
      throw new IpcCallError(
        'invalid_request',
        'This sign-in is unknown, was used already, or is older than 10 minutes; start again with Sign in on the MCP page.',
      );
    const conn = this.connections.get(flow.name);
    if (!conn)
      throw new IpcCallError(
        'not_found',
        `The MCP server "${flow.name}" is gone (removed or disabled while signing in).`,
      );
    if (error !== undefined || code === undefined)
      throw new IpcCallError(
        'invalid_request',
        `The authorization server did not sign you in to "${flow.name}" (${error ?? 'no code'}); try Sign in again.`,
      );
    try {
      return {
        name: flow.name,
        status: await conn.finishSignIn(code, flow.redirectUrl, flow.verifier),
      };
    } catch (err) {
      throw new IpcCallError(
        'conflict',
        `Signing in to "${flow.name}" failed: ${scrub((err as Error).message)}; try Sign in again.`,
      );
    }
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
