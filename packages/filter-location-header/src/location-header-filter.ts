import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  type Request,
  Response,
  s,
  Uri,
} from '@portico/gateway-core';
import type { RouterInfo } from '@portico/gateway-core/http-helpers';

/**
 * Rewrites the `Location` of a response that would send the user agent straight to the proxied
 * application, so that it goes through the gateway instead: its scheme, host and port become those
 * of `baseURI` when set, else those of the URI the client originally asked for. Path, query and
 * fragment are kept as they are, percent-encoding included. A Location pointing anywhere else (an
 * identity provider, another site) or relative (already resolved against the gateway) is left alone.
 */
export class LocationHeaderFilter implements Filter {
  readonly #baseURI: Expression<string> | undefined;
  readonly #logger: Logger;

  constructor(baseURI: Expression<string> | undefined, logger: Logger) {
    this.#baseURI = baseURI;
    this.#logger = logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    // Copied: filters further on may rebase the request's URI in place.
    const received = request.uri.with({});
    const response = await next.handle(context, request);
    const location = response.headers.get('location');
    if (location === undefined) return response;
    const origins = applicationOrigins(received, request);
    const parsed = parse(location);
    const target =
      parsed && origins.has(originOf(parsed)) ? parsed : userAgentView(location, request.uri, origins);
    if (!target) return response;
    const configured = await this.#base(context, request, response);
    if (configured === null) {
      // Passing the Location on unchanged would expose the application: fail instead.
      response.entity.discard();
      return Response.empty(500);
    }
    const base = configured ?? originalUri(context) ?? received;
    const rebased = target.rebase(base).toString();
    if (rebased !== location) response.headers.set('Location', rebased);
    return response;
  }

  /** The evaluated baseURI; undefined when none is configured; null (logged) when it is unusable. */
  async #base(context: Context, request: Request, response: Response): Promise<Uri | undefined | null> {
    if (!this.#baseURI) return undefined;
    let text = evaluateSettled(this.#baseURI, bindingsFor(context, request, response));
    if (text instanceof Promise) text = await text;
    const uri = text === null ? undefined : parse(text);
    if (uri?.scheme && uri.host) return uri;
    this.#logger.error('cannot rewrite the Location header: baseURI is not an absolute URI', {
      baseURI: this.#baseURI.text,
      value: text,
    });
    return null;
  }
}

function parse(text: string): Uri | undefined {
  try {
    return Uri.parse(text);
  } catch {
    return undefined;
  }
}

/** The base a Location is resolved against to tell whether it names a host of its own. */
const NO_HOST = 'portico.invalid';

/**
 * The Location as a user agent reads it (WHATWG URL), when that names an application origin though
 * the strict parse does not: `//app:8080/x` (the application's own scheme), `http:\\app:8080\x`,
 * `/\app:8080/x`, `http:/app:8080/x`. Browsers go straight to the application with these, so they are
 * rebased too (their path as the user agent would send it). A Location without a host of its own is
 * relative to the gateway: undefined.
 */
function userAgentView(location: string, application: Uri, origins: Set<string>): Uri | undefined {
  // The gateway's scheme decides some forms (`http:/app/x` is a path on an http page, a host on an
  // https one): both are tried, the application's scheme first (`//app/x` means the application's).
  const scheme = application.scheme === 'https' ? 'https' : 'http';
  for (const base of [scheme, scheme === 'http' ? 'https' : 'http']) {
    let seen: URL;
    try {
      seen = new URL(location, `${base}://${NO_HOST}/`);
    } catch {
      return undefined;
    }
    if (seen.hostname === NO_HOST) continue;
    const uri = parse(seen.href);
    if (uri && origins.has(originOf(uri))) return uri;
  }
  return undefined;
}

/** `scheme://host:port` with the port always written, so `http://a` and `http://a:80` are one origin. */
function originOf(uri: Uri): string {
  return uri.scheme && uri.host ? `${uri.scheme}://${uri.host}:${uri.effectivePort}` : '';
}

/**
 * Where the proxied application lives: the request's URI as the filter received it and as it left
 * (a baseURI further on may have rebased it), and the Host the request carried, if a filter set one.
 */
function applicationOrigins(received: Uri, request: Request): Set<string> {
  const origins = new Set([originOf(received), originOf(request.uri)]);
  const host = request.headers.get('host');
  const withHost = host === undefined ? undefined : parse(`${request.uri.scheme ?? 'http'}://${host}`);
  if (withHost) origins.add(originOf(withHost));
  origins.delete('');
  return origins;
}

/** The URI the client asked for: recorded by the outermost router, before any baseURI applied. */
function originalUri(context: Context): Uri | undefined {
  let router: RouterInfo | undefined;
  for (let c: Context | undefined = context; c; c = c.parent) router = c.router ?? router;
  const uri = router?.originalUri;
  return uri?.scheme && uri.host ? uri : undefined;
}

/** A baseURI written as plain text is checked when the configuration loads. */
function badBaseUri(baseURI: Expression<unknown> | undefined): string | undefined {
  if (!baseURI?.isConstant) return undefined;
  const text = String(baseURI.evaluate());
  const uri = parse(text);
  return uri?.scheme && uri.host ? undefined : `'${text}' is not an absolute URI`;
}

export const LocationHeaderFilterHeaplet = defineHeaplet({
  type: 'LocationHeaderFilter',
  aliases: ['RedirectFilter'],
  kind: 'filter',
  config: s.object({
    baseURI: s
      .expression('string')
      .optional()
      .refine(badBaseUri, 'an absolute URI such as "https://gateway.example.com:8443"'),
  }),
  create: ({ config, logger }) => new LocationHeaderFilter(config.baseURI, logger),
});
