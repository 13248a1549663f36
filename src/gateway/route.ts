import type { z } from 'zod';
import type { Reply, RequestInfo, Responder } from './http.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The `:name` segments of a path pattern: `/api/sessions/:id/messages` → `'id'`. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** A route's path parameters, typed from its pattern (each one present, as the router matched it). */
export type ParamsOf<P extends string> = string extends P
  ? Record<string, string | undefined>
  : { [K in ParamNames<P>]: string };

export interface RouteContext<B, Q = unknown, P extends string = string> {
  req: RequestInfo;
  params: ParamsOf<P>;
  body: B;
  /** The query string parsed by the route's `query` schema. */
  query: Q;
  /** The raw response, for routes that stream their answer (SSE). */
  responder: Responder;
  /** True for a loopback request with a local Host and no forwarding header. */
  local: boolean;
  /** The request presented the access key (not merely loopback trust): a person's client. */
  keyed: boolean;
}

/** One API route: where it lives, what body it takes, and what it answers. */
export interface Route<B = unknown, Q = unknown, P extends string = string> {
  method: Method;
  path: P;
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
  handler: (ctx: RouteContext<B, Q, P>) => Reply | undefined | Promise<Reply | undefined>;
}

/** Lets a route module keep its types (body, query, the params its path names) while the table holds `Route`. */
export function route<B = undefined, Q = undefined, const P extends string = string>(
  r: Route<B, Q, P>,
): Route {
  return r as unknown as Route;
}
