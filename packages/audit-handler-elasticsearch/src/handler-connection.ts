import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import {
  BaseConnection,
  type ConnectionRequestOptions,
  type ConnectionRequestOptionsAsStream,
  type ConnectionRequestParams,
  type ConnectionRequestResponse,
  type ConnectionRequestResponseAsStream,
  errors,
} from '@elastic/elasticsearch';
import { Context, type Handler, Request } from '@portico/gateway-core';

/** The largest answer read from the engine through a Portico handler (a query answers at most 10,000 hits). */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/**
 * A connection class for the engine's client that sends every request through a Portico Handler (the
 * `SearchEngineClientHandler` heap object) instead of the client's own HTTP agent: the client still
 * builds, serializes, authenticates and reads each exchange; the handler carries it, so a capture
 * decoration, filters around a ClientHandler, or its TLS and proxy settings apply to it. An answer
 * that stands for a failure (the handler could not reach the engine) is the client's
 * ConnectionError, as a refused connection is with its own agent.
 */
export function handlerConnection(handler: Handler): typeof BaseConnection {
  return class HandlerConnection extends BaseConnection {
    /** The handler's connections are its own (the heap closes them). */
    override async close(): Promise<void> {}

    override request(
      params: ConnectionRequestParams,
      options: ConnectionRequestOptions,
    ): Promise<ConnectionRequestResponse>;
    override request(
      params: ConnectionRequestParams,
      options: ConnectionRequestOptionsAsStream,
    ): Promise<ConnectionRequestResponseAsStream>;
    override async request(
      params: ConnectionRequestParams,
      options: ConnectionRequestOptions & { asStream?: boolean },
    ): Promise<ConnectionRequestResponse | ConnectionRequestResponseAsStream> {
      const prefix = this.url.pathname === '/' ? '' : this.url.pathname.replace(/\/$/, '');
      const path = params.path.startsWith('/') ? params.path : `/${params.path}`;
      const query = params.querystring ? `?${params.querystring}` : '';
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries({ ...this.headers, ...params.headers }))
        if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value;
      const request = new Request({
        method: params.method,
        uri: `${this.url.origin}${prefix}${path}${query}`,
        headers,
        entity: await bodyOf(params.body),
      });
      const response = await handler.handle(new Context(), request);
      if (response.cause !== undefined) {
        await response.entity.dispose?.();
        throw new errors.ConnectionError(response.cause.message);
      }
      const answerHeaders: IncomingHttpHeaders = {};
      response.headers.forEach((name, values) => {
        answerHeaders[name.toLowerCase()] = values.length === 1 ? values[0] : values.join(', ');
      });
      const limit = options.maxResponseSize ?? MAX_ANSWER_BYTES;
      const body = await response.entity.text(Math.min(limit, MAX_ANSWER_BYTES));
      const statusCode = response.status;
      return options.asStream === true
        ? { statusCode, headers: answerHeaders, body: Readable.from([body]) }
        : { statusCode, headers: answerHeaders, body };
    }
  };
}

async function bodyOf(body: ConnectionRequestParams['body']): Promise<string | Uint8Array | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
