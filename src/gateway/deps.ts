import type { Config } from '../shared/config/schema.js';
import type { Paths } from '../shared/paths.js';
import type { Endpoint } from '../shared/protocol/endpoint.js';
import type { Publish } from '../shared/protocol/events.js';
import type { Db } from '../shared/store/db.js';
import type { WsHub } from './ws/hub.js';

/** What route modules may use: the store, the supervisor link, events, and the live config. */
export interface Deps {
  endpoint: Endpoint;
  db: Db;
  paths: Paths;
  /** The current effective config (replaced when the supervisor announces a change). */
  config: () => Config;
  /** Publishes a `/ws` event on a topic; call it after the write it describes has committed. */
  publish: Publish;
  draining: () => boolean;
  /** The WebSocket event hub: turn routes listen to it to answer and stream. */
  hub: WsHub;
  startedAt: number;
  /** The access key, only to show it to a person who sent it already (GET /api/onboard/phone). */
  accessKey?: () => string;
}
