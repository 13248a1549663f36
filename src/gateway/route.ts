import type { z } from 'zod';
import type { Reply, RequestInfo } from './http.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteContext<B> {
  req: RequestInfo;
  params: Record<string, string>;
  body: B;
  /** True for a loopback request with a local Host and no forwarding header. */
  local: boolean;
}

/** One API route: where it lives, what body it takes, and what it answers. */
export interface Route<B = unknown> {
  method: Method;
  path: string;
  summary: string;
  /** Needs no key (health and version only). */
  public?: boolean;
  /** Refused with 503 while the server drains; defaults to true for methods other than GET. */
  work?: boolean;
  body?: z.ZodType<B>;
  handler: (ctx: RouteContext<B>) => Reply | Promise<Reply>;
}

/** Lets a route module keep its body type while the table holds `Route<unknown>`. */
export function route<B = undefined>(r: Route<B>): Route<unknown> {
  return r as unknown as Route<unknown>;
}
