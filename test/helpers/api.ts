import { http } from './server.js';

export interface ApiResult {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** One JSON request to a local server (loopback, so no key is needed). */
export async function api(
  port: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResult> {
  const res = await http({
    port,
    method,
    path,
    ...(body === undefined
      ? {}
      : {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'Content-Type': 'application/json' },
        }),
  });
  return { status: res.status, body: res.text ? res.json() : undefined, headers: res.headers };
}
