import * as assert from 'uvu/assert';
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

/**
 * A 400 about one form field as a person reads it: the message names the field by the label its
 * form shows (`Bot token: required`) and never by its key; `details` keep the key (`path`) and
 * the label for API clients. `path` is the whole key path when the issue is inside the field.
 */
export function assertFieldError(
  r: ApiResult,
  field: { path: string; label: string },
  says: RegExp,
): void {
  const message = String(r.body?.error?.message);
  const seen = JSON.stringify(r.body);
  assert.is(r.status, 400, seen);
  assert.is(r.body.error.code, 'invalid_request', seen);
  assert.ok(message.includes(`${field.label}: `), `"${field.label}: " in ${message}`);
  assert.match(message, says);
  const key = field.path.split('.')[0]!;
  const rest = message.replaceAll(field.label, '');
  assert.not.ok(rest.includes(`${key}:`), `no "${key}:" in ${message}`);
  if (key.includes('_')) assert.not.ok(rest.includes(key), `no "${key}" in ${message}`);
  const details = r.body.error.details as Array<{ path: string; label?: string }>;
  assert.ok(
    details.some((d) => d.path === field.path && d.label === field.label),
    `details name ${field.path} as "${field.label}": ${seen}`,
  );
}
