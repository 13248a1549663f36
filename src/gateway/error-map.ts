import { diskFullMessage, isDiskFull } from '../shared/disk-full.js';
import { ApiError, isErrorCode, messageOf, refusalOf } from '../shared/errors.js';
import { log } from '../shared/log.js';
import { resolvePaths } from '../shared/paths.js';
import { IpcCallError } from '../shared/protocol/endpoint.js';

/**
 * Any failure as the error a client sees, the same over HTTP, SSE and /ws: an ApiError as it is;
 * another process's refusal keeps its code (a drain is a 503 with Retry-After); a full disk is a
 * 507; anything else is logged here, once, and answered as `internal` without its details.
 */
export function apiErrorOf(err: unknown, retryAfterS = 5): ApiError {
  const refusal = refusalOf(err);
  if (refusal) return refusal;
  if (err instanceof IpcCallError) {
    if (err.code === 'draining')
      return new ApiError('draining', err.message, undefined, {
        'Retry-After': String(retryAfterS),
      });
    // Errors another process raised for the client (conflict, not_found, …) keep their code.
    if (isErrorCode(err.code) && err.code !== 'internal')
      return new ApiError(err.code, err.message, err.details);
    return new ApiError(
      'unavailable',
      `The server could not finish this request: ${err.message}. Try again.`,
    );
  }
  if (isDiskFull(err)) {
    log.warn('a request could not be saved: the disk is full', { error: messageOf(err) });
    return new ApiError('insufficient_storage', diskFullMessage(resolvePaths().home));
  }
  log.error('request failed', { error: messageOf(err) });
  return new ApiError(
    'internal',
    'Something went wrong on the server; the svc log has the details.',
  );
}
