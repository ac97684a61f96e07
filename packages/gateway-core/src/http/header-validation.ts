import { ErrorCode, PorticoError } from '../errors.ts';

/**
 * The one check every header written by the gateway goes through, whichever path writes it (a
 * response, the head of an upgrade answer, a request to an upstream): a name must be an HTTP token
 * (RFC 9110 §5.1) and a value visible characters, spaces and tabs only (§5.5). A line break in a
 * value is how a header from an expression (`${request.queryParams['q'][0]}`) becomes a second
 * header, or a second response; such a field is refused whole, never cleaned up and sent.
 */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Anything but HTAB, visible ASCII, space and obs-text (the bytes Node and undici accept). */
const NOT_FIELD_TEXT = /[^\t\x20-\x7e\x80-\xff]/;

export function isHeaderName(name: string): boolean {
  return TOKEN.test(name);
}

export function isHeaderValue(value: string): boolean {
  return !NOT_FIELD_TEXT.test(value);
}

/** Why a field cannot be written, or undefined when it can. */
export function headerFieldProblem(name: string, value: string): string | undefined {
  if (!isHeaderName(name)) return `the header name ${JSON.stringify(name)} is not an HTTP token`;
  if (!isHeaderValue(value)) {
    const bad = NOT_FIELD_TEXT.exec(value)![0];
    return `the value of header ${name} holds the character U+${bad.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`;
  }
  return undefined;
}

/** A coded error for a field that cannot be written (the value itself is left out: it may be hostile). */
export function invalidHeaderError(problem: string, where: string): PorticoError {
  return new PorticoError(ErrorCode.HEADER, `${problem}; ${where} not sent`, {
    expected: 'a header name that is an HTTP token and a value without control characters',
  });
}

/**
 * Checks fields in Node's flat form `[name, value, name, value ...]`; returns the coded error of the
 * first that cannot be written.
 */
export function checkHeaderFields(raw: readonly string[], where: string): PorticoError | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const problem = headerFieldProblem(raw[i]!, raw[i + 1]!);
    if (problem !== undefined) return invalidHeaderError(problem, where);
  }
  return undefined;
}

/** A reason phrase may hold what a header value may (RFC 9112 §4). */
export function isReasonPhrase(reason: string): boolean {
  return !NOT_FIELD_TEXT.test(reason);
}

/**
 * The head of an HTTP/1.1 response written straight to a socket (an upgrade answer): status line and
 * fields, every one checked. Throws `PORTICO_E_HEADER` instead of writing anything when one is invalid.
 */
export function responseHead(status: number, reason: string, raw: readonly string[]): string {
  if (!Number.isInteger(status) || status < 100 || status > 999) {
    throw new PorticoError(ErrorCode.HEADER, `the status ${status} cannot be written`, {
      expected: 'a three-digit status',
    });
  }
  if (!isReasonPhrase(reason))
    throw invalidHeaderError('the reason phrase holds a control character', 'the response');
  const invalid = checkHeaderFields(raw, 'the response');
  if (invalid) throw invalid;
  // The space after the status is required even when the reason phrase is empty (RFC 9112 §4).
  let head = `HTTP/1.1 ${status} ${reason}\r\n`;
  for (let i = 0; i + 1 < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return `${head}\r\n`;
}
