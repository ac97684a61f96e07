import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  type Logger,
  PorticoError,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import type { RouterInfo } from '@portico/gateway-core/http-helpers';

/** A host name or an IPv4 address (RFC 3986 reg-name without escapes), or an IPv6 literal in brackets. */
const HOST = /^(?:[A-Za-z0-9\-._~]+|\[[0-9A-Fa-f:.]+\])$/;
const SCHEME = /^https?$/i;

export interface ForwardedRequestSettings {
  scheme: Expression<string> | undefined;
  host: Expression<string> | undefined;
  port: Expression<number> | undefined;
  logger: Logger;
}

/** The value of `expression`, or null when it gives none or fails (a header that is not there). */
async function evaluated<T>(expression: Expression<T> | undefined, bindings: Bindings): Promise<T | null> {
  if (expression === undefined) return null;
  try {
    let value = evaluateSettled(expression, bindings);
    if (value instanceof Promise) value = await value;
    return value ?? null;
  } catch {
    return null;
  }
}

/**
 * ForwardedRequestFilter tells the filters after it which URI the client really asked for when the
 * gateway sits behind a proxy that ends TLS or changes the port (a load balancer): it rebases the
 * route's original URI (`contexts.router.originalUri`, which redirects and callbacks are built from)
 * onto the scheme, host and port its expressions compute, typically from `X-Forwarded-*` headers.
 * The request that goes upstream is not changed. A part whose expression gives nothing, or a value
 * that cannot be a URI's scheme, host or port, is left as it was.
 */
export class ForwardedRequestFilter implements Filter {
  readonly #settings: ForwardedRequestSettings;

  constructor(settings: ForwardedRequestSettings) {
    this.#settings = settings;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const bindings = bindingsFor(context, request);
    const router = context.router;
    const original = router?.originalUri ?? request.uri;
    const parts: { scheme?: string; host?: string; port?: number | null } = {};
    const scheme = await evaluated(this.#settings.scheme, bindings);
    if (scheme !== null) {
      if (SCHEME.test(scheme)) parts.scheme = scheme.toLowerCase();
      else this.#ignored('scheme');
    }
    const host = await evaluated(this.#settings.host, bindings);
    if (host !== null) {
      if (HOST.test(host)) parts.host = host.toLowerCase();
      else this.#ignored('host');
    }
    const port = await evaluated(this.#settings.port, bindings);
    if (port !== null) {
      if (Number.isInteger(port) && port >= 1 && port <= 65535) parts.port = port;
      else this.#ignored('port');
    }
    if (Object.keys(parts).length === 0) return next.handle(context, request);
    const rebased = original.with(parts);
    // The scheme's default port is written as no port, as a client writes it.
    const rebasedScheme = rebased.scheme ?? '';
    if (rebased.port !== null && DEFAULT_PORTS[rebasedScheme] === rebased.port) rebased.port = null;
    const info: RouterInfo = router
      ? { ...router, originalUri: rebased }
      : {
          routeId: '',
          routeName: '',
          originalUri: rebased,
          matchedUri: '',
          remainingUri: request.uri.path,
          uriTemplateVariables: {},
        };
    return next.handle(context.child('router', info), request);
  }

  #ignored(part: string): void {
    this.#settings.logger.debug(
      `the ${part} expression gave a value that cannot be a URI's ${part}; left as it was`,
    );
  }
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

export const ForwardedRequestFilterHeaplet = defineHeaplet({
  type: 'ForwardedRequestFilter',
  kind: 'filter',
  config: s.object({
    scheme: s.expression('string').optional(),
    host: s.expression('string').optional(),
    port: s.expression('integer').optional(),
  }),
  create: ({ config, logger, configAt }) => {
    if (config.scheme === undefined && config.host === undefined && config.port === undefined) {
      throw new PorticoError(ErrorCode.CONFIG, 'none of scheme, host and port is given', {
        ...configAt(),
        expected: 'at least one of scheme, host and port',
      });
    }
    return new ForwardedRequestFilter({
      scheme: config.scheme,
      host: config.host,
      port: config.port,
      logger,
    });
  },
});
