import { firstIssue, refusalOf, type IpcErrorCode } from '../errors.js';
import { randomUUID } from 'node:crypto';
import { log } from '../log.js';
import {
  ipcMessage,
  requestDefs,
  requestIdOf,
  type EventPayload,
  type EventType,
  type IpcError,
  type IpcEvent,
  type IpcMessage,
  type IpcRequest,
  type PayloadOf,
  type RequestType,
  type ResultOf,
  type Role,
} from './ipc.js';
import { deadlineMs, refusal, requestRoutes } from './routes.js';

/** The two ends an IPC link can have: a child's `process`, or the supervisor's `ChildProcess`. */
export interface Link {
  send(message: IpcMessage): void;
  onMessage(listener: (raw: unknown) => void): void;
}

/** An IPC failure the caller can act on; `code` is one of the HTTP errors' codes or IPC's own. */
export class IpcCallError extends Error {
  constructor(
    readonly code: IpcErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

type Handler<T extends RequestType> = (
  payload: PayloadOf<T>,
  req: IpcRequest,
) => Promise<ResultOf<T>> | ResultOf<T>;
/** Handles requests addressed to another role (the supervisor's router uses it). */
type Forwarder = (req: IpcRequest) => Promise<unknown>;
type EventListener = (event: IpcEvent) => void;

interface Pending {
  type: RequestType;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One end of a typed IPC link: sends requests with correlation ids and deadlines, answers the
 * requests it has handlers for, and validates every message it receives against the protocol.
 */
export class Endpoint {
  private readonly pending = new Map<string, Pending>();
  private readonly handlers = new Map<RequestType, Handler<RequestType>>();
  private readonly eventListeners: EventListener[] = [];
  private forwarder: Forwarder | undefined;
  private closed = false;
  dropped = 0;

  constructor(
    private readonly link: Link,
    /** The role this endpoint answers for; requests to any other role go to the forwarder. */
    readonly self: Role,
    private readonly peerName: string,
    /** The peer's role, on the supervisor's side of a child's link: its requests are checked against the routing table. */
    private readonly peerRole?: Role,
  ) {
    link.onMessage((raw) => this.receive(raw));
  }

  /**
   * Sends a request; where it goes and how long it waits come from the routing table (`to` only
   * for requests any child answers; `timeoutMs` only where the wait depends on the call itself,
   * such as a tool's own timeout).
   */
  request<T extends RequestType>(
    type: T,
    payload: PayloadOf<T>,
    opts: { to?: Role; timeoutMs?: number; deadline?: number } = {},
  ): Promise<ResultOf<T>> {
    if (this.closed)
      return Promise.reject(
        new IpcCallError('unavailable', `the ${this.peerName} process is gone`),
      );
    const route = requestRoutes[type].to;
    const to = opts.to ?? (route === 'child' ? this.peerRole : route);
    if (to === undefined || (route !== 'child' && to !== route))
      return Promise.reject(
        new IpcCallError(
          'no_route',
          `${type} goes to ${route}, not to ${to ?? 'an unnamed child'}`,
        ),
      );
    const id = randomUUID();
    const deadline = opts.deadline ?? Date.now() + (opts.timeoutMs ?? deadlineMs(type));
    return new Promise<ResultOf<T>>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          reject(new IpcCallError('timeout', `${type} to ${to} got no answer in time`));
        },
        Math.max(0, deadline - Date.now()),
      );
      timer.unref();
      this.pending.set(id, { type, resolve: resolve as (v: unknown) => void, reject, timer });
      this.safeSend({ kind: 'req', id, type, to, deadline, payload });
    });
  }

  handle<T extends RequestType>(type: T, handler: Handler<T>): void {
    this.handlers.set(type, handler as unknown as Handler<RequestType>);
  }

  forwardOthers(forwarder: Forwarder): void {
    this.forwarder = forwarder;
  }

  emit<T extends EventType>(type: T, payload: EventPayload<T>): void {
    this.safeSend({ kind: 'event', type, payload } as IpcEvent);
  }

  onEvent(listener: EventListener): void {
    this.eventListeners.push(listener);
  }

  /** The peer is gone: fail everything still waiting on it. */
  close(reason: string): void {
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new IpcCallError('unavailable', `${p.type}: ${reason}`));
      this.pending.delete(id);
    }
  }

  /** Requests waiting on the peer, liveness pings aside (they are not work: a pool picks and retires by this). */
  get inflight(): number {
    let n = 0;
    for (const p of this.pending.values()) if (p.type !== 'child.ping') n++;
    return n;
  }

  private safeSend(message: IpcMessage): void {
    if (this.closed) return;
    try {
      this.link.send(message);
    } catch (err) {
      log.warn('IPC send failed', { peer: this.peerName, error: (err as Error).message });
    }
  }

  private receive(raw: unknown): void {
    const parsed = ipcMessage.safeParse(raw);
    if (!parsed.success) {
      this.dropped++;
      const problem = firstIssue(parsed.error, '(message)');
      log.warn('dropped a malformed IPC message', { peer: this.peerName, problem });
      // A request with a sound envelope is refused at once: its caller would otherwise wait out
      // its deadline (a name from a URL that a payload schema refuses was a 504 after 10 s).
      const id = requestIdOf(raw);
      if (id !== null)
        this.safeSend({
          kind: 'res',
          re: id,
          ok: false,
          error: { code: 'invalid_request', message: `the request is malformed: ${problem}` },
        });
      return;
    }
    const msg = parsed.data as IpcMessage;
    if (msg.kind === 'res') this.settle(msg.re, msg.ok, msg.result, msg.error);
    else if (msg.kind === 'req') void this.answer(msg);
    else for (const l of this.eventListeners) l(msg);
  }

  private settle(re: string, ok: boolean, result: unknown, error: IpcError | undefined): void {
    const p = this.pending.get(re);
    if (!p) return; // late answer after its deadline: nobody waits for it any more
    this.pending.delete(re);
    clearTimeout(p.timer);
    if (!ok) {
      p.reject(
        new IpcCallError(
          error?.code ?? 'internal',
          error?.message ?? 'request failed',
          error?.details,
        ),
      );
      return;
    }
    const checked = requestDefs[p.type].result.safeParse(result);
    if (checked.success) p.resolve(checked.data);
    else {
      this.dropped++;
      log.warn('dropped a malformed IPC result', { peer: this.peerName, type: p.type });
      p.reject(
        new IpcCallError(
          'bad_response',
          `${p.type}: the ${this.peerName} process answered with a malformed result`,
        ),
      );
    }
  }

  private async answer(req: IpcRequest): Promise<void> {
    if (req.deadline < Date.now()) return; // the caller has given up already
    try {
      const refused = this.peerRole === undefined ? null : refusal(req.type, this.peerRole, req.to);
      if (refused !== null) {
        log.warn('refused an IPC request the routing table does not allow', {
          peer: this.peerName,
          type: req.type,
          to: req.to,
        });
        throw new IpcCallError('forbidden', refused);
      }
      let result: unknown;
      if (req.to !== this.self) {
        if (!this.forwarder)
          throw new IpcCallError('no_route', `this ${this.self} process cannot reach ${req.to}`);
        result = await this.forwarder(req);
      } else {
        const handler = this.handlers.get(req.type);
        if (!handler)
          throw new IpcCallError(
            'no_handler',
            `the ${this.self} process does not handle ${req.type}`,
          );
        result = await handler(req.payload as never, req);
      }
      this.safeSend({ kind: 'res', re: req.id, ok: true, result });
    } catch (err) {
      // A refusal meant for the client (the store's, a handler's ApiError) keeps its code and
      // details across; anything else is `internal`.
      const refusal = err instanceof IpcCallError ? err : refusalOf(err);
      this.safeSend({
        kind: 'res',
        re: req.id,
        ok: false,
        error: {
          code: refusal?.code ?? 'internal',
          message: (err as Error).message,
          ...(refusal?.details === undefined ? {} : { details: refusal.details }),
        },
      });
    }
  }
}

/** The child side of the link: this process's own IPC channel to the supervisor. */
export function parentLink(): Link {
  if (!process.send)
    throw new Error('this process was not started by the svc supervisor (no IPC channel)');
  return {
    send: (m) => {
      process.send?.(m);
    },
    onMessage: (listener) => {
      process.on('message', listener);
    },
  };
}
