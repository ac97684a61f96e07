import { PorticoError } from '@portico/gateway-core';

/** The filter's own error codes, beside the core's (listed in the README). */
export const HttpBasicAuthErrorCode = {
  /** The username holds a colon: the upstream would split it there (RFC 7617 §2). */
  USERNAME_COLON: 'PORTICO_E_HTTP_BASIC_AUTH_USERNAME_COLON',
  /** The username or password holds a control character, or text that is not valid Unicode. */
  CHARACTER: 'PORTICO_E_HTTP_BASIC_AUTH_CHARACTER',
} as const;

/** Control characters, C0, DEL and C1: RFC 7617 forbids them in either part. */
const CONTROL = /\p{Cc}/u;

/**
 * The `Authorization` value for these credentials (`Basic` and the UTF-8 bytes of `user:password`
 * in Base64), or the coded error saying why they cannot be sent. The error never quotes either part:
 * a password must not reach a log, and a username in the wrong field may be one.
 */
export function basicAuthorization(username: string, password: string): string | PorticoError {
  if (username.includes(':')) {
    return new PorticoError(
      HttpBasicAuthErrorCode.USERNAME_COLON,
      'the username holds a colon, which Basic credentials cannot carry',
      { expected: 'a username without ":"' },
    );
  }
  for (const [part, text] of [
    ['username', username],
    ['password', password],
  ] as const) {
    // An unpaired surrogate has no UTF-8 form: encoding would silently replace it.
    if (CONTROL.test(text) || !text.isWellFormed()) {
      return new PorticoError(
        HttpBasicAuthErrorCode.CHARACTER,
        `the ${part} holds a control character or an unpaired surrogate`,
        { expected: `a ${part} of printable Unicode characters` },
      );
    }
  }
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
