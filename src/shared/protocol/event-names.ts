/**
 * The names of `/ws` events that any process needs at run time, without the catalogue's schemas
 * (events.ts): building those costs every process that imports them a few milliseconds at start,
 * and only the gateway checks events against them.
 */

/** The largest `/ws` frame of any event but a streamed delta. */
export const WS_EVENT_MAX_BYTES = 4096;

/** Streamed text: merged by the delta batchers, exempt from the cap (each piece is small). */
export const deltaTypes = ['turn.text_delta', 'turn.reasoning_delta'] as const;

/** The events that end a turn: every turn ends with exactly one, and nothing of it follows. */
export const turnEndTypes = ['turn.completed', 'turn.failed', 'turn.interrupted'] as const;
export type TurnEndType = (typeof turnEndTypes)[number];
const turnEnds: ReadonlySet<string> = new Set(turnEndTypes);

export function isTurnEnd(type: string): type is TurnEndType {
  return turnEnds.has(type);
}

export const topicKinds = [
  'server',
  'sessions',
  'session',
  'tasks',
  'workflows',
  'skills',
  'trash',
  'mcp',
  'channels',
] as const;
export type TopicKind = (typeof topicKinds)[number];
/** A topic's name: `session:<id>` for one session's events, else the kind itself. */
export type TopicName<K extends TopicKind> = K extends 'session' ? `session:${string}` : K;

export function topicKindOf(topic: string): TopicKind | undefined {
  if (topic.startsWith('session:')) return 'session';
  return (topicKinds as readonly string[]).includes(topic) ? (topic as TopicKind) : undefined;
}

export function isDelta(type: string): boolean {
  return (deltaTypes as readonly string[]).includes(type);
}
