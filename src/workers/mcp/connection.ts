import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServer } from '../../shared/config/mcp.js';
import { log, scrub } from '../../shared/log.js';
import type { McpContent, McpStatus, McpTool } from '../../shared/protocol/mcp.js';
import { version } from '../../shared/version.js';
import { IpcCallError } from '../../shared/protocol/endpoint.js';
import { callError } from './catalog.js';
import { NeedsSignIn, OAuthStore, SvcOAuthProvider } from './oauth.js';
import { mapToolResult } from './results.js';
import { stderrTail } from './stderr-tail.js';
import { GroupStdioTransport } from './stdio-transport.js';

const CONNECT_TIMEOUT_MS = 30_000;
const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000, 30_000];

export interface ConnectionEvents {
  /** The status or the tools changed. */
  changed: (status: McpStatus) => void;
  /** A stdio server started or stopped (its process group). */
  groups: () => void;
}

/**
 * One MCP server: connects with the SDK client (stdio in its own process group, or Streamable
 * HTTP falling back to SSE), keeps its tool list fresh on list_changed, and after a crash or a
 * dropped connection tries again with growing pauses until it is closed.
 */
export class Connection {
  private state: McpStatus['status'] = 'connecting';
  private error: string | null = null;
  private connectedAt: string | null = null;
  private kind: McpStatus['transport'] = null;
  private tools: McpTool[] = [];
  /** The end of a failed server's stderr, kept until it connects again. */
  private stderr: string | null = null;
  /** The tail last written to the log, so a server failing the same way on each retry logs it once. */
  private loggedStderr: string | null = null;
  private client: Client | undefined;
  private stdio: GroupStdioTransport | undefined;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;
  private closed = false;
  /** Waiting for the user to sign in (OAuth): no retries meanwhile. */
  private needsAuth = false;
  /** Remote servers without an Authorization header of their own may sign in with OAuth. */
  private readonly oauth: OAuthStore | undefined;

  constructor(
    readonly name: string,
    readonly server: McpServer,
    private readonly events: ConnectionEvents,
    home: string,
  ) {
    const ownAuth = Object.keys(server.headers ?? {}).some(
      (h) => h.toLowerCase() === 'authorization',
    );
    this.oauth =
      server.url !== undefined && !ownAuth ? new OAuthStore(home, name, server.url) : undefined;
  }

  start(): void {
    if (!this.server.enabled) {
      this.state = 'disabled';
      this.emit();
      return;
    }
    void this.connect();
  }

  status(): McpStatus {
    return {
      name: this.name,
      status: this.state,
      error: this.error,
      connected_at: this.connectedAt,
      transport: this.kind,
      tools: this.tools,
      needs_auth: this.needsAuth,
      stderr_tail: this.stderr,
    };
  }

  /** The server offers resources (the agent may read the ones its results link). */
  offersResources(): boolean {
    return this.state === 'connected' && !!this.client?.getServerCapabilities()?.resources;
  }

  /**
   * Runs `fn` with the connected client and the server's timeout; a refusal or failure becomes an
   * error the API can answer (`what` names the request in it).
   */
  async use<T>(what: string, fn: (client: Client, opts: { timeout: number }) => Promise<T>) {
    const client = this.client;
    if (!client || this.state !== 'connected')
      throw new IpcCallError(
        'conflict',
        `The MCP server "${this.name}" is not connected${this.error ? `: ${this.error}` : ''}; GET /api/mcp/servers/${this.name} shows its status.`,
      );
    try {
      return await fn(client, { timeout: this.server.timeout_seconds * 1000 });
    } catch (err) {
      if (isAuthError(err)) {
        this.waitForSignIn();
        throw new IpcCallError(
          'conflict',
          `The MCP server "${this.name}" asks you to sign in again (OAuth): use Sign in on the MCP page.`,
        );
      }
      throw callError(err, what, this.name);
    }
  }

  get pgid(): number | undefined {
    return this.stdio?.pgid;
  }

  /** Drops the connection (if any) and connects again now, forgetting the backoff. */
  async reconnect(): Promise<McpStatus> {
    if (!this.server.enabled || this.closed) return this.status();
    this.attempt = 0;
    clearTimeout(this.timer);
    await this.disconnect();
    await this.connect();
    return this.status();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.disconnect();
  }

  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ content: McpContent[]; is_error: boolean }> {
    const client = this.client;
    if (!client || this.state !== 'connected') {
      return fail(
        `The MCP server "${this.name}" is not connected${this.error ? `: ${this.error}` : ''}. Try again later or ask the user to check it.`,
      );
    }
    if (!this.tools.some((t) => t.name === tool))
      return fail(
        `The MCP server "${this.name}" has no tool "${tool}" (or it is not on the server's allow-list).`,
      );
    const timeout = this.server.timeout_seconds * 1000;
    try {
      const raw = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout,
        resetTimeoutOnProgress: false,
      });
      return mapToolResult(raw, this.name);
    } catch (err) {
      if (signal.aborted) return fail('The call was cancelled.');
      if (isAuthError(err)) {
        this.waitForSignIn();
        return fail(
          `The MCP server "${this.name}" asks the user to sign in again (OAuth); ask them to use Sign in on the MCP page.`,
        );
      }
      const message = (err as Error).message;
      if (/timed out|timeout/i.test(message))
        return fail(
          `${tool} on "${this.name}" did not answer within ${this.server.timeout_seconds} s (timeout_seconds).`,
        );
      return fail(`${tool} on "${this.name}" failed: ${scrub(message)}`);
    }
  }

  private emit(): void {
    this.events.changed(this.status());
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.state = 'connecting';
    this.needsAuth = false;
    this.emit();
    try {
      const opened = await this.open();
      if (gen !== this.generation || this.closed) {
        await opened.client.close().catch(() => undefined);
        return;
      }
      this.client = opened.client;
      this.kind = opened.kind;
      opened.client.onclose = () => {
        if (gen === this.generation && !this.closed) this.keepStderr();
        if (gen === this.generation && !this.closed)
          this.lost(
            this.stdio?.exit
              ? `the server process ${this.stdio.exit}${this.stderrNote()}`
              : 'the connection closed',
          );
      };
      this.tools = await this.listTools(opened.client);
      if (gen !== this.generation) return;
      this.state = 'connected';
      this.error = null;
      this.stderr = null;
      this.loggedStderr = null;
      this.connectedAt = new Date().toISOString();
      this.attempt = 0;
      log.info('MCP server connected', {
        server: this.name,
        transport: opened.kind,
        tools: this.tools.length,
      });
      this.emit();
    } catch (err) {
      if (gen !== this.generation || this.closed) return;
      if (isAuthError(err)) return this.waitForSignIn();
      const exit = this.stdio?.exit;
      this.keepStderr();
      await this.disconnect(false);
      this.lost(
        `${scrub((err as Error).message)}${exit ? ` (the server process ${exit}${this.stderrNote()})` : ''}`,
      );
    }
  }

  /** The last line the server wrote to stderr, for the one-line error. */
  private stderrNote(): string {
    const last = this.stderr?.split('\n').pop();
    return last ? `: ${last.slice(0, 300)}` : '';
  }

  /** Keeps the end of what a failing server wrote to stderr (masked); the log gets it once. */
  private keepStderr(): void {
    const kept = this.stdio?.stderrKept;
    if (!kept) return;
    this.stderr = stderrTail(kept.text, this.server.env ?? {}, kept.cut);
    if (this.stderr === null || this.stderr === this.loggedStderr) return;
    this.loggedStderr = this.stderr;
    log.warn(`MCP server "${this.name}" wrote to stderr before it failed:`, { server: this.name });
    for (const line of this.stderr.split('\n')) log.warn(`[${this.name} stderr] ${line}`);
  }

  /** Needs the user: no retry until they sign in (which reconnects) or press reconnect. */
  private waitForSignIn(): void {
    this.generation++;
    clearTimeout(this.timer);
    void this.disconnect(false);
    this.client = undefined;
    this.state = 'error';
    this.needsAuth = true;
    this.error =
      'The server wants credentials: use Sign in on the MCP page (OAuth; POST /api/mcp/servers/{name}/oauth/start), or, if it takes a key instead, give it an Authorization header.';
    this.connectedAt = null;
    this.tools = [];
    log.info('MCP server needs sign-in', { server: this.name });
    this.emit();
  }

  /**
   * Starts the SDK's OAuth flow for the user: answers the authorization URL to send the browser to
   * and the PKCE verifier to finish with; null when stored tokens could be refreshed instead.
   */
  async startSignIn(
    redirectUrl: string,
    state: string,
  ): Promise<{ url: string; verifier: string } | null> {
    const store = this.oauthStore();
    let started: { url: string; verifier: string } | undefined;
    const provider = new SvcOAuthProvider(store, {
      kind: 'start',
      redirectUrl,
      state,
      started: (url, verifier) => void (started = { url: url.href, verifier }),
    });
    const result = await auth(provider, { serverUrl: store.serverUrl });
    if (result === 'AUTHORIZED') {
      void this.reconnect();
      return null;
    }
    if (!started) throw new Error('the OAuth flow gave no authorization URL');
    return started;
  }

  /** Trades the code the authorization server sent back for tokens, then connects with them. */
  async finishSignIn(code: string, redirectUrl: string, verifier: string): Promise<McpStatus> {
    const store = this.oauthStore();
    await auth(new SvcOAuthProvider(store, { kind: 'finish', redirectUrl, verifier }), {
      serverUrl: store.serverUrl,
      authorizationCode: code,
    });
    log.info('MCP server signed in', { server: this.name });
    return this.reconnect();
  }

  private oauthStore(): OAuthStore {
    if (!this.oauth)
      throw new Error(
        this.server.url
          ? 'the server has an Authorization header of its own; remove it to sign in with OAuth'
          : 'a local (stdio) server has no sign-in',
      );
    return this.oauth;
  }

  private lost(reason: string): void {
    this.generation++;
    this.client = undefined;
    this.state = 'error';
    this.error = reason;
    this.connectedAt = null;
    this.tools = [];
    log.warn('MCP server unavailable; will retry', { server: this.name, error: reason });
    this.emit();
    void this.disconnect(false);
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)] ?? 30_000;
    this.attempt++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private async disconnect(bump = true): Promise<void> {
    if (bump) this.generation++;
    const client = this.client;
    const stdio = this.stdio;
    this.client = undefined;
    this.stdio = undefined;
    await client?.close().catch(() => undefined);
    await stdio?.close().catch(() => undefined);
    if (stdio) this.events.groups();
  }

  private async open(): Promise<{ client: Client; kind: NonNullable<McpStatus['transport']> }> {
    const s = this.server;
    if (s.command !== undefined) {
      const transport = new GroupStdioTransport({
        command: s.command,
        args: s.args ?? [],
        env: s.env ?? {},
        cwd: s.cwd,
      });
      this.stdio = transport;
      const client = this.newClient();
      try {
        await withTimeout(
          client.connect(transport),
          CONNECT_TIMEOUT_MS,
          'the server did not finish the MCP handshake',
        );
      } finally {
        this.events.groups();
      }
      return { client, kind: 'stdio' };
    }
    const url = new URL(s.url ?? '');
    const requestInit = { headers: s.headers ?? {} };
    const authProvider = this.oauth
      ? new SvcOAuthProvider(this.oauth, { kind: 'passive' })
      : undefined;
    const first = this.newClient();
    try {
      await withTimeout(
        first.connect(new StreamableHTTPClientTransport(url, { requestInit, authProvider })),
        CONNECT_TIMEOUT_MS,
        'no answer from the server',
      );
      return { client: first, kind: 'streamable_http' };
    } catch (err) {
      await first.close().catch(() => undefined);
      if (isAuthError(err)) throw err; // the server is there and wants a sign-in: SSE would not help
      // Servers from before Streamable HTTP speak the SSE transport at the same address.
      const second = this.newClient();
      const headers = s.headers ?? {};
      const sse: Transport = new SSEClientTransport(url, {
        requestInit,
        authProvider,
        eventSourceInit: {
          fetch: (u, init) =>
            fetch(u, {
              ...init,
              headers: { ...(init?.headers as Record<string, string>), ...headers },
            }),
        },
      });
      try {
        await withTimeout(second.connect(sse), CONNECT_TIMEOUT_MS, 'no answer from the server');
        return { client: second, kind: 'sse' };
      } catch {
        await second.close().catch(() => undefined);
        throw err; // the Streamable HTTP error says more about a modern server
      }
    }
  }

  private newClient(): Client {
    return new Client(
      { name: 'svc', version },
      {
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (error || !tools || this.state !== 'connected') return;
              this.tools = this.allowed(tools);
              log.info('MCP server tools changed', { server: this.name, tools: this.tools.length });
              this.emit();
            },
          },
        },
      },
    );
  }

  private async listTools(client: Client): Promise<McpTool[]> {
    const all: SdkTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await withTimeout(
        client.listTools(cursor ? { cursor } : undefined),
        CONNECT_TIMEOUT_MS,
        'the server did not list its tools',
      );
      all.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor && all.length < 1000);
    return this.allowed(all);
  }

  private allowed(tools: SdkTool[]): McpTool[] {
    const only = this.server.tools;
    return tools
      .filter((t) => !only || only.includes(t.name))
      .map((t) => ({
        name: t.name,
        description: t.description ?? '',
        input_schema: t.inputSchema as Record<string, unknown>,
      }));
  }
}

/** The server refused us for want of a sign-in the user has to make. */
function isAuthError(err: unknown): boolean {
  return (
    err instanceof NeedsSignIn ||
    err instanceof UnauthorizedError ||
    (err instanceof StreamableHTTPError &&
      err.code === 401 &&
      err.message.includes('after successful authentication'))
  );
}

function fail(text: string): { content: McpContent[]; is_error: boolean } {
  return { content: [{ type: 'text', text }], is_error: true };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
