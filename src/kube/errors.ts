// Typed errors of the REST client. Messages carry the server's Status message, the verb and the
// path; never request bodies, headers or credentials.

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A `metav1.Status` as the apiserver returns it on failure. */
export interface Status {
  kind?: 'Status';
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: number;
  /** `metav1.StatusReason`, e.g. NotFound, Conflict, AlreadyExists, Expired. */
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /** From the Retry-After header or `details.retryAfterSeconds`. */
  readonly retryAfterSeconds: number | undefined;
  readonly method: string;
  readonly path: string;

  constructor(init: { code: number; reason?: string; message?: string; details?: StatusDetails; retryAfterSeconds?: number; method: string; path: string }) {
    const reason = init.reason || reasonForCode(init.code);
    super(`${init.method} ${init.path}: ${init.code} ${reason}${init.message ? `: ${init.message}` : ''}`);
    this.code = init.code;
    this.reason = reason;
    this.details = init.details;
    const fromDetails: unknown = init.details?.retryAfterSeconds;
    // The server's word on when to retry counts only as a sane number of seconds.
    this.retryAfterSeconds = init.retryAfterSeconds ?? (typeof fromDetails === 'number' && Number.isFinite(fromDetails) && fromDetails >= 0 ? fromDetails : undefined);
    this.method = init.method;
    this.path = init.path;
  }

  /**
   * Builds an error from a Status object (an HTTP error body or an in-stream watch ERROR). The
   * server chooses the Status, and a peer chooses how long its words are: the reason and message
   * are clipped, and fields of the wrong type are ignored.
   */
  static fromStatus(status: Status, fallbackCode: number, method: string, path: string, retryAfterSeconds?: number): ApiError {
    const { code } = status;
    return new ApiError({
      code: typeof code === 'number' && Number.isSafeInteger(code) && code > 0 ? code : fallbackCode,
      reason: clip(status.reason, 64),
      message: clip(status.message, 1024),
      details: detailsOf(status.details),
      retryAfterSeconds,
      method,
      path,
    });
  }
}

/**
 * Text from another cluster cut to at most `max` characters, the last of them saying how many were
 * dropped; anything but a string is dropped whole.
 */
export function clip(text: string, max: number): string;
export function clip(text: unknown, max: number): string | undefined;
export function clip(text: unknown, max: number): string | undefined {
  if (typeof text !== 'string') return undefined;
  if (text.length <= max) return text;
  // The count in the marker has at most as many digits as text.length, so the result fits.
  const keep = Math.max(0, max - marker(text.length).length);
  return text.slice(0, keep) + marker(text.length - keep);
}

const marker = (dropped: number): string => `… (${dropped} more characters)`;

const MAX_CAUSES = 16;

/** The details of a Status, well-typed fields only and every text clipped: errors are kept and logged. */
function detailsOf(d: unknown): StatusDetails | undefined {
  if (!isRecord(d)) return undefined;
  const out: StatusDetails = {};
  for (const k of ['name', 'group', 'kind', 'uid'] as const) {
    const v = clip(d[k], 253);
    if (v !== undefined) out[k] = v;
  }
  if (typeof d['retryAfterSeconds'] === 'number') out.retryAfterSeconds = d['retryAfterSeconds'];
  if (Array.isArray(d['causes'])) {
    out.causes = d['causes'].slice(0, MAX_CAUSES).filter(isRecord).map((c) => {
      const cause: StatusCause = {};
      for (const k of ['reason', 'message', 'field'] as const) {
        const v = clip(c[k], k === 'message' ? 1024 : 253);
        if (v !== undefined) cause[k] = v;
      }
      return cause;
    });
  }
  return out;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

// Like apimachinery's reasonForError fallbacks when the body is not a Status.
function reasonForCode(code: number): string {
  switch (code) {
    case 400: return 'BadRequest';
    case 401: return 'Unauthorized';
    case 403: return 'Forbidden';
    case 404: return 'NotFound';
    case 405: return 'MethodNotAllowed';
    case 406: return 'NotAcceptable';
    case 409: return 'Conflict';
    case 410: return 'Gone';
    case 415: return 'UnsupportedMediaType';
    case 422: return 'Invalid';
    case 429: return 'TooManyRequests';
    case 500: return 'InternalError';
    case 503: return 'ServiceUnavailable';
    case 504: return 'Timeout';
    default: return 'Unknown';
  }
}

function apiError(err: unknown): ApiError | undefined {
  return err instanceof ApiError ? err : undefined;
}

export function isNotFound(err: unknown): boolean {
  return apiError(err)?.code === 404;
}

/** Optimistic-concurrency failure (stale resourceVersion or a precondition). */
export function isConflict(err: unknown): boolean {
  const e = apiError(err);
  return e?.code === 409 && e.reason !== 'AlreadyExists';
}

export function isAlreadyExists(err: unknown): boolean {
  return apiError(err)?.reason === 'AlreadyExists';
}

/** The resourceVersion is too old (HTTP 410 or reason Expired/Gone). */
export function isGone(err: unknown): boolean {
  const e = apiError(err);
  return e !== undefined && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone');
}

export function isForbidden(err: unknown): boolean {
  return apiError(err)?.code === 403;
}

export function isUnauthorized(err: unknown): boolean {
  return apiError(err)?.code === 401;
}

export function isInvalid(err: unknown): boolean {
  const e = apiError(err);
  return e?.code === 422 || e?.reason === 'Invalid';
}

export function isTooManyRequests(err: unknown): boolean {
  return apiError(err)?.code === 429;
}

/** Raised by a watch that saw no bytes for longer than its inactivity timeout. */
export class WatchInactivityError extends Error {
  override readonly name = 'WatchInactivityError';
}

/** A connection, or an HTTP/2 stream, that ended before its answer did. */
export class ConnectionLostError extends Error {
  override readonly name = 'ConnectionLostError';
  readonly code = 'ECONNRESET';
}

/**
 * The server refused a request before acting on it (an HTTP/2 stream refused, or above the last
 * stream of a GOAWAY): it may be sent again, whatever its method.
 */
export class RequestNotProcessedError extends Error {
  override readonly name = 'RequestNotProcessedError';
  /** The code of what stopped it (ECONNREFUSED, say), or of a refused stream. */
  readonly code: string;

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    this.code = typeof code === 'string' ? code : 'ERR_HTTP2_REFUSED_STREAM';
  }
}

export function isNotProcessed(err: unknown): boolean {
  return err instanceof RequestNotProcessedError;
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  // HTTP/2: a stream reset or refused, a session that went away or failed under its streams.
  'ERR_HTTP2_REFUSED_STREAM',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** A dropped or refused connection, where the request may be retried if it is idempotent. */
export function isNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined && NETWORK_CODES.has(code)) || err.message === 'socket hang up';
}
