import type { Uri } from '@portico/gateway-core';

/** A `goto` the policy accepts (absolute, normalised by the URL parser), or why it refuses it. */
export type GotoVerdict = { url: string } | { refused: string };

/** `scheme://host[:port]` of an http(s) URL, the default port left out, as URL.origin writes it. */
export function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin === 'null') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/**
 * Where `goto` may send the user after a login or a logout: to the origin of the request (the
 * gateway as the user reached it) or to one of `allowedOrigins`; anywhere else would make the
 * gateway an open redirector. A relative `goto` is resolved against the request's URI; what the
 * browser is sent is the resolved URL, so that it cannot read `/\host` or `//host` otherwise than
 * the check did. With `requireHttps`, a cleartext `goto` is refused too.
 */
export class GotoPolicy {
  readonly #allowed: ReadonlySet<string>;
  readonly #requireHttps: boolean;

  constructor(allowedOrigins: readonly string[], requireHttps: boolean) {
    this.#allowed = new Set(allowedOrigins.map((origin) => originOf(origin) ?? origin));
    this.#requireHttps = requireHttps;
  }

  check(goto: string, request: Uri): GotoVerdict {
    let url: URL;
    try {
      url = new URL(goto, request.toString());
    } catch {
      return { refused: 'the goto parameter is not a URL' };
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      return { refused: 'the goto parameter is not an http(s) URL' };
    if (this.#requireHttps && url.protocol !== 'https:')
      return { refused: 'the goto parameter is not an https URL and requireHttps is set' };
    const requestOrigin = request.origin === null ? undefined : originOf(request.origin);
    if (url.origin !== requestOrigin && !this.#allowed.has(url.origin))
      return {
        refused: `the goto parameter leads to ${url.origin}, neither this gateway nor an allowed origin`,
      };
    return { url: url.href };
  }
}
