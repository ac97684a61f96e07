import { Context, type Handler, Request, Response } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, publicAddressesOnly } from './public-addresses.ts';
import { OAuth2Error } from './registration.ts';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('publicAddressesOnly', () => {
  const answering = () => {
    const sent: string[] = [];
    const handler: Handler = {
      async handle(_context, request) {
        sent.push(request.uri.toString());
        return Response.text(200, 'ok');
      },
    };
    return { sent, handler };
  };
  const get = (handler: Handler, uri: string) => handler.handle(new Context({}), new Request({ uri }));

  it('sends a request whose name resolves to public addresses only', async () => {
    const inner = answering();
    const guarded = publicAddressesOnly(inner.handler, async () => ['93.184.215.14', '2606:4700::1111']);
    expect((await get(guarded, 'https://idp.example/.well-known/webfinger')).status).toBe(200);
    expect(inner.sent).toEqual(['https://idp.example/.well-known/webfinger']);
  });

  it('refuses a name with one private address among its answers, before sending', async () => {
    const inner = answering();
    const guarded = publicAddressesOnly(inner.handler, async () => ['93.184.215.14', '10.0.0.5']);
    const error = await get(guarded, 'https://inside.example/').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuth2Error);
    expect((error as OAuth2Error).parameters).toEqual({
      error: 'invalid_request',
      error_description: 'discovery reaches public addresses only: inside.example is 10.0.0.5',
    });
    expect(inner.sent).toEqual([]);
  });

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://[::1]:8080/', 'http://[::ffff:127.0.0.1]/'])(
    'refuses the address literal of %s without resolving it',
    async (uri) => {
      const inner = answering();
      const guarded = publicAddressesOnly(inner.handler, async () => {
        throw new Error('a literal is not resolved');
      });
      await expect(get(guarded, uri)).rejects.toThrow('discovery reaches public addresses only');
      expect(inner.sent).toEqual([]);
    },
  );

  it('refuses a name that does not resolve', async () => {
    const inner = answering();
    const guarded = publicAddressesOnly(inner.handler, async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    await expect(get(guarded, 'https://nowhere.invalid/')).rejects.toThrow(
      'nowhere.invalid is not resolvable',
    );
  });

  it('resolves with the system resolver by default: localhost is refused', async () => {
    const inner = answering();
    await expect(get(publicAddressesOnly(inner.handler), 'http://localhost:9/')).rejects.toThrow(
      /localhost is (127\.0\.0\.1|::1)/,
    );
  });
});
