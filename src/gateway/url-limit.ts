import { ApiError } from '../shared/errors.js';

/**
 * The longest request target (path and query) svc serves; a longer one is answered 414
 * `uri_too_long` on both engines. Below uWebSockets.js's own bounds where it can answer at all:
 * v20.30 takes a request head only whole in one read (up to 512 KB) or, when it comes in pieces,
 * up to 4 KB, and closes the connection without a word past either (docs/api.md#errors).
 */
export const MAX_URL_BYTES = 8192;

export function uriTooLong(): ApiError {
  return new ApiError(
    'uri_too_long',
    `The request URL is longer than ${MAX_URL_BYTES} bytes; send long values (a search, a list of ids) in a POST body instead.`,
  );
}

/** A request head over node:http's maxHeaderSize: a request line past the limit is a long URL, else too many header bytes. */
export function headOverflow(raw: Buffer | undefined): ApiError {
  const head = raw ? raw.subarray(0, MAX_URL_BYTES + 64).toString('latin1') : '';
  const eol = head.indexOf('\r\n');
  if (/^[A-Z]+ \S/.test(head) && (eol < 0 || eol > MAX_URL_BYTES)) return uriTooLong();
  return new ApiError(
    'headers_too_large',
    'The request headers are too large (cookies included); send fewer or shorter headers.',
  );
}
