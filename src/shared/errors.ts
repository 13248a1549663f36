import type { z } from 'zod';

/** The error codes of the HTTP API (docs/api.md#errors), with the status each one answers. */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden_origin: 403,
  forbidden_host: 403,
  /** A request that answers for the person (an approval) or widens the agent's rights came without the key. */
  key_required: 403,
  not_found: 404,
  no_such_route: 404,
  method_not_allowed: 405,
  conflict: 409,
  turn_in_progress: 409,
  too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  headers_too_large: 431,
  /** The disk svc writes to is full (SQLITE_FULL, ENOSPC). */
  insufficient_storage: 507,
  internal: 500,
  /** A messaging platform refused or failed a delivery; the message says what it answered. */
  platform_error: 502,
  unavailable: 503,
  draining: 503,
  timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(errorStatus, code);

/** An error meant for the API client: a code, a sentence a person can act on, optional details. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = errorStatus[code];
  }

  toBody(): { error: { code: ErrorCode; message: string; details?: unknown } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

/**
 * What the store refuses, in its own words: it does not know about HTTP, IPC or tools. Each edge
 * maps the kind (the gateway to a status, IPC to a code, a tool to its answer), so one refusal
 * reads the same wherever the store was called from.
 */
export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export type StoreErrorKind = 'not_found' | 'conflict' | 'invalid';

const storeErrorCode: Record<StoreErrorKind, ErrorCode> = {
  not_found: 'not_found',
  conflict: 'conflict',
  invalid: 'invalid_request',
};

/** Codes only IPC raises: a routing refusal or a broken peer, never meant for a client as such. */
const ipcOnlyCodes = ['forbidden', 'no_route', 'no_handler', 'bad_response'] as const;
/** Every code an IPC error may carry: the client-facing ones cross unchanged. */
export const ipcErrorCodes = [
  ...(Object.keys(errorStatus) as ErrorCode[]),
  ...ipcOnlyCodes,
] as const;
export type IpcErrorCode = ErrorCode | (typeof ipcOnlyCodes)[number];

/**
 * A refusal meant for whoever asked (an ApiError or a StoreError) as a client-facing error, or
 * undefined for anything else (a bug, a crash: the caller decides how to hide it).
 */
export function refusalOf(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError)
    return new ApiError(storeErrorCode[err.kind], err.message, err.details);
  return undefined;
}

/** Turns anything thrown into a message, never a stack trace. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** zod's own sentence for an issue it wrote itself (not one a schema gave), which says it in types. */
const zodWording = /^(Invalid input|Invalid option|Too small|Too big|Invalid key in record)/;

const typeWords: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
};

/** A bound in words: `at least 1 character`, `at most 20 entries`, `at least 1` (a number). */
function bound(
  origin: string,
  n: number | bigint,
  side: 'least' | 'most',
  inclusive: boolean | undefined,
): string {
  const unit =
    origin === 'string' ? 'character' : origin === 'array' || origin === 'set' ? 'entry' : '';
  if (!unit)
    return inclusive === false
      ? `${side === 'least' ? 'more' : 'less'} than ${n}`
      : `at ${side} ${n}`;
  const plural = n === 1 || n === 1n ? unit : unit === 'entry' ? 'entries' : `${unit}s`;
  return `at ${side} ${n} ${plural}`;
}

/** zod's own wording of an issue in plain words, or undefined when a schema gave its own message. */
function plainWords(issue: z.core.$ZodIssue): string | undefined {
  if (!zodWording.test(issue.message)) return undefined;
  switch (issue.code) {
    case 'invalid_type':
      if (/received undefined$/.test(issue.message)) return 'required';
      return `must be ${typeWords[issue.expected] ?? issue.expected}`;
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      return `must be ${bound(issue.origin, issue.minimum, 'least', issue.inclusive)}`;
    case 'too_big':
      return `must be ${bound(issue.origin, issue.maximum, 'most', issue.inclusive)}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(', ')}`;
    default:
      return undefined;
  }
}

/** One zod issue as a person reads it: unknown keys by name, a record's refused key by its own reason, zod's type talk in words. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
  // A record's key refused by its schema: the key's own message says why, not "Invalid key".
  if (issue.code === 'invalid_key' && issue.issues[0]) return issueMessage(issue.issues[0]);
  return plainWords(issue) ?? issue.message;
}

/**
 * The words a form shows beside each of its fields, by the field's key: a 400 about that field
 * names it so (the key stays in `details` for API clients).
 */
export type FieldLabels = Readonly<Record<string, string>>;

/**
 * Where an issue is, for a person: the field's label when `labels` has one, then an entry of a
 * list by its number (`Who may talk to the agent, entry 2`) or a key of an object by its name;
 * else the dotted path.
 */
export function issuePlace(path: readonly PropertyKey[], labels?: FieldLabels): string {
  const [first, ...rest] = path;
  const label =
    typeof first === 'string' && labels && Object.hasOwn(labels, first) ? labels[first] : undefined;
  if (label === undefined) return path.map(String).join('.');
  return [
    label,
    ...rest.map((k) => (typeof k === 'number' ? `entry ${k + 1}` : JSON.stringify(String(k)))),
  ].join(', ');
}

/** One issue as `path: message`, the path dotted (`whole` when the issue is about the top level). */
export function issueLine(issue: z.core.$ZodIssue, whole = '(top level)'): string {
  const at = issue.path.length > 0 ? issue.path.map(String).join('.') : whole;
  return `${at}: ${issueMessage(issue)}`;
}

/** The first issue of an error as one line (issueLine), or `fallback` when there is none. */
export function firstIssue(err: z.ZodError, whole?: string, fallback = 'invalid'): string {
  const issue = err.issues[0];
  return issue ? issueLine(issue, whole) : fallback;
}

/**
 * Every issue as `{path, message}` (the `details` of a 400), paths under `prefix` when given;
 * with `labels`, an issue about a labelled field also has the `label` a person sees.
 */
export function issueDetails(
  err: z.ZodError,
  prefix = '',
  labels?: FieldLabels,
): Array<{ path: string; message: string; label?: string }> {
  const under = prefix ? prefix.split('.') : [];
  return err.issues.map((i) => {
    const path = [...under, ...i.path];
    const key = path[0];
    const labelled = labels !== undefined && typeof key === 'string' && Object.hasOwn(labels, key);
    return {
      path: path.map(String).join('.'),
      message: issueMessage(i),
      ...(labelled ? { label: issuePlace(path, labels) } : {}),
    };
  });
}

/**
 * The 400 for input a schema refused: the sentence names the first bad field (`Invalid request
 * body: model: required.`), by its label when `labels` has one (`Invalid Discord configuration:
 * Bot token: required.`); the details list them all with their keys. `hint` is appended to
 * unknown-field lines.
 */
export function invalidInput(
  err: z.ZodError,
  opts: { what?: string; prefix?: string; hint?: string; labels?: FieldLabels } = {},
): ApiError {
  const details = issueDetails(err, opts.prefix, opts.labels).map((d, n) =>
    opts.hint && err.issues[n]?.code === 'unrecognized_keys'
      ? { ...d, message: `${d.message} (${opts.hint})` }
      : d,
  );
  const first = details[0];
  return new ApiError(
    'invalid_request',
    `Invalid ${opts.what ?? 'request body'}: ${first ? `${first.label ?? (first.path || '(body)')}: ${first.message.replace(/\.+$/, '')}` : 'does not match the schema'}.`,
    details,
  );
}
