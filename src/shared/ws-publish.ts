import { log } from './log.js';
import { capEvent } from './protocol/event-cap.js';
import type { Endpoint } from './protocol/endpoint.js';
import type { Publish, WsEventData, WsEventTypeOn, WsTopicOf } from './protocol/events.js';

/** Where a publisher's events go once typed and capped: the gateway's hub, or IPC to it. */
export type RawPublish = (topic: string, type: string, data: unknown) => void;

/**
 * Holds an event to the size cap; an event over it is a publisher's bug (it should send ids and
 * a summary), logged once per event and sent cut rather than flooding every client.
 */
export function capped(topic: string, type: string, data: unknown): unknown {
  const r = capEvent(topic, type, data);
  if (r.over)
    log.error(
      'a /ws event was over the 4 KB cap and went out cut; its publisher should send a summary',
      { topic, type, bytes: r.bytes },
    );
  return r.data;
}

/** The typed `publish(topic, type, data)` of the catalogue, over any sink. */
export function typedPublish(sink: RawPublish): Publish {
  return (topic, type, data) => sink(topic, type, capped(topic, type, data));
}

/** Publishes from a worker: through the supervisor (IPC `ws.publish`) to the gateway. */
export function ipcPublish(endpoint: Pick<Endpoint, 'emit'>): Publish {
  return typedPublish((topic, type, data) => endpoint.emit('ws.publish', { topic, type, data }));
}

/** Session event types whose data names their turn. */
export type TurnEventType = {
  [T in WsEventTypeOn<'session'>]: 'turn_id' extends keyof WsEventData<T> ? T : never;
}[WsEventTypeOn<'session'>];
/** A turn's publisher: the session topic and the turn id are its own. */
export type TurnPublish = <T extends TurnEventType>(
  type: T,
  data: Omit<WsEventData<T>, 'turn_id'>,
) => void;

/** Turn event types a tool call emits while it runs (its call id is added). */
export type CallEventType = {
  [T in TurnEventType]: 'call_id' extends keyof WsEventData<T> ? T : never;
}[TurnEventType];
export type CallEmit = <T extends CallEventType>(
  type: T,
  data: Omit<WsEventData<T>, 'turn_id' | 'call_id'>,
) => void;

/** A turn's publisher over the session topic's typed publish. */
export function turnPublish(publish: Publish, sessionId: string, turnId: string): TurnPublish {
  // The spread of a generic Omit is not provably the whole again; the catalogue's parse at the gateway checks it.
  return (type, data) =>
    publish(`session:${sessionId}` as WsTopicOf<typeof type>, type, {
      turn_id: turnId,
      ...data,
    } as WsEventData<typeof type>);
}

/** What a tool call emits, with its call id, through its turn's publisher. */
export function callEmit(publish: TurnPublish, callId: string): CallEmit {
  return (type, data) =>
    publish(type, { call_id: callId, ...data } as Omit<WsEventData<typeof type>, 'turn_id'>);
}
