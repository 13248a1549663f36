import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** What of the server's stderr is kept (its last lines are shown when it fails). */
const STDERR_KEPT = 16_384;
const CLOSE_GRACE_MS = 2000;

export interface StdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/**
 * The SDK's stdio transport, except that the server starts in its own process group: stopping it
 * stops whatever it started too, and the supervisor can kill the group if this worker dies. The
 * framing is the SDK's (ReadBuffer, serializeMessage); only the spawn differs.
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private proc: ChildProcess | undefined;
  /** Kept after the server exits: what it started may still live in its group until close(). */
  private group: number | undefined;
  private readonly buffer = new ReadBuffer();
  private stderr = '';
  /** The kept stderr lost its start. */
  private stderrCut = false;
  /** How the process ended, in words, once it has. */
  exit: string | null = null;

  constructor(private readonly params: StdioParams) {}

  /** The process group id (the server's pid), while it runs. */
  get pgid(): number | undefined {
    return this.group;
  }

  /** The last of what the server wrote to stderr (its own words on why it failed), unmasked. */
  get stderrKept(): { text: string; cut: boolean } {
    return { text: this.stderr, cut: this.stderrCut };
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      // Only a safe base environment (HOME, PATH, …): svc's own keys never reach a server.
      const proc = spawn(this.params.command, this.params.args, {
        env: { ...getDefaultEnvironment(), ...this.params.env },
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.proc = proc;
      this.group = proc.pid;
      proc.once('error', (err) => {
        this.exit = err.message;
        reject(err);
        this.onerror?.(err);
      });
      proc.once('spawn', () => resolve());
      proc.once('close', (code, signal) => {
        this.exit = signal ? `killed by ${signal}` : `exited with code ${code}`;
        this.proc = undefined;
        this.onclose?.();
      });
      proc.stdin?.on('error', (err) => this.onerror?.(err));
      proc.stdout?.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (err) {
            this.onerror?.(err as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      proc.stderr?.on('data', (chunk: Buffer) => {
        const all = this.stderr + chunk.toString('utf8');
        if (all.length > STDERR_KEPT) this.stderrCut = true;
        this.stderr = all.slice(-STDERR_KEPT);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.proc?.stdin;
      if (!stdin) return reject(new Error('the server process is not running'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes stdin, then SIGTERM to the group, then SIGKILL if the server is still there. */
  async close(): Promise<void> {
    const proc = this.proc;
    const group = this.group;
    this.group = undefined;
    if (!proc?.pid) {
      if (group) killGroup(group, 'SIGKILL'); // the server is gone; its group may not be
      return;
    }
    const gone = new Promise<void>((r) => proc.once('close', () => r()));
    const wait = (ms: number) =>
      Promise.race([
        gone.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref()),
      ]);
    proc.stdin?.end();
    await wait(200);
    // Whatever the server started lives in its group: it goes too, even when the server left on its own.
    killGroup(proc.pid, 'SIGTERM');
    if (await wait(CLOSE_GRACE_MS)) return;
    killGroup(proc.pid, 'SIGKILL');
    await wait(CLOSE_GRACE_MS);
  }
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is gone already
  }
}
