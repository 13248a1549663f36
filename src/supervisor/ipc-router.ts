import { IpcCallError, type Endpoint } from '../shared/protocol/endpoint.js';
import type { ChildRole, IpcEvent, RequestType, Role } from '../shared/protocol/ipc.js';

/** What the router needs of a child: its role and its end of the link. */
export interface Routable {
  readonly role: ChildRole;
  readonly endpoint: Endpoint;
}

/**
 * Routes IPC between children: a request addressed to another role is re-sent to a process of
 * that role with the caller's deadline, and its answer comes back the same way. Events a child
 * publishes for WebSocket clients go to the gateway.
 */
export class IpcRouter {
  /** What the gateway itself forwarded while it is still the current one (it handed its /ws numbering to a successor not yet in place). */
  private held: IpcEvent[] = [];

  constructor(
    /** Finds (or starts) a process to take a request for `role`. */
    private readonly pick: (
      role: ChildRole,
    ) => Routable | undefined | Promise<Routable | undefined>,
    /** Also hears every `/ws` event a child sends (the channels worker wants the session events). */
    private readonly alsoTo?: (
      event: { topic: string; type: string; data: unknown },
      from: Routable,
    ) => void,
  ) {}

  attach(child: Routable): void {
    child.endpoint.forwardOthers(async (req) => {
      const role = req.to as Exclude<Role, 'supervisor'>;
      const target = await this.pick(role);
      if (!target) {
        // No channels worker means no platform is enabled: say so in the words a caller (cron) can pass on.
        const platform = (req.payload as { platform?: unknown } | undefined)?.platform;
        if (role === 'channels' && typeof platform === 'string')
          throw new IpcCallError(
            'conflict',
            `The ${platform} channel is not running (no channels are enabled).`,
          );
        throw new IpcCallError('unavailable', `no ${role} process is running to take ${req.type}`);
      }
      return target.endpoint.request(req.type as RequestType, req.payload as never, {
        to: role,
        deadline: req.deadline,
      });
    });
    child.endpoint.onEvent((event) => this.route(child, event));
  }

  private route(from: Routable, event: IpcEvent): void {
    // Only the supervisor announces server state; a child claiming to is ignored.
    if (event.type !== 'ws.publish' && event.type !== 'ws.delta') return;
    if (event.type === 'ws.publish') this.alsoTo?.(event.payload, from);
    else {
      const { topic, type, turn_id, delta } = event.payload;
      this.alsoTo?.({ topic, type, data: { turn_id, delta } }, from);
    }
    const gateway = this.pick('gateway');
    if (gateway === from) this.held.push(event);
    else if (gateway && !(gateway instanceof Promise)) pass(gateway, event);
  }

  /** Passes what was held to the gateway now current (the successor, or the old one taking its numbering back). */
  release(): void {
    const gateway = this.pick('gateway');
    if (!gateway || gateway instanceof Promise) return;
    const held = this.held;
    this.held = [];
    for (const e of held) pass(gateway, e);
  }
}

/** Passes a `/ws` event (a streamed delta on its own) to the gateway as it came. */
function pass(gateway: Routable, e: IpcEvent): void {
  if (e.type === 'ws.publish') gateway.endpoint.emit('ws.publish', e.payload);
  else if (e.type === 'ws.delta') gateway.endpoint.emit('ws.delta', e.payload);
}
