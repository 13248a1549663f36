import { createRequire } from 'node:module';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/** uWebSockets.js, loaded once; `flavour` says whether the native addon or the slower JS fallback loaded. */
export const uws = require('uWebSockets.js') as typeof UWS;
export const flavour: 'native' | 'fallback' = Function.prototype.toString.call(uws.App).includes('[native code]') ? 'native' : 'fallback';
export type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket } from 'uWebSockets.js';
