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

/** Ids the server makes or accepts (sessions, approvals, trash items, model entries…): nothing that can leave a path segment. */
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** A session id as the server makes it. */
export const SESSION_ID = /^s_[a-z0-9]{21}$/;

/**
 * The one way to put ids into an API path: `path\`/api/sessions/${id}/goal\``. Every value must
 * look like an id (else it throws before any request) and is percent-encoded, so an id from the
 * address or a model's link can never walk to another route.
 */
export function path(strings: TemplateStringsArray, ...ids: string[]): string {
  let out = strings[0]!;
  ids.forEach((id, i) => {
    if (!ID.test(id)) throw new ApiError(400, 'bad_id', `"${id.slice(0, 80)}" is not a valid id.`);
    out += encodeURIComponent(id) + strings[i + 1]!;
  });
  return out;
}

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

/** One JSON call to the API; throws ApiError on a non-2xx answer or when the server cannot be reached. */
export async function api<T = any>(method: string, url: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { Accept: 'application/json' }
          : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, 'network', 'The server cannot be reached right now.');
  }
  const data = await parse(res);
  if (!res.ok) throw failure(res, data);
  return data as T;
}

export const get = <T = any>(url: string) => api<T>('GET', url);
export const post = <T = any>(url: string, body: unknown = {}) => api<T>('POST', url, body);

export interface Uploaded {
  name: string;
  original_name: string;
  size: number;
  mime: string;
  url: string;
}

/** POSTs a multipart/form-data body (files and fields); throws ApiError like `api`. */
export async function postForm<T = any>(url: string, form: FormData): Promise<T> {
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
  return data as T;
}

/** Uploads files as multipart/form-data (parts named "file"). */
export async function upload(files: File[]): Promise<Uploaded[]> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  return (await postForm<{ files: Uploaded[] }>('/api/upload', form)).files;
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
