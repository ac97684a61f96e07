import type { Handler } from '@portico/gateway-core';
import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverIssuer } from './discovery.ts';
import { registerClient } from './dynamic-registration.ts';
import { heapOf, login, oauth2Failure, REDIRECT_URI } from './test-heap.ts';

let provider: OidcProvider;
let handler: Handler;
beforeAll(async () => {
  provider = await startOidcProvider();
  handler = await heapOf([]).heap.get<Handler>('ClientHandler', 'handler');
});
afterAll(() => provider.close());

const WELL_KNOWN = '/.well-known/openid-configuration';

describe('discoverIssuer', () => {
  it('finds the issuer of a URL by its discovery document, once per discovery handler', async () => {
    provider.resetCounts();
    const issuer = await discoverIssuer({ issuerUrl: `${provider.issuer}/`, handler, allowHttp: true });
    expect(issuer.name).toBe(provider.issuer);
    expect(await issuer.identifier()).toBe(provider.issuer);
    const again = await discoverIssuer({ issuerUrl: provider.discoveryEndpoint, handler, allowHttp: true });
    expect(again.state).toBe(issuer.state);
    expect(provider.requestsTo(WELL_KNOWN)).toBe(1);
    expect(issuer.supportsDomain(new URL(provider.issuer).host)).toBe(true);
  });

  it('refuses an http issuer unless allowed', async () => {
    const error = await oauth2Failure(discoverIssuer({ issuerUrl: provider.issuer, handler }), {
      error: 'server_error',
    });
    expect(error.message).toContain('requireHttps: false');
  });

  it('refuses a document that names another issuer, and input that names none', async () => {
    const error = await oauth2Failure(
      discoverIssuer({
        issuerUrl: 'https://idp.example.com',
        handler: {
          handle: async () => {
            const { Response } = await import('@portico/gateway-core');
            return Response.json(200, {
              issuer: 'https://other.example.com',
              authorization_endpoint: 'a',
              token_endpoint: 't',
            });
          },
        },
      }),
      { error: 'server_error' },
    );
    expect(error.message).toContain("not 'https://idp.example.com'");
    for (const input of ['', 'https://idp.example.com/?q=1', 'a'.repeat(3000)])
      await oauth2Failure(discoverIssuer({ issuerUrl: input, handler }), { error: 'invalid_request' });
  });

  it('asks the WebFinger of an e-mail address’s domain, then takes the domain as the issuer', async () => {
    const asked: string[] = [];
    const { Response } = await import('@portico/gateway-core');
    const recording: Handler = {
      handle: async (_context, request) => {
        asked.push(request.uri.toString());
        if (request.uri.path === '/.well-known/webfinger') return Response.empty(404);
        return Response.json(200, {
          issuer: 'https://example.org',
          authorization_endpoint: 'https://example.org/auth',
          token_endpoint: 'https://example.org/token',
        });
      },
    };
    const issuer = await discoverIssuer({ issuerUrl: 'alice@example.org', handler: recording });
    expect(await issuer.identifier()).toBe('https://example.org');
    expect(asked[0]).toContain(
      'https://example.org/.well-known/webfinger?resource=acct%3Aalice%40example.org',
    );
    expect(asked[1]).toBe('https://example.org/.well-known/openid-configuration');
  });
});

describe('registerClient', () => {
  it('registers at the issuer’s registration endpoint once, then signs users in with that client', async () => {
    provider.resetCounts();
    const issuer = await discoverIssuer({ issuerUrl: provider.issuer, handler, allowHttp: true });
    const metadata = { redirect_uris: [REDIRECT_URI], client_name: 'Portico', scopes: ['openid', 'email'] };
    const registration = await registerClient({ issuer, metadata, handler, allowHttp: true });
    expect(registration.name).toBe(provider.issuer);
    const sent = JSON.parse(provider.requestsMadeTo('/reg')[0]?.body ?? '{}');
    expect(sent).toMatchObject({
      client_name: 'Portico',
      scope: 'openid email',
      redirect_uris: [REDIRECT_URI],
    });
    expect(sent.scopes).toBeUndefined();
    const tokens = await login(registration, provider);
    expect(tokens.id_token_claims).toMatchObject({ sub: 'alice' });
    expect(tokens.scope).toEqual(['openid', 'email']);
    const again = await registerClient({ issuer, metadata: { ...metadata }, handler, allowHttp: true });
    await login(again, provider, { login: 'bob' });
    expect(provider.requestsTo('/reg')).toBe(1);
  });

  it('passes on the provider’s refusal', async () => {
    const issuer = await discoverIssuer({ issuerUrl: provider.issuer, handler, allowHttp: true });
    await oauth2Failure(
      registerClient({ issuer, metadata: { redirect_uris: ['not a uri'] }, handler, allowHttp: true }),
      { error: 'invalid_redirect_uri' },
    );
  });
});
