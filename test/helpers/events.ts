import { WebSocket } from 'undici';
import { SLACK } from './server.js';

export interface WsEvent {
  topic: string;
  type: string;
  seq: number;
  data: any;
}

export interface EventClient {
  events: WsEvent[];
  /** Resolves the first event (already received or still to come) that matches. */
  next: (match: (e: WsEvent) => boolean, what?: string, timeoutMs?: number) => Promise<WsEvent>;
  close: () => void;
}

/** A /ws client subscribed to `topics`; resolves once the server confirmed the subscription. */
export async function subscribe(port: number, topics: string[]): Promise<EventClient> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
  const events: WsEvent[] = [];
  const waiters = new Set<() => void>();
  let subscribed: (() => void) | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('no subscription confirmation within 5 s')),
      5000 * SLACK,
    );
    subscribed = () => {
      clearTimeout(timer);
      resolve();
    };
    ws.addEventListener('error', () => reject(new Error('WebSocket error')));
  });
  ws.addEventListener('message', (m) => {
    const frame = JSON.parse(String(m.data)) as Record<string, unknown>;
    if (frame.type === 'hello' && frame.topic === 'server')
      ws.send(JSON.stringify({ type: 'subscribe', topics }));
    else if (frame.type === 'subscribed') subscribed?.();
    else if (typeof frame.topic === 'string') {
      events.push(frame as unknown as WsEvent);
      for (const w of waiters) w();
    }
  });
  await ready;
  return {
    events,
    close: () => ws.close(),
    next: (match, what = 'an event', timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const e = events.find(match);
          if (!e) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(e);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => `${e.topic} ${e.type}`))}`,
            ),
          );
        }, timeoutMs * SLACK);
        if (!check()) waiters.add(check);
      }),
  };
}
