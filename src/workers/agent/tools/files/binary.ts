/** How much of a file's start decides whether it is text. */
export const SNIFF_BYTES = 8 * 1024;

/**
 * True when the start of a file is not text: a NUL byte, or bytes that are not UTF-8 (a
 * multi-byte character cut by the sniff window is fine). Shared by read_file and grep.
 */
export function looksBinary(buf: Uint8Array): boolean {
  const head = buf.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  try {
    // stream: true tolerates an incomplete sequence at the very end of the window.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: head.length < buf.length });
    return false;
  } catch {
    return true;
  }
}
