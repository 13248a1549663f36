import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { log } from '../../shared/log.js';
import { Endpoint } from '../../shared/protocol/endpoint.js';
import { mcpDirectHello } from '../../shared/protocol/mcp.js';
import { SocketLink } from '../../shared/protocol/socket-link.js';

/** A token not used within this long is void. */
const TOKEN_TTL_MS = 30_000;
const HELLO_TIMEOUT_MS = 5_000;
/** Unix socket paths are limited to about 108 bytes. */
const MAX_SOCKET_PATH = 100;

/**
 * Direct channels from agent workers to this mcp worker: a unix socket (0600, in svc's private
 * run folder) that takes a connection only with a single-use token the agent got through the
 * supervisor (`mcp.direct`). Each channel is an Endpoint answering for `mcp` with the handlers
 * `serve` registers, validated like every IPC link. Everything closes when this worker exits.
 */
export class DirectChannels {
  private readonly tokens = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private listening: Promise<string> | undefined;
  private path: string | undefined;
  private tempDir: string | undefined;

  constructor(
    private readonly runDir: string,
    /** Puts the handlers a channel answers (tool calls, cancel, tool list) on its endpoint. */
    private readonly serve: (endpoint: Endpoint) => void,
  ) {}

  /** Where to connect and the token to present; the socket is opened on the first ask. */
  async offer(): Promise<{ path: string; token: string }> {
    const path = await (this.listening ??= this.listen());
    const now = Date.now();
    for (const [t, expiry] of this.tokens) if (expiry < now) this.tokens.delete(t);
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, now + TOKEN_TTL_MS);
    return { path, token };
  }

  /** Synchronous, for the exit hook: the socket file goes with the worker. */
  closeNow(): void {
    for (const s of this.sockets) s.destroy();
    this.server?.close();
    if (this.path) rmSync(this.path, { force: true });
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  private listen(): Promise<string> {
    let path = join(this.runDir, `mcp-${process.pid}.sock`);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      this.tempDir = mkdtempSync(join(tmpdir(), 'svc-mcp-'));
      path = join(this.tempDir, 'mcp.sock');
    } else mkdirSync(this.runDir, { recursive: true, mode: 0o700 });
    try {
      unlinkSync(path); // left by an earlier worker with this pid that was killed outright
    } catch {
      // none
    }
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (err) => {
        this.listening = undefined; // the next ask tries again
        reject(err);
      });
      server.listen(path, () => {
        chmodSync(path, 0o600);
        this.path = path;
        resolve(path);
      });
    });
  }

  private accept(socket: Socket): void {
    this.sockets.add(socket);
    const link = new SocketLink(socket);
    let endpoint: Endpoint | undefined;
    socket.on('close', () => {
      this.sockets.delete(socket);
      endpoint?.close('the agent closed its direct channel');
    });
    link
      .first(HELLO_TIMEOUT_MS)
      .then((raw) => {
        const hello = mcpDirectHello.safeParse(raw);
        const expiry = hello.success ? this.tokens.get(hello.data.token) : undefined;
        if (!hello.success || expiry === undefined || expiry < Date.now()) {
          log.warn('refused a direct channel without a valid token');
          socket.destroy();
          return;
        }
        this.tokens.delete(hello.data.token);
        // The peer is an agent worker: the routing table limits it to what agents may send the mcp worker.
        endpoint = new Endpoint(link, 'mcp', 'agent', 'agent');
        this.serve(endpoint);
        link.send({ ok: true });
      })
      .catch(() => socket.destroy());
  }
}
