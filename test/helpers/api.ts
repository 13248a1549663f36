import { http } from './server.js';

export interface ApiResult {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One JSON request to a local server (loopback, so no key is needed), or with the key when given:
 * answering approvals and widening a session need it even on loopback.
 */
export async function api(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  opts: { key?: string } = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = opts.key ? { 'X-Access-Key': opts.key } : {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await http({
    port,
    method,
    path,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, body: res.text ? res.json() : undefined, headers: res.headers };
}
