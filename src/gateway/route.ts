import type { z } from 'zod';
import type { ApiError, FieldLabels } from '../shared/errors.js';
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

/** The statuses a route answers with when all went well: 2xx, or 303 sending a browser on. */
export type SuccessStatus = 200 | 201 | 202 | 204 | 303;

/** Another 2xx answer of a route: its own body schema, or a stream (SSE) named by its content type. */
export interface OtherAnswer<O = unknown> {
  description: string;
  schema?: z.ZodType<O>;
  /** Not JSON: the content type of a streamed answer (text/event-stream). */
  contentType?: string;
}

/**
 * A reply whose JSON body is typed by the route's `response` schema (a string is JSON already
 * written), or an error's body sent with its status (a streamed upload refused before its end).
 */
export type TypedReply<R> = Omit<Reply, 'body'> & {
  body?: R | ReturnType<ApiError['toBody']> | string | Uint8Array;
};

/** One API route: where it lives, what body it takes, and what it answers. */
export interface Route<
  B = unknown,
  Q = unknown,
  P extends string = string,
  R = unknown,
  O = never,
> {
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
  /**
   * For a body or query a Web UI form sends: what it is (`Invalid <what>: …`) and the label the
   * form shows for each field, so a 400 names the field as the person saw it.
   */
  fields?: { what: string; labels?: FieldLabels };
  /** The body arrives as a BodyStream instead of parsed JSON (uploads). */
  stream?: boolean;
  /**
   * The body of the success answer: the document's schema for it and the type of the handler's
   * reply; with SVC_CHECK_RESPONSES=1 (tests) each JSON answer is checked against it. null: the
   * answer has no JSON body (204, a file). Required: every route says what it answers.
   */
  response: z.ZodType<R> | null;
  /** The success status (200 when not given). */
  status?: SuccessStatus;
  /** The content type of a success answer that is not JSON (a file), for the document; or its several types. */
  produces?: string | readonly string[];
  /** Error statuses this route answers beyond those its shape implies (409, 502, 504, …). */
  errors?: number[];
  /**
   * Error statuses the route's own failures answer as an HTML page, for a browser on its way
   * back (the OAuth callback), each with what the page says; the gateway's refusals stay JSON.
   */
  errorPages?: Partial<Record<number, string>>;
  /**
   * The request body's document when `body` cannot say it (multipart uploads, bodies checked by
   * the handler): an OpenAPI requestBody, built when the document is, not when the gateway loads.
   */
  requestBody?: () => Record<string, unknown>;
  /** The route's other 2xx answers (202 of ?wait=false, an SSE stream), for the document and the check. */
  others?: Partial<Record<SuccessStatus, OtherAnswer<O>>>;
  /** Answer `undefined` when the handler wrote the response itself through `responder`. */
  handler: (
    ctx: RouteContext<B, Q, P>,
  ) => TypedReply<NoInfer<R | O>> | undefined | Promise<TypedReply<NoInfer<R | O>> | undefined>;
}

/** Lets a route module keep its types (body, query, the params its path names) while the table holds `Route`. */
export function route<
  B = undefined,
  Q = undefined,
  const P extends string = string,
  R = unknown,
  O = never,
>(r: Route<B, Q, P, R, O>): Route {
  return r as unknown as Route;
}
