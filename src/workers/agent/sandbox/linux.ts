import type { ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { codePath, startedByPath } from '../../../shared/code-root.js';
import type { NetworkSetting } from '../../../shared/sandbox/network.js';
import { bwrapPath } from '../../../shared/sandbox/status.js';
import { bwrapArgs, type FsPlan } from './bwrap.js';
import { dialPeer, joinSession, Peer, peerPorts } from './peers.js';
import { createProxy } from './proxy.js';
import { seccompProgram } from './seccomp.js';

const bridgeScript = codePath(startedByPath.sandboxBridge);

/** How a command starts in bubblewrap: the launcher, its extra descriptors and their feeding. */
export interface LinuxLaunch {
  prefix: string[];
  /** The environment bwrap itself gets (the command's arrives through the bridge when there is one). */
  env: Record<string, string>;
  /** Descriptors 3… of the launcher: the bridge's channel, the seccomp program's pipe. */
  stdio: Array<'ipc' | 'pipe'>;
  /** Feeds them once the launcher has started. */
  attach: (child: ChildProcess) => void;
  refusals: () => string[];
  close: () => void;
}

function feed(child: ChildProcess, fd: number, bytes: Buffer): void {
  const pipe = child.stdio[fd] as Writable | null | undefined;
  pipe?.on('error', () => {});
  pipe?.end(bytes);
}

/**
 * Every command gets its own network namespace. With the network off nothing else is needed;
 * otherwise the bridge runs first inside and the egress proxy here decides each connection, and
 * the session's commands reach each other's servers through their bridges (peers.ts).
 */
export function linuxLaunch(
  fs: FsPlan,
  network: NetworkSetting,
  rules: { localHosts: string[]; sockets: string[] },
  env: Record<string, string>,
  sessionId: string,
): LinuxLaunch | string {
  const program = seccompProgram(rules.sockets.length > 0);
  if (!program) return `no seccomp program is written for this machine (${process.arch})`;
  const isRoot = process.getuid?.() === 0;
  const bwrap = bwrapPath();
  if (network === 'off') {
    return {
      prefix: [bwrap, ...bwrapArgs(fs, { seccompFd: 3, sockets: rules.sockets }, isRoot)],
      env,
      stdio: ['pipe'],
      attach: (child) => feed(child, 3, program),
      refusals: () => [],
      close: () => {},
    };
  }
  let peer: Peer | undefined;
  let closed = false;
  let leave = () => {};
  const proxy = createProxy(
    { hosts: network === 'on' ? 'any' : network, local: rules.localHosts },
    undefined,
    (port) => dialPeer(sessionId, port, peer),
  );
  return {
    prefix: [
      bwrap,
      ...bwrapArgs(fs, { seccompFd: 4, sockets: rules.sockets }, isRoot),
      process.execPath,
      bridgeScript,
    ],
    // The bridge (node) starts clean: the user's NODE_OPTIONS must not run in it.
    env: {},
    stdio: ['ipc', 'pipe'],
    attach: (child) => {
      feed(child, 4, program);
      const self = new Peer(child);
      peer = self;
      // Whatever runs inside could drive the bridge: only a connected socket tagged with a side
      // reaches the proxy (under the same rules as any connection) or a peer's server (only
      // one the session's commands run); any other handle is closed.
      child.on('message', (m: unknown, handle: unknown) => {
        if (self.answered(m, handle)) return;
        const { side, port } = (m ?? {}) as { side?: unknown; port?: unknown };
        if (handle instanceof Socket && (side === 'http' || side === 'socks'))
          proxy.handle(handle, side);
        else if (handle instanceof Socket && side === 'peer' && typeof port === 'number')
          void splicePeer(handle, dialPeer(sessionId, port, self));
        else if (handle instanceof Socket) handle.destroy();
        else (handle as { close?: () => void } | undefined)?.close?.();
      });
      child.on('error', () => {});
      // The servers the session's other commands already run are listened for inside too.
      void peerPorts(sessionId).then((ports) => {
        if (!closed) leave = joinSession(sessionId, self);
        child.send(
          { t: 'start', env: { ...env, TMPDIR: '/tmp' }, forward: [...ports.keys()] },
          (err) => {
            if (err) child.kill('SIGKILL');
          },
        );
      });
    },
    refusals: proxy.refusals,
    close: () => {
      closed = true;
      leave();
      proxy.close();
    },
  };
}

/** Joins a connection made inside to the peer's server, or closes it when none serves there. */
async function splicePeer(inside: Socket, dialed: Promise<Socket | undefined>): Promise<void> {
  inside.on('error', () => inside.destroy());
  const up = await dialed;
  if (!up) return void inside.destroy();
  up.on('error', () => up.destroy());
  inside.on('close', () => up.destroy());
  up.on('close', () => inside.destroy());
  up.pipe(inside);
  inside.pipe(up);
}
