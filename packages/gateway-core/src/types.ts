import type { Context } from './context/context.ts';
import type { Request, Response } from './http/message.ts';

/** Produces the response to a request: the end of a chain (proxying, a static answer, a router). */
export interface Handler {
  handle(context: Context, request: Request): Promise<Response>;
}

/**
 * Intercepts a request on its way to `next` and the response on its way back. A filter may change
 * the request before calling `next`, change the response after, or answer without calling `next`.
 */
export interface Filter {
  filter(context: Context, request: Request, next: Handler): Promise<Response>;
}

export function isHandler(value: unknown): value is Handler {
  return typeof (value as Handler | null)?.handle === 'function';
}

export function isFilter(value: unknown): value is Filter {
  return typeof (value as Filter | null)?.filter === 'function';
}
