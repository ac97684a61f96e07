import headerFilter from '@portico/filter-header';
import { Request } from '@portico/gateway-core';
import { pluginHeap } from '@portico/gateway-core/testing';
import plugin from './index.ts';

export { type OidcProvider, startOidcProvider } from '../../../test-e2e/support/oidc-provider.ts';

/** A heap with this package's types, and HeaderFilter, the declarations given. */
export function heapOf(declarations: unknown[]) {
  return pluginHeap({
    plugins: [plugin, headerFilter],
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
