import { execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { SLACK } from './server.js';

/**
 * A throwaway network namespace joined to this host by a veth pair, so a client inside it reaches
 * the server from a real non-loopback address. Needs root and iproute2; `netnsUnavailable()` says
 * why not otherwise, so tests can skip with a printed reason.
 */
export interface Netns {
  name: string;
  /** The host's end of the pair: bind the server here (or to every interface). */
  hostIp: string;
  /** The host end's interface name (removed with the namespace, so addresses added to it go too). */
  hostIf: string;
  /** The client's address inside the namespace. */
  nsIp: string;
  /** Runs a program inside the namespace to completion. */
  run(
    cmd: string[],
    timeoutMs?: number,
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Starts a program inside the namespace (for long-running load generators). */
  spawn(cmd: string[]): ReturnType<typeof spawn>;
  close(): void;
}

export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root, so no network namespace can be made';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'iproute2 (the ip command) is not installed';
  }
  return undefined;
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createNetns(): Netns {
  const id = `${process.pid % 10000}${randomInt(100, 999)}`;
  const name = `svct${id}`;
  const hostIf = `vh${id}`;
  const nsIf = `vn${id}`;
  // One of 12,700 subnets: two suites side by side (a developer's and CI's) rarely pick the same one.
  const net = `10.${randomInt(200, 250)}.${randomInt(1, 255)}`;
  const hostIp = `${net}.1`;
  const nsIp = `${net}.2`;
  ip('netns', 'add', name);
  try {
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf);
    ip('link', 'set', nsIf, 'netns', name);
    ip('addr', 'add', `${hostIp}/24`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${nsIp}/24`, 'dev', nsIf);
    ip('netns', 'exec', name, 'ip', 'link', 'set', nsIf, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (err) {
    try {
      ip('netns', 'del', name);
    } catch {
      // already gone
    }
    throw err;
  }
  const closeAll = () => {
    try {
      ip('netns', 'del', name); // takes the veth pair with it
    } catch {
      // already gone
    }
  };
  process.once('exit', closeAll);
  return {
    name,
    hostIp,
    hostIf,
    nsIp,
    spawn: (cmd) =>
      spawn('ip', ['netns', 'exec', name, ...cmd], { stdio: ['ignore', 'pipe', 'pipe'] }),
    run(cmd, timeoutMs = 30_000) {
      return new Promise((resolve) => {
        const p = spawn('ip', ['netns', 'exec', name, ...cmd], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs * SLACK);
        p.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
    },
    close: closeAll,
  };
}
