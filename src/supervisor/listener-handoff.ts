import type { SendHandle } from 'node:child_process';
import type { Child } from './child-process.js';

/**
 * Asks a running gateway for its listening socket, for an engine that cannot share its port
 * with the next gateway (node:http before Node 22.12 has no SO_REUSEPORT). Undefined when it
 * needs no handing over, or did not answer: the next gateway then binds the port itself.
 */
export async function takeListener(gateway: Child): Promise<SendHandle | undefined> {
  if (!gateway.alive) return undefined;
  let handle: SendHandle | undefined;
  const grab = (m: unknown, h: unknown) => {
    if (
      h !== undefined &&
      typeof m === 'object' &&
      m !== null &&
      (m as { type?: unknown }).type === 'gateway.listener'
    )
      handle = h as SendHandle;
  };
  gateway.proc.on('message', grab);
  try {
    const { sent } = await gateway.endpoint.request('gateway.listener', {});
    return sent ? handle : undefined;
  } catch {
    return undefined;
  } finally {
    gateway.proc.off('message', grab);
  }
}
