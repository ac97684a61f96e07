/**
 * A route file's content: the requests for which `condition` holds go through `filters`, then to
 * `handler`, by default ReverseProxyHandler (to the route's `baseURI` when one is given).
 */
export function chainRoute(
  condition: string,
  filters: unknown[],
  options: { baseURI?: string; handler?: unknown } = {},
): Record<string, unknown> {
  return {
    condition,
    ...(options.baseURI === undefined ? {} : { baseURI: options.baseURI }),
    handler: { type: 'Chain', config: { filters, handler: options.handler ?? 'ReverseProxyHandler' } },
  };
}
