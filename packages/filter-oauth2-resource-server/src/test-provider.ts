import amService from '@portico/am-service';
import headerFilter from '@portico/filter-header';
import { type Filter, Request } from '@portico/gateway-core';
import { pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import secretStores from '@portico/secret-stores';
import plugin, { type AccessTokenInfo } from './index.ts';

export { type OidcProvider, startOidcProvider } from '@portico/test-support';

/** A heap with this package's types, AmService, HeaderFilter and the secret stores, the declarations given. */
export function heapOf(declarations: unknown[]) {
  return pluginHeap({
    plugins: [plugin, amService, headerFilter, secretStores],
    file: 'routes/rs.json',
    heap: [{ name: 'ClientHandler', type: 'ClientHandler' }, ...declarations],
  });
}

/** The provider handler the incumbents' configurations write: a chain adding the client's Basic credentials. */
export function authenticatedHandler(client: { id: string; secret: string }) {
  return {
    type: 'Chain',
    config: {
      filters: [
        {
          type: 'HeaderFilter',
          config: {
            messageType: 'REQUEST',
            add: {
              Authorization: [`Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`],
            },
          },
        },
      ],
      handler: 'ClientHandler',
    },
  };
}

/** A request to the protected resource, over HTTPS unless said otherwise, with these Authorization headers. */
export function requestWith(authorization: string[] = [], uri = 'https://api.example.com/resource') {
  const request = new Request({ method: 'GET', uri });
  for (const value of authorization) request.headers.add('Authorization', value);
  return request;
}

/** The filter's answer, and what the next handler saw of the token when it was called. */
export async function through(filter: Filter, request: Request) {
  let seen: AccessTokenInfo | undefined;
  const next = recordingHandler();
  const response = await filter.filter(testContext(), request, {
    handle: async (context, passed) => {
      seen = (context.contexts.oauth2 as { accessToken: AccessTokenInfo } | undefined)?.accessToken;
      return next.handler.handle(context, passed);
    },
  });
  return { response, seen, called: next.requests.length > 0 };
}
