import type { paths } from './api-schema';
import { Store } from './store';

/** An error answer of the API: `{error: {code, message, details?}}`, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/**
 * A path parameter (ids, and names such as an MCP prompt's, up to the 256 characters the server
 * takes): percent-encoded, nothing in it can leave its segment; a dot segment (`.`, `..`), which
 * would, and control characters are refused.
 */
const ID = /^(?!\.\.?$)[^\u0000-\u001f\u007f]{1,256}$/;
/** A session id as the server makes it. */
export const SESSION_ID = /^s_[a-z0-9]{21}$/;

/** Whether a value can be an id in an API path (else `api` and `urlOf` refuse it). */
export const isId = (value: string): boolean => ID.test(value);

/** Set when any call answers 401: the app then shows the key prompt. */
export const authNeeded = new Store(false);

async function parse(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function failure(res: Response, body: unknown): ApiError {
  const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)
    ?.error;
  if (res.status === 401) authNeeded.set(true);
  return new ApiError(
    res.status,
    e?.code ?? `http_${res.status}`,
    e?.message ?? `The server answered ${res.status} ${res.statusText}.`,
    e?.details,
  );
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** The operation behind a method at a path of the API document (undefined where it has none). */
type Op<M extends Method, P extends keyof paths> = paths[P][Lowercase<M>];
/** The API's paths that take this method, as the document writes them: `/api/sessions/{id}`. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: Op<M, P> extends { responses: object } ? P : never;
}[keyof paths];

type Success = 200 | 201 | 202 | 204;
/** A 2xx answer's JSON body; unknown where it has none (a file, an empty 204). */
type JsonOf<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: object }
    ? never // another media type only (an SSE stream): not what `api` reads
    : unknown;
type AnswerOf<O> = O extends { responses: infer Rs }
  ? { [S in keyof Rs & Success]: JsonOf<Rs[S]> }[keyof Rs & Success]
  : never;
/** What a route answers on success: `Answer<'GET', '/api/sessions'>`. */
export type Answer<M extends Method, P extends PathOf<M>> = AnswerOf<Op<M, P>>;

/** An operation's JSON request body; never when it takes none (`requestBody?: never`). */
type JsonBody<O> = O extends { requestBody?: infer RB }
  ? [NonNullable<RB>] extends [never]
    ? never
    : NonNullable<RB> extends { content: { 'application/json': infer B } }
      ? B
      : never
  : never;
/** The JSON request body a route takes. */
export type BodyOf<M extends Method, P extends PathOf<M>> = JsonBody<Op<M, P>>;

/** A query as the document types it (strings), where a free-form string may be given as a number. */
type QueryOf<Q> = {
  [K in keyof Q]: string extends Q[K] ? Q[K] | number : Q[K];
};
/** Path parameters, query and body, each present (and required) as the route declares it. */
type Init<O> = (O extends { parameters: { path: infer PP } }
  ? { params: PP }
  : { params?: never }) &
  (O extends { parameters: { query: infer Q } }
    ? { query: QueryOf<Q> }
    : O extends { parameters: { query?: infer Q } }
      ? { query?: QueryOf<Q> }
      : { query?: never }) &
  ([JsonBody<O>] extends [never]
    ? { body?: never }
    : O extends { requestBody: object }
      ? { body: JsonBody<O> }
      : { body?: JsonBody<O> });
/** What `api` takes at run time: the types above decide which parts a route needs. */
interface RawInit {
  params?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}
/** `init` may be left out when nothing in it is required. */
type InitArg<O> = Record<string, never> extends Init<O> ? [init?: Init<O>] : [init: Init<O>];

/**
 * The one way to put ids into an API path: a path of the document (`/api/sessions/{id}`) and its
 * parameters. Every value must look like an id (else it throws before any request) and is
 * percent-encoded, so an id from the address or a model's link can never walk to another route.
 * The query's defined values follow. For links (a download, an export); calls go through `api`.
 */
export const urlOf = (
  template: keyof paths,
  params?: RawInit['params'],
  query?: RawInit['query'],
): string => fill(template, params, query);

function fill(template: string, params: RawInit['params'] = {}, query: RawInit['query'] = {}) {
  const path = template.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
    const id = params[name];
    if (id === undefined || !ID.test(id))
      throw new ApiError(400, 'bad_id', `"${String(id).slice(0, 80)}" is not a valid id.`);
    return encodeURIComponent(id);
  });
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  return qs ? `${path}?${qs}` : path;
}

/**
 * One JSON call to the API, typed by the document (web/src/lib/api-schema.d.ts):
 * `api('PATCH', '/api/sessions/{id}', { params: { id }, body: { title } })` takes the route's
 * body and answers its declared answer. Throws ApiError on a non-2xx answer or when the server
 * cannot be reached.
 */
export function api<M extends Method, P extends PathOf<M>>(
  method: M,
  path: P,
  ...init: InitArg<Op<M, P>>
): Promise<Answer<M, P>>;
export async function api(method: Method, path: string, init?: unknown): Promise<unknown> {
  // The overload above checked init against the route; here it is only what it is at run time.
  const i = (init ?? {}) as RawInit;
  const url = fill(path, i.params, i.query);
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers:
        i.body === undefined
          ? { Accept: 'application/json' }
          : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: i.body === undefined ? undefined : JSON.stringify(i.body),
    });
  } catch (err) {
    throw new ApiError(0, 'network', 'The server cannot be reached right now.');
  }
  const data = await parse(res);
  if (!res.ok) throw failure(res, data);
  // The server checks its answers against the same schemas (SVC_CHECK_RESPONSES in tests).
  return data;
}

/** A file as POST /api/upload stored it. */
export type Uploaded = Answer<'POST', '/api/upload'>['files'][number];

/** POSTs a multipart/form-data body (files and fields); throws ApiError like `api`. */
export function postForm<P extends PathOf<'POST'>>(
  path: P,
  form: FormData,
): Promise<Answer<'POST', P>>;
export async function postForm(url: string, form: FormData): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      body: form,
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    });
  } catch {
    throw new ApiError(0, 'network', 'The upload could not reach the server.');
  }
  const data = await parse(res);
  if (!res.ok) throw failure(res, data);
  return data;
}

/** Uploads files as multipart/form-data (parts named "file"). */
export async function upload(files: File[]): Promise<Uploaded[]> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  return (await postForm('/api/upload', form)).files;
}

/** The server refused because the call answers for the person or widens the agent's rights: the key is needed, even on this machine. */
export const needsKey = (err: unknown): boolean =>
  err instanceof ApiError && err.code === 'key_required';

/**
 * Trades the access key for the HttpOnly cookie (the same `/?access_key=` exchange the key prompt
 * uses) without leaving the page; whether it was right shows in the next call.
 */
export async function unlock(key: string): Promise<void> {
  try {
    await fetch(`/?access_key=${encodeURIComponent(key)}`, {
      credentials: 'same-origin',
      redirect: 'manual',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network', 'The server cannot be reached right now.');
  }
}

/** A message a person can act on, for any thrown value. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
