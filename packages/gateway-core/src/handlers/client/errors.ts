import { ErrorCode, PorticoError } from '../../errors.ts';

/** What went wrong with the upstream, in the words logs and error pages use. */
export type UpstreamFailure =
  /** No connection: refused, unreachable, no such host. */
  | 'connect'
  /** The TLS handshake failed: untrusted certificate, wrong host name, no common protocol. */
  | 'tls'
  /** No connection, or no answer, within the configured time. */
  | 'timeout'
  /** The connection broke, or the upstream answered with something that is not HTTP. */
  | 'protocol'
  /** The client went away, and the upstream request with it. */
  | 'aborted'
  /** The request could not be sent as it was: a header a filter or an expression set is not valid. */
  | 'request';

/**
 * The upstream could not be reached or did not answer in time (`PORTICO_E_UPSTREAM`).
 * `upstreamStatus` is the status a gateway answers with for it: 504 for a timeout, 502 otherwise.
 * The original error is `details.cause` (and the standard `cause`).
 */
export class UpstreamError extends PorticoError {
  readonly upstreamStatus: 502 | 504;
  readonly failure: UpstreamFailure;
  /** `scheme://host:port` of the upstream. */
  readonly origin: string;

  constructor(message: string, init: { failure: UpstreamFailure; origin: string; cause: unknown }) {
    super(ErrorCode.UPSTREAM, message, { cause: init.cause, text: init.origin });
    this.name = 'UpstreamError';
    this.failure = init.failure;
    this.origin = init.origin;
    this.upstreamStatus = init.failure === 'timeout' ? 504 : 502;
  }

  get timeout(): boolean {
    return this.failure === 'timeout';
  }
}

export function isUpstreamError(value: unknown): value is UpstreamError {
  return value instanceof UpstreamError;
}

/** The error code of an error, or of the first of an AggregateError (Happy Eyeballs connects). */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const first = (error as { errors?: unknown[] } | null)?.errors?.[0];
  return first === undefined ? undefined : errorCode(first);
}

const TIMEOUTS = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);
const CONNECT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_PRX_CONN',
]);
const ABORTED = new Set(['UND_ERR_ABORTED', 'UND_ERR_ABORT', 'ABORT_ERR']);

export function classify(error: unknown): UpstreamFailure {
  const code = errorCode(error) ?? '';
  if (code === ErrorCode.HEADER) return 'request';
  if (TIMEOUTS.has(code)) return 'timeout';
  if (ABORTED.has(code) || (error as Error | null)?.name === 'AbortError') return 'aborted';
  if (CONNECT.has(code)) return 'connect';
  // Certificate checks (DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE,
  // ERR_TLS_CERT_ALTNAME_INVALID...) and OpenSSL's own errors (ERR_SSL_*, library 'SSL routines').
  if (
    /CERT|SSL|TLS|VERIFY|SIGNATURE/.test(code) ||
    /SSL/.test(String((error as { library?: unknown } | null)?.library))
  ) {
    return 'tls';
  }
  return 'protocol';
}

/**
 * Connection failures that happen before a single byte of the request was written, and that a
 * new attempt may not meet again: a refused or unreachable connection, a transient DNS failure.
 * A timeout is not among them (waiting as long again is rarely what anyone wants), nor a TLS
 * failure (it would fail the same way), nor a broken connection (bytes may have been sent).
 */
const RETRYABLE = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);

export function isRetryableConnectFailure(error: unknown): boolean {
  return RETRYABLE.has(errorCode(error) ?? '');
}

export interface FailureContext {
  origin: string;
  /** For the timeout wording. */
  connectionTimeout: string;
  soTimeout: string;
}

/** `aborted` says the client went away, whatever error undici reported for it. */
export function upstreamError(error: unknown, where: FailureContext, aborted = false): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const failure = aborted ? 'aborted' : classify(error);
  const code = errorCode(error);
  // An AggregateError (every address of a host refused) has an empty message but a code.
  const reason = (error instanceof Error && error.message) || code || String(error);
  const { origin } = where;
  let message: string;
  switch (failure) {
    case 'timeout':
      message =
        code === 'UND_ERR_CONNECT_TIMEOUT'
          ? `timeout: no connection to ${origin} within ${where.connectionTimeout}`
          : `timeout: ${origin} did not answer within ${where.soTimeout}`;
      break;
    case 'connect':
      message = `cannot connect to ${origin}: ${reason}`;
      break;
    case 'tls':
      message = `TLS handshake with ${origin} failed: ${reason}`;
      break;
    case 'aborted':
      message = `the request to ${origin} was aborted: ${reason}`;
      break;
    case 'request':
      message = `the request to ${origin} was not sent: ${reason}`;
      break;
    default:
      message = `the request to ${origin} failed: ${reason}`;
  }
  return new UpstreamError(message, { failure, origin, cause: error });
}
