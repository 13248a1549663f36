import type { ChildProcess, SendHandle } from 'node:child_process';
import { Endpoint, type Link } from '../shared/protocol/endpoint.js';
import type { ChildRole, IpcMessage, ProcessStatus } from '../shared/protocol/ipc.js';
import type { Forked } from './spawn-child.js';

type State = ProcessStatus['state'];

/** One running child: its OS process, its IPC endpoint and what `svc status` says of it. */
/**
 * How long a new worker's start may take to reach it. It is held until the worker has loaded and
 * says ready; one whose deadline passed meanwhile (a loaded machine, a slow disk) is dropped by the
 * worker, which then served with no config at all (an agent refused every turn; a browser worker
 * said no browser was configured) until it exited. Nothing waits on this start but the first
 * request to that role, so the bound only has to outlast any load.
 */
export const CHILD_START_MS = 10 * 60_000;

export class Child {
  readonly proc: ChildProcess;
  readonly endpoint: Endpoint;
  readonly startedAt = Date.now();
  state: State = 'starting';
  /** Set before an intended stop, so the exit is not taken for a crash. */
  expectedExit = false;
  /** It said its handlers are in place (liveness pings only such a child). */
  ready = false;
  /** Set when svc killed it for not answering (liveness, or an interrupt it did not acknowledge). */
  hung = false;
  /** Sends a message, with an OS handle (a listening socket) when given, in order with the rest; `sent` runs once it is out. */
  readonly sendRaw: (m: IpcMessage, handle?: SendHandle, sent?: () => void) => void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(
    readonly role: ChildRole,
    forked: Forked,
  ) {
    this.proc = forked.proc;
    const proc = this.proc;
    // A child loads its modules asynchronously; hold messages until it says its handlers exist.
    let held: Array<{ m: IpcMessage; handle?: SendHandle; sent?: () => void }> | undefined = [];
    const send = (e: { m: IpcMessage; handle?: SendHandle; sent?: () => void }) => {
      if (!proc.connected) return e.sent?.();
      if (e.handle === undefined) proc.send(e.m);
      else proc.send(e.m, e.handle, {}, () => e.sent?.());
    };
    this.sendRaw = (m, handle, sent) =>
      held ? held.push({ m, handle, sent }) : send({ m, handle, sent });
    let hear: ((m: unknown) => void) | undefined;
    const link: Link = {
      send: (m: IpcMessage) => this.sendRaw(m),
      onMessage: (listener) => {
        proc.on('message', listener);
        hear = listener;
      },
    };
    this.endpoint = new Endpoint(link, 'supervisor', `${role} (pid ${proc.pid ?? '?'})`, role);
    // The groups a worker runs commands in: stopped when it exits, however it exits (its own exit
    // hook does not run on kill -9). Once more when the IPC channel closes: by then every report
    // it sent before dying has been read.
    let groups: readonly number[] = [];
    this.endpoint.onEvent((event) => {
      if (event.type === 'child.process_groups') groups = event.payload.pgids;
    });
    proc.once('exit', () => killGroups(groups));
    proc.once('disconnect', () => {
      if (!this.alive) killGroups(groups);
    });
    this.endpoint.onEvent((event) => {
      if (event.type !== 'child.ready' || !held) return;
      this.ready = true;
      const queue = held;
      held = undefined;
      for (const e of queue) send(e);
    });
    // Whatever the child said before this Child existed (a gateway forked early may be ready long
    // before a slow start adopts it) is heard now, in order, once every handler above is in
    // place: heard any earlier, its `child.ready` found no listener and every request to it
    // waited for a ready that never came.
    for (const m of forked.takeBuffered()) hear?.(m);
    this.exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        this.state = 'exited';
        this.endpoint.close(`the ${role} process exited`);
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Liveness gave up on it: SIGKILL (works on a stopped process too); its exit is handled as a crash. */
  killUnresponsive(): void {
    if (!this.alive) return;
    this.hung = true;
    this.state = 'unresponsive';
    this.proc.kill('SIGKILL');
  }

  /** Asks the child to stop; kills it after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.expectedExit = true;
    if (!this.alive) return;
    this.state = 'stopping';
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

function killGroups(pgids: readonly number[]): void {
  for (const g of pgids) {
    // Never our own group, whatever a confused child reports.
    if (g <= 1 || g === process.pid) continue;
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
