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
  const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
  if (res.status === 401) authNeeded.set(true);
  return new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `The server answered ${res.status} ${res.statusText}.`, e?.details);
}

/** One JSON call to the API; throws ApiError on a non-2xx answer or when the server cannot be reached. */
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, 'network', 'The server cannot be reached right now.');
  }
  const data = await parse(res);
  if (!res.ok) throw failure(res, data);
  return data as T;
}

export const get = <T = any>(path: string) => api<T>('GET', path);
export const post = <T = any>(path: string, body: unknown = {}) => api<T>('POST', path, body);

export interface Uploaded {
  name: string;
  original_name: string;
  size: number;
  mime: string;
  url: string;
}

/** Uploads files as multipart/form-data (parts named "file"). */
export async function upload(files: File[]): Promise<Uploaded[]> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  let res: Response;
  try {
    res = await fetch('/api/upload', { method: 'POST', body: form, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', 'The upload could not reach the server.');
  }
  const data = await parse(res);
  if (!res.ok) throw failure(res, data);
  return (data as { files: Uploaded[] }).files;
}

/** A message a person can act on, for any thrown value. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
