import { Context, type Handler, Request } from '@portico/gateway-core';
import type { CustomFetch } from 'openid-client';
import { OAuth2Error } from './registration.ts';

/** The most of a provider's answer read into memory: discovery documents, JWK sets and tokens are far smaller. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * How a registration or an issuer reaches its provider: the Portico handler its configuration names
 * (resolved on first use, the heap's `ClientHandler` by default), and whether plain-HTTP endpoints
 * may be used (the filter's `requireHttps: false`).
 */
export interface Transport {
  readonly handler: () => Promise<Handler>;
  readonly allowHttp: boolean;
}

/** A request that never reached the provider, or whose answer could not be read. */
export class ProviderFetchError extends Error {
  override readonly name = 'ProviderFetchError';
}

/** An endpoint as messages name it: without its query, which may carry a token. */
export function endpointOf(url: string | URL): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** Throws unless `url` is HTTPS, or HTTP where the transport allows it. */
export function assertSecure(url: string | URL, allowHttp: boolean, what: string): void {
  const parsed = new URL(url);
  if (parsed.protocol === 'https:') return;
  if (parsed.protocol === 'http:' && allowHttp) return;
  if (parsed.protocol === 'http:')
    throw new ProviderFetchError(
      `the ${what} ${endpointOf(parsed)} is not HTTPS: refused while the filter requires HTTPS (requireHttps: false allows it)`,
    );
  throw new ProviderFetchError(`the ${what} ${endpointOf(parsed)} is not an http(s) URL`);
}

/**
 * openid-client's `customFetch` over a Portico handler: each request it would send is made a
 * Portico Request and handed to the handler (so that decorators and the ClientHandler's settings
 * apply), and the handler's Response made a fetch Response again, its body read up to
 * MAX_ANSWER_BYTES.
 */
export function fetchThrough(transport: Transport, what = 'provider endpoint'): CustomFetch {
  return async (url, options) => {
    assertSecure(url, transport.allowHttp, what);
    const request = new Request({
      method: options.method,
      uri: url,
      headers: options.headers,
      entity: await bodyOf(options.body),
    });
    return send(transport, request, options.signal);
  };
}

/** Sends one request through the transport's handler; the answer as a fetch Response. */
export async function send(transport: Transport, request: Request, signal?: AbortSignal): Promise<Response> {
  const endpoint = endpointOf(request.uri.toString());
  let answer: import('@portico/gateway-core').Response;
  try {
    const handler = await transport.handler();
    answer = await handler.handle(new Context(signal === undefined ? {} : { signal }), request);
  } catch (error) {
    // A refusal in OAuth 2.0 terms (the public-addresses guard's) goes to the filter as it is.
    if (error instanceof OAuth2Error) throw error;
    throw new ProviderFetchError(`${endpoint} cannot be reached: ${(error as Error).message}`, {
      cause: error,
    });
  }
  // A ClientHandler answers a connection failure with a 502 that carries its cause.
  if (answer.cause !== undefined && answer.status >= 500)
    throw new ProviderFetchError(`${endpoint} cannot be reached: ${answer.cause.message}`, {
      cause: answer.cause,
    });
  if (answer.status < 200 || answer.status > 599)
    throw new ProviderFetchError(`${endpoint} answered with status ${answer.status}`);
  let body: Buffer;
  try {
    body = await answer.entity.bytes(MAX_ANSWER_BYTES);
  } catch (error) {
    answer.entity.discard();
    throw new ProviderFetchError(
      (error as { code?: string }).code === 'PORTICO_E_ENTITY_TOO_LARGE'
        ? `${endpoint} answered more than ${MAX_ANSWER_BYTES} bytes`
        : `the answer of ${endpoint} cannot be read: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const headers = new Headers();
  for (const [name, values] of answer.headers) for (const value of values) headers.append(name, value);
  const empty = answer.status === 204 || answer.status === 205 || answer.status === 304;
  return new Response(empty ? null : new Uint8Array(body), { status: answer.status, headers });
}

async function bodyOf(body: unknown): Promise<string | Uint8Array | null> {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof ReadableStream) return new Uint8Array(await new Response(body).arrayBuffer());
  throw new ProviderFetchError(`a request body of an unexpected kind (${typeof body})`);
}

/** GETs a JSON document through the transport: the discovery document, a JWK set, a WebFinger answer. */
export async function getJson(
  transport: Transport,
  url: string,
  what: string,
): Promise<Record<string, unknown>> {
  assertSecure(url, transport.allowHttp, what);
  const response = await send(
    transport,
    new Request({ method: 'GET', uri: url, headers: { Accept: 'application/json, application/jrd+json' } }),
  );
  if (response.status !== 200)
    throw new ProviderFetchError(`the ${what} ${endpointOf(url)} answered ${response.status}, not 200`);
  let json: unknown;
  try {
    json = await response.json();
  } catch {
    throw new ProviderFetchError(`the ${what} ${endpointOf(url)} did not answer JSON`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new ProviderFetchError(`the ${what} ${endpointOf(url)} did not answer a JSON object`);
  return json as Record<string, unknown>;
}
