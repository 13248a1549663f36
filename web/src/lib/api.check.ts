import { api, urlOf } from './api';

/**
 * Compile-time checks of the typed API helper, run by the Web UI's type check (npm run build):
 * every line under a @ts-expect-error must fail to compile, so a helper that stopped checking
 * paths, parameters, bodies or answers against the document fails the build. Never called, and
 * nothing imports it: it is not in the bundle.
 */
export function apiChecks(id: string): void {
  // @ts-expect-error: no such route
  void api('GET', '/api/nothing');
  // @ts-expect-error: the route takes no DELETE
  void api('DELETE', '/api/sessions');
  // @ts-expect-error: its path parameter is required
  void api('GET', '/api/sessions/{id}');
  // @ts-expect-error: a path parameter of another name
  void api('GET', '/api/sessions/{id}', { params: { session: id } });
  // @ts-expect-error: title is a string
  void api('PATCH', '/api/sessions/{id}', { params: { id }, body: { title: 1 } });
  // @ts-expect-error: reasoning_effort is one of the values the API takes
  void api('PATCH', '/api/sessions/{id}', { params: { id }, body: { reasoning_effort: 'huge' } });
  // @ts-expect-error: a body the route requires (the decision)
  void api('POST', '/api/sessions/{id}/approvals/{approval_id}', {
    params: { id, approval_id: id },
  });
  // @ts-expect-error: a GET takes no body
  void api('GET', '/api/sessions', { body: {} });
  // @ts-expect-error: a query parameter the route does not take
  void api('GET', '/api/sessions', { query: { page: 2 } });
  // @ts-expect-error: the answer has no field "sessions" (it is a page: items, next_cursor)
  void api('GET', '/api/sessions').then((r) => r.sessions);
  // @ts-expect-error: a link to a path the document does not have
  void urlOf('/api/sessions/{id}/download', { id });
}
