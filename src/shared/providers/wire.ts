import type { RequestContext } from './classify.js';
import type { SseEvent } from './sse.js';
import type { ChatRequest, Completion, StreamEvent } from './types.js';

/** What each wire protocol provides: where to send, what to send, how to read the answer. */
export interface WireAdapter {
  url(baseUrl: string): URL;
  headers(apiKey: string | undefined, stream: boolean): Record<string, string>;
  body(req: ChatRequest, stream: boolean): Record<string, unknown>;
  parseStream(events: AsyncIterable<SseEvent>, ctx: RequestContext): AsyncGenerator<StreamEvent>;
  parseCompletion(json: unknown, ctx: RequestContext): Completion;
}

/** Parses a base URL, or says plainly why it cannot be used. */
export function parseBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`The base URL ${JSON.stringify(baseUrl)} is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(
      `The base URL ${JSON.stringify(baseUrl)} must start with http:// or https://.`,
    );
  url.hash = '';
  return url;
}

/** The base URL's path without trailing slashes: "" for a bare origin. */
export function basePath(url: URL): string {
  return url.pathname.replace(/\/+$/, '');
}

/** A stable id for a tool call a server sent without one. */
export function syntheticCallId(ordinal: number): string {
  return `call_${Date.now().toString(36)}_${ordinal}`;
}

export const userAgent = 'svc-agent';
