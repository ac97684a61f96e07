import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type OidcProvider, startOidcProvider } from '@portico/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuerObject } from './issuer.ts';
import { FILE, failure, heapOf, oauth2Failure, objectOf } from './test-heap.ts';

const WELL_KNOWN = '/.well-known/openid-configuration';

function issuerOf(config: unknown): Promise<IssuerObject> {
  return objectOf<IssuerObject>([{ name: 'Idp', type: 'Issuer', config }], 'Idp');
}

describe('Issuer settings', () => {
  it('needs a wellKnownEndpoint, or an authorizeEndpoint and a tokenEndpoint, naming what is missing', async () => {
    await expect(issuerOf({})).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: FILE, jsonPath: '$.heap[2].config.authorizeEndpoint' },
    });
    await expect(issuerOf({ authorizeEndpoint: 'https://idp.example.com/authorize' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringContaining('tokenEndpoint is required'),
      details: { jsonPath: '$.heap[2].config.tokenEndpoint' },
    });
  });

  it('refuses unknown settings, endpoints that are no http(s) URL and regular expressions that do not compile', async () => {
    for (const [config, at] of [
      [
        { wellKnownEndpoint: 'https://idp.example.com/x', jwksUrl: 'https://idp.example.com/jwks' },
        'jwksUrl',
      ],
      [{ wellKnownEndpoint: 'ftp://idp.example.com/x' }, 'wellKnownEndpoint'],
      [{ wellKnownEndpoint: 'idp.example.com' }, 'wellKnownEndpoint'],
      [
        { wellKnownEndpoint: 'https://idp.example.com/x', supportedDomains: ['(unclosed'] },
        'supportedDomains[0]',
      ],
      [
        { wellKnownEndpoint: 'https://idp.example.com/x', supportedDomains: ['https://a.example.com/'] },
        'supportedDomains[0]',
      ],
      [
        { wellKnownEndpoint: 'https://idp.example.com/x', idTokenSkewAllowance: 'unlimited' },
        'idTokenSkewAllowance',
      ],
    ] as const)
      await expect(issuerOf(config), at).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: `$.heap[2].config.${at}` },
      });
  });

  it('knows the domains of its supportedDomains, whole and ignoring case, and its own host', async () => {
    const issuer = await issuerOf({
      wellKnownEndpoint: 'https://openam.example.com:8443/openam/oauth2/.well-known/openid-configuration',
      supportedDomains: ['openam.com', 'openam.com:8092', 'allopenamdomains.*'],
    });
    for (const domain of [
      'openam.com',
      'OpenAM.com',
      'openam.com:8092',
      'allopenamdomains.org',
      'openam.example.com:8443',
    ])
      expect(issuer.supportsDomain(domain), domain).toBe(true);
    for (const domain of [
      'openam.com:1',
      'www.openam.com',
      'xopenam.com',
      'openam.example.com',
      '',
      'a@openam.com',
    ])
      expect(issuer.supportsDomain(domain), domain).toBe(false);
  });

  it('takes time linear in the domain, whatever the pattern', async () => {
    const issuer = await issuerOf({
      wellKnownEndpoint: 'https://idp.example.com/x',
      supportedDomains: ['(a+)+b'],
    });
    const started = performance.now();
    expect(issuer.supportsDomain('a'.repeat(250))).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('Issuer against a real provider', () => {
  let provider: OidcProvider;
  beforeAll(async () => {
    provider = await startOidcProvider();
  });
  afterAll(() => provider.close());

  it('fetches its discovery document on first use only, and keeps it', async () => {
    provider.resetCounts();
    const issuer = (await issuerOf({ wellKnownEndpoint: provider.discoveryEndpoint })).allowingHttp();
    expect(provider.requestsTo(WELL_KNOWN)).toBe(0);
    expect(await issuer.identifier()).toBe(provider.issuer);
    expect(await issuer.identifier()).toBe(provider.issuer);
    expect((await issuer.metadata()).jwks_uri).toBe(provider.jwksUri);
    expect(provider.requestsTo(WELL_KNOWN)).toBe(1);
  });

  it('refuses an http endpoint unless allowed, saying which setting allows it', async () => {
    const issuer = await issuerOf({ wellKnownEndpoint: provider.discoveryEndpoint });
    const error = await oauth2Failure(issuer.identifier(), { error: 'server_error' });
    expect(error.message).toContain(`${provider.discoveryEndpoint} is not HTTPS`);
    expect(error.message).toContain('requireHttps: false');
    expect(await issuer.allowingHttp().identifier()).toBe(provider.issuer);
    // A strict view does not use what a lenient one fetched.
    await oauth2Failure(issuer.identifier(), { error: 'server_error' });
  });

  it('uses declared endpoints without any request; `issuer` names its identifier', async () => {
    provider.resetCounts();
    const declared = {
      authorizeEndpoint: provider.authorizationEndpoint,
      tokenEndpoint: provider.tokenEndpoint,
      userInfoEndpoint: provider.userinfoEndpoint,
      registrationEndpoint: provider.registrationEndpoint,
      endSessionEndpoint: provider.endSessionEndpoint,
      revocationEndpoint: `${provider.issuer}/token/revocation`,
    };
    const named = (await issuerOf({ ...declared, issuer: 'https://idp.example.com' })).allowingHttp();
    expect(await named.identifier()).toBe('https://idp.example.com');
    expect(await named.metadata()).toMatchObject({
      authorization_endpoint: provider.authorizationEndpoint,
      token_endpoint: provider.tokenEndpoint,
      userinfo_endpoint: provider.userinfoEndpoint,
      registration_endpoint: provider.registrationEndpoint,
      end_session_endpoint: provider.endSessionEndpoint,
      revocation_endpoint: `${provider.issuer}/token/revocation`,
    });
    const unnamed = (await issuerOf(declared)).allowingHttp();
    expect(await unnamed.identifier()).toBe(provider.issuer);
    expect(provider.requestsTo(WELL_KNOWN)).toBe(0);
  });

  it('lets declared endpoints override discovered ones', async () => {
    const issuer = (
      await issuerOf({
        wellKnownEndpoint: provider.discoveryEndpoint,
        userInfoEndpoint: 'https://other.example.com/me',
      })
    ).allowingHttp();
    expect(await issuer.metadata()).toMatchObject({
      token_endpoint: provider.tokenEndpoint,
      userinfo_endpoint: 'https://other.example.com/me',
    });
  });

  it('sends its requests through its issuerHandler', async () => {
    const issuer = (
      await issuerOf({
        wellKnownEndpoint: provider.discoveryEndpoint,
        issuerHandler: { type: 'StaticResponseHandler', config: { status: 503 } },
      })
    ).allowingHttp();
    const error = await oauth2Failure(issuer.identifier(), { error: 'server_error' });
    expect(error.message).toContain('answered 503');
  });

  it('checks that the document names an issuer', async () => {
    const issuer = (
      await issuerOf({
        wellKnownEndpoint: provider.discoveryEndpoint,
        issuerHandler: {
          type: 'StaticResponseHandler',
          config: { status: 200, entity: '{"token_endpoint": "x"}' },
        },
      })
    ).allowingHttp();
    expect((await oauth2Failure(issuer.identifier(), {})).message).toContain('names no issuer');
  });

  it('checks the identifier its `issuer` setting gives against the document', async () => {
    const issuer = (
      await issuerOf({
        wellKnownEndpoint: provider.discoveryEndpoint,
        issuer: 'https://elsewhere.example.com',
      })
    ).allowingHttp();
    expect((await oauth2Failure(issuer.identifier(), {})).message).toContain(
      "not 'https://elsewhere.example.com'",
    );
  });
});

describe('Issuer when the provider fails', () => {
  it('gives OAuth2Error for a provider that cannot be reached, and tries again next time', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const issuer = (
      await issuerOf({ wellKnownEndpoint: `http://127.0.0.1:${port}${WELL_KNOWN}` })
    ).allowingHttp();
    const error = await oauth2Failure(issuer.identifier(), { error: 'server_error' });
    expect(error.message).toContain('cannot be reached');
    await oauth2Failure(issuer.identifier(), { error: 'server_error' });
  });

  it('reads at most 1 MiB of an answer', async () => {
    const big = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"issuer": "${'x'.repeat(2 * 1024 * 1024)}"}`);
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    try {
      const port = (big.address() as AddressInfo).port;
      const issuer = (
        await issuerOf({ wellKnownEndpoint: `http://127.0.0.1:${port}${WELL_KNOWN}` })
      ).allowingHttp();
      expect((await oauth2Failure(issuer.identifier(), { error: 'server_error' })).message).toContain(
        'answered more than 1048576 bytes',
      );
    } finally {
      big.closeAllConnections();
      await new Promise<void>((resolve) => big.close(() => resolve()));
    }
  });

  it('is refused where a registration wants an Issuer and gets another object', async () => {
    const { heap } = heapOf([
      { name: 'NotAnIssuer', type: 'ClientHandler' },
      { name: 'Reg', type: 'ClientRegistration', config: { clientId: 'c', issuer: 'NotAnIssuer' } },
    ]);
    expect(await failure(heap.get('Reg'))).toMatchObject({ code: 'PORTICO_E_REFERENCE' });
  });
});
