import type { ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { z } from 'zod';

/**
 * Every sandboxed command has its own network namespace, so a dev server one command started in
 * the background would be out of reach of the next (`curl localhost:5173`). The session's
 * commands reach each other's servers through their bridges instead: a bridge lists the ports
 * listening in its namespace and dials into them on request. Only the same session's commands
 * are peers; nothing here reaches the host's loopback (that stays the proxy's decision).
 */

const Answer = z.object({
  t: z.literal('answer'),
  id: z.number().int(),
  ports: z.array(z.number().int().min(1).max(65535)).optional(),
  error: z.string().optional(),
});

/** How long a bridge may take to answer; one that does not is left out, never waited on. */
const ANSWER_MS = 2000;

export class Peer {
  private next = 0;
  private readonly waiting = new Map<number, (m: z.infer<typeof Answer>, h?: Socket) => void>();

  constructor(private readonly bridge: ChildProcess) {}

  /** A bridge message that answers one of ours; true when it was one. */
  answered(message: unknown, handle: unknown): boolean {
    const m = Answer.safeParse(message);
    if (!m.success) return false;
    const done = this.waiting.get(m.data.id);
    this.waiting.delete(m.data.id);
    if (done) done(m.data, handle instanceof Socket ? handle : undefined);
    else if (handle instanceof Socket) handle.destroy();
    return true;
  }

  private ask(msg: Record<string, unknown>): Promise<{ m?: z.infer<typeof Answer>; h?: Socket }> {
    const id = ++this.next;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({});
      }, ANSWER_MS);
      this.waiting.set(id, (m, h) => {
        clearTimeout(timer);
        resolve({ m, h });
      });
      try {
        this.bridge.send({ ...msg, id }, (err) => {
          if (err) this.waiting.get(id)?.({ t: 'answer', id, error: err.message });
        });
      } catch {
        this.waiting.get(id)?.({ t: 'answer', id, error: 'the bridge is gone' });
      }
    });
  }

  async ports(): Promise<number[]> {
    return (await this.ask({ t: 'ports' })).m?.ports ?? [];
  }

  /** A socket connected to `port` inside this command's namespace, or undefined. */
  async dial(port: number): Promise<Socket | undefined> {
    const { m, h } = await this.ask({ t: 'dial', port });
    if (m?.error !== undefined) h?.destroy();
    return m?.error === undefined ? h : undefined;
  }
}

const sessions = new Map<string, Set<Peer>>();

/** Adds a running command to its session's peers; the answer removes it. */
export function joinSession(sessionId: string, peer: Peer): () => void {
  let set = sessions.get(sessionId);
  if (!set) sessions.set(sessionId, (set = new Set()));
  set.add(peer);
  return () => {
    set.delete(peer);
    if (set.size === 0 && sessions.get(sessionId) === set) sessions.delete(sessionId);
  };
}

/** The ports the session's other commands serve on, each with the command serving it. */
export async function peerPorts(sessionId: string, self?: Peer): Promise<Map<number, Peer>> {
  const peers = [...(sessions.get(sessionId) ?? [])].filter((p) => p !== self);
  const lists = await Promise.all(peers.map((p) => p.ports()));
  const out = new Map<number, Peer>();
  lists.forEach((ports, i) => {
    for (const port of ports) if (!out.has(port)) out.set(port, peers[i]!);
  });
  return out;
}

/** A connection to the session's own server on `port`, or undefined when none serves there. */
export async function dialPeer(
  sessionId: string,
  port: number,
  self?: Peer,
): Promise<Socket | undefined> {
  const peer = (await peerPorts(sessionId, self)).get(port);
  return peer ? peer.dial(port) : undefined;
}

/** Loopback as a command names it: a session's own servers are found there. */
export function isLoopbackName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return (
    h === 'localhost' || h.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1'
  );
}
