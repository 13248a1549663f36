import type { z } from 'zod';
import type { Reply, RequestInfo, Responder } from './http.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteContext<B, Q = unknown> {
  req: RequestInfo;
  params: Record<string, string>;
  body: B;
  /** The query string parsed by the route's `query` schema. */
  query: Q;
  /** The raw response, for routes that stream their answer (SSE). */
  responder: Responder;
  /** True for a loopback request with a local Host and no forwarding header. */
  local: boolean;
}

/** One API route: where it lives, what body it takes, and what it answers. */
export interface Route<B = unknown, Q = unknown> {
  method: Method;
  path: string;
  summary: string;
  /** Needs no key (health and version only). */
  public?: boolean;
  /** Refused with 503 while the server drains; defaults to true for methods other than GET. */
  work?: boolean;
  body?: z.ZodType<B>;
  /** Parameters of the query string; a bad one is a 400 naming it. */
  query?: z.ZodType<Q>;
  /** The body arrives as a BodyStream instead of parsed JSON (uploads). */
  stream?: boolean;
  /** Answer `undefined` when the handler wrote the response itself through `responder`. */
  handler: (ctx: RouteContext<B, Q>) => Reply | undefined | Promise<Reply | undefined>;
}

/** Lets a route module keep its types while the table holds `Route`. */
export function route<B = undefined, Q = undefined>(r: Route<B, Q>): Route {
  return r as unknown as Route;
}
