import { z } from 'zod';
import { ApiError } from '../shared/errors.js';

/** Part headers past this size are an attack or a broken client, not a file. */
export const MAX_PART_HEADER_BYTES = 16 * 1024;

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

export interface PartInfo {
  /** The form field name from Content-Disposition. */
  name: string;
  /** The file name the client gave (filename*= wins over filename=), as sent: not sanitised. */
  filename: string | undefined;
  /** The part's media type without parameters, lowercased; undefined when absent or malformed. */
  contentType: string | undefined;
}

export interface Part extends PartInfo {
  /** The part's bytes as they arrive; read it to the end (or not at all) before asking for the next part. */
  body: AsyncIterable<Buffer>;
}

const malformed = (why: string) =>
  new ApiError('invalid_request', `The multipart body is malformed: ${why}.`);

// RFC 2046: 1-70 characters from a restricted set, not ending in a space.
const boundarySchema = z
  .string()
  .regex(
    /^[0-9A-Za-z'()+_,./:=? -]{0,69}[0-9A-Za-z'()+_,./:=?-]$/,
    "a boundary is 1-70 letters, digits or '()+_,-./:=? and may not end with a space",
  );

/** The boundary of a `multipart/form-data` Content-Type; undefined when the type is something else. */
export function multipartBoundary(
  contentType: string | undefined,
): { boundary: string } | { error: string } | undefined {
  if (!contentType) return undefined;
  const [type, ...rest] = splitParams(contentType);
  if (type?.toLowerCase() !== 'multipart/form-data') return undefined;
  const raw = rest.map(parseParam).find((p) => p?.key === 'boundary')?.value;
  if (raw === undefined)
    return {
      error: 'the Content-Type has no boundary parameter (multipart/form-data; boundary=...)',
    };
  const parsed = boundarySchema.safeParse(raw);
  return parsed.success
    ? { boundary: parsed.data }
    : { error: `the boundary is invalid: ${parsed.error.issues[0]?.message ?? 'bad characters'}` };
}

/**
 * Reads a multipart/form-data body chunk by chunk and yields its parts; each part's body is
 * itself streamed, so a file goes to disk as it arrives and the body is never held whole.
 * Throws ApiError(invalid_request) on a malformed body and passes on errors of the source.
 */
export async function* parseMultipart(
  source: AsyncIterable<Buffer>,
  boundary: string,
): AsyncGenerator<Part> {
  // A CRLF put in front lets the first delimiter be found like every later one ("\r\n--b").
  const delim = Buffer.from(`\r\n--${boundary}`);
  const it = source[Symbol.asyncIterator]();
  let buf: Buffer = CRLF;
  let eof = false;
  const next = async (): Promise<Buffer | undefined> => {
    if (eof) return undefined;
    const r = await it.next();
    if (r.done) eof = true;
    return r.done ? undefined : r.value;
  };
  const fill = async (): Promise<boolean> => {
    const chunk = await next();
    if (chunk) buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    return chunk !== undefined;
  };

  // Preamble: discard up to the first delimiter, keeping a tail that may hold its start.
  for (;;) {
    const i = buf.indexOf(delim);
    if (i >= 0) {
      buf = buf.subarray(i + delim.length);
      break;
    }
    buf = buf.subarray(Math.max(0, buf.length - delim.length + 1));
    if (!(await fill()))
      throw malformed(`the boundary "${boundary}" from the Content-Type never occurs in the body`);
  }

  for (;;) {
    // After a delimiter: "--" ends the body; otherwise optional whitespace, then CRLF.
    while (buf.length < 2 && (await fill()));
    if (buf.length >= 2 && buf[0] === 0x2d && buf[1] === 0x2d) return; // the epilogue is ignored
    let eol: number;
    while ((eol = buf.indexOf(CRLF)) < 0 && buf.length <= 256 && (await fill()));
    if (eol < 0)
      throw malformed(
        buf.length > 256
          ? 'a boundary line is followed by garbage'
          : 'the body ends without the final boundary (--' + boundary + '--)',
      );
    if (!/^[ \t]*$/.test(buf.subarray(0, eol).toString('latin1')))
      throw malformed('a boundary line is followed by garbage');
    buf = buf.subarray(eol); // keep the CRLF so an empty header block is "\r\n\r\n" too

    let end = buf.indexOf(HEADER_END);
    if (end < 0) {
      // Headers may trickle in byte by byte: collect the chunks and search only the new bytes
      // (plus 3 before them), so the work stays linear instead of rescanning a growing buffer.
      const pieces = [buf];
      let total = buf.length;
      let tail = buf.subarray(-3);
      while (end < 0) {
        if (total > MAX_PART_HEADER_BYTES)
          throw malformed(`a part's headers are larger than ${MAX_PART_HEADER_BYTES / 1024} KiB`);
        const chunk = await next();
        if (!chunk) throw malformed('the body ends inside the headers of a part');
        const window = Buffer.concat([tail, chunk]);
        const i = window.indexOf(HEADER_END);
        if (i >= 0) end = total - tail.length + i;
        pieces.push(chunk);
        total += chunk.length;
        tail = window.subarray(-3);
      }
      buf = Buffer.concat(pieces, total);
    }
    if (end > MAX_PART_HEADER_BYTES)
      throw malformed(`a part's headers are larger than ${MAX_PART_HEADER_BYTES / 1024} KiB`);
    const info = parseHeaders(buf.subarray(2, end).toString('utf8'));
    buf = buf.subarray(end + HEADER_END.length);

    let finished = false;
    async function* body(): AsyncGenerator<Buffer> {
      for (;;) {
        const i = buf.indexOf(delim);
        if (i >= 0) {
          const data = buf.subarray(0, i);
          buf = buf.subarray(i + delim.length);
          finished = true;
          if (data.length > 0) yield data;
          return;
        }
        // Everything except a tail that could be the start of a delimiter split across chunks.
        const safe = buf.length - delim.length + 1;
        if (safe > 0) {
          const data = buf.subarray(0, safe);
          buf = buf.subarray(safe);
          yield data;
        }
        if (!(await fill()))
          throw malformed(
            'the body ends inside a part, without the final boundary (--' + boundary + '--)',
          );
      }
    }
    const reader = body();
    yield { ...info, body: { [Symbol.asyncIterator]: () => reader } };
    // The consumer may skip a part (a text field): drain it to reach the next delimiter.
    if (!finished) for await (const _ of reader) void _;
    if (!finished)
      throw new Error(
        'a multipart part was abandoned half-read; the rest of the body cannot be parsed',
      );
  }
}

function parseHeaders(block: string): PartInfo {
  const headers = new Map<string, string>();
  // Obsolete line folding: a line starting with whitespace continues the previous one.
  for (const line of block
    .split('\r\n')
    .join('\n')
    .replace(/\n[ \t]+/g, ' ')
    .split('\n')) {
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0)
      throw malformed(
        `a part has a header line without a name: ${JSON.stringify(line.slice(0, 80))}`,
      );
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const disposition = headers.get('content-disposition');
  if (disposition === undefined) throw malformed('a part has no Content-Disposition header');
  const [kind, ...rest] = splitParams(disposition);
  if (kind?.toLowerCase() !== 'form-data')
    throw malformed(`a part's Content-Disposition is ${JSON.stringify(kind)}, not form-data`);
  const params = new Map<string, string>();
  for (const p of rest.map(parseParam)) if (p && !params.has(p.key)) params.set(p.key, p.value);
  const name = params.get('name');
  if (name === undefined)
    throw malformed('a part has no field name (Content-Disposition: form-data; name="...")');
  const star = params.get('filename*');
  const filename =
    (star !== undefined ? decodeExtValue(star) : undefined) ?? params.get('filename');
  const type = splitParams(headers.get('content-type') ?? '')[0]?.toLowerCase();
  return {
    name,
    filename,
    contentType: type && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : undefined,
  };
}

/** Splits `a; b=1; c="x;y"` at the semicolons outside quotes. */
function splitParams(value: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted && c === '\\' && i + 1 < value.length) {
      cur += c + value[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** `key=value` or `key="quoted value"`; keys lowercased. */
function parseParam(p: string): { key: string; value: string } | undefined {
  const eq = p.indexOf('=');
  if (eq <= 0) return undefined;
  const key = p.slice(0, eq).trim().toLowerCase();
  let value = p.slice(eq + 1).trim();
  if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
    // Browsers escape `"` as %22 and leave `\` alone (C:\path\file), so `\` escapes only `"` and `\`.
    value = value.slice(1, -1).replace(/\\(["\\])/g, '$1');
  }
  return { key, value };
}

/** RFC 5987 `charset'lang'percent-encoded`; undefined when it cannot be decoded. */
function decodeExtValue(v: string): string | undefined {
  const m = /^([A-Za-z0-9!#$&+^_`{}~-]+)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const charset = m[1]!.toLowerCase();
  const bytes: number[] = [];
  const s = m[2]!;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(s.charCodeAt(i) & 0xff);
  }
  if (charset === 'utf-8') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    } catch {
      return undefined;
    }
  }
  if (charset === 'iso-8859-1') return Buffer.from(bytes).toString('latin1');
  return undefined;
}
