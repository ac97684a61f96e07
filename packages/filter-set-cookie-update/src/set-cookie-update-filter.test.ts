import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/cookies.json';
const upstream = upstreamForSuite();

/** The upstream sets these cookies on its next answers. */
function setting(...cookies: string[]) {
  upstream.answer((_request, response) => {
    response.writeHead(200, { 'Set-Cookie': cookies, 'Content-Length': 2 });
    response.end('ok');
  });
}

function chainWith(config: unknown) {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'Update', type: 'SetCookieUpdateFilter', config },
      { name: 'Main', type: 'Chain', config: { filters: ['Update'], handler: { type: 'ClientHandler' } } },
    ],
  });
  return { heap, chain: () => heap.get<Handler>('Main', 'handler') };
}

async function cookiesAfter(config: unknown, attributes: Record<string, unknown> = {}) {
  const { heap, chain } = chainWith(config);
  const response = await (await chain()).handle(
    testContext({ attributes }),
    new Request({ uri: `${upstream.url}/` }),
  );
  await response.entity.text();
  await heap.destroy();
  return response.headers.getAll('set-cookie');
}

const refused = (config: unknown) => expect(chainWith(config).chain()).rejects;

describe('SetCookieUpdateFilter', () => {
  describe('cookies: the name pattern', () => {
    it('updates the cookie the corpus names, leaving the others', async () => {
      setting('e9171d29641abed=abc; Path=/; Domain=am.internal', 'other=1; Domain=am.internal');
      expect(await cookiesAfter({ cookies: { e9171d29641abed: { domain: 'example.com' } } })).toEqual([
        'e9171d29641abed=abc; Path=/; Domain=example.com',
        'other=1; Domain=am.internal',
      ]);
    });

    it('matches the whole name, as a regular expression', async () => {
      setting('session=1', 'session2=2', 'my-session=3');
      expect(await cookiesAfter({ cookies: { 'session\\d?': { path: '/app' } } })).toEqual([
        'session=1; Path=/app',
        'session2=2; Path=/app',
        'my-session=3',
      ]);
    });

    it('.* updates every cookie, and rules apply in order: the later wins', async () => {
      setting('CSRF=x', 'id=y; SameSite=Strict');
      expect(
        await cookiesAfter({
          cookies: { CSRF: { SameSite: 'None', secure: true }, '.*': { SameSite: 'Lax' } },
        }),
      ).toEqual(['CSRF=x; SameSite=Lax; Secure', 'id=y; SameSite=Lax']);
    });

    it('is case-sensitive', async () => {
      setting('Token=1');
      expect(await cookiesAfter({ cookies: { token: { path: '/' } } })).toEqual(['Token=1']);
    });

    it('is required', async () => {
      await refused({}).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[0].config.cookies' },
      });
    });

    it('refuses an empty map', async () => {
      await refused({ cookies: {} }).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.cookies' },
      });
    });

    it('refuses a pattern that is not a regular expression, at its path', async () => {
      await refused({ cookies: { 'a(': { path: '/' } } }).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.cookies["a("]' },
      });
    });

    it('refuses a rule that updates nothing', async () => {
      await refused({ cookies: { a: {} } }).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    });
  });

  describe('attributes', () => {
    it('value replaces the value; previous is the value before', async () => {
      setting('myCookie=abc; Path=/');
      expect(await cookiesAfter({ cookies: { myCookie: { value: '${previous}@ig' } } })).toEqual([
        'myCookie=abc@ig; Path=/',
      ]);
    });

    it('domain, path and expires replace an attribute where it is, or add it', async () => {
      setting('a=1; path=/old; HttpOnly');
      expect(
        await cookiesAfter({
          cookies: { a: { domain: 'example.com', path: '/new', expires: 'Wed, 21 Oct 2037 07:28:00 GMT' } },
        }),
      ).toEqual(['a=1; path=/new; HttpOnly; Domain=example.com; Expires=Wed, 21 Oct 2037 07:28:00 GMT']);
    });

    it('Max-Age takes an integer or an expression giving one', async () => {
      setting('a=1; Max-Age=60');
      expect(await cookiesAfter({ cookies: { a: { 'Max-Age': 3600 } } })).toEqual(['a=1; Max-Age=3600']);
      expect(
        await cookiesAfter({ cookies: { a: { max_age: '${attributes.maxAge}' } } }, { maxAge: 120 }),
      ).toEqual(['a=1; Max-Age=120']);
      expect(await cookiesAfter({ cookies: { a: { 'max-age': '${previous * 2}' } } })).toEqual([
        'a=1; Max-Age=120',
      ]);
    });

    it('secure and http-only add a flag for true and remove it for false', async () => {
      setting('a=1; Secure', 'b=2');
      expect(
        await cookiesAfter({
          cookies: { a: { secure: false, 'http-only': true }, b: { secure: '${true}' } },
        }),
      ).toEqual(['a=1; HttpOnly', 'b=2; Secure']);
    });

    it('SameSite takes a string', async () => {
      setting('a=1');
      expect(await cookiesAfter({ cookies: { a: { samesite: 'Strict' } } })).toEqual([
        'a=1; SameSite=Strict',
      ]);
    });

    it('names are read case-insensitively', async () => {
      setting('a=1');
      expect(await cookiesAfter({ cookies: { a: { PATH: '/x', HTTPONLY: true } } })).toEqual([
        'a=1; Path=/x; HttpOnly',
      ]);
    });

    it('leaves an attribute whose expression gives null as it was', async () => {
      setting('e9171d29641abed=abc; Domain=am.internal');
      expect(
        await cookiesAfter({ cookies: { e9171d29641abed: { domain: '${frConfigs.cookieDomain}' } } }),
      ).toEqual(['e9171d29641abed=abc; Domain=am.internal']);
    });

    it('leaves an attribute whose value would break the header', async () => {
      setting('a=1');
      expect(
        await cookiesAfter({ cookies: { a: { path: '${attributes.path}' } } }, { path: '/x; Secure' }),
      ).toEqual(['a=1']);
    });

    it('leaves a response without Set-Cookie as it is', async () => {
      setting();
      expect(await cookiesAfter({ cookies: { '.*': { secure: true } } })).toEqual([]);
    });

    it('refuses an attribute it does not know, at its path', async () => {
      await refused({ cookies: { a: { priority: 'High' } } }).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.cookies.a.priority' },
      });
    });

    it('refuses a value of the wrong kind', async () => {
      await refused({ cookies: { a: { secure: 'yes' } } }).toMatchObject({ code: 'PORTICO_E_CONFIG' });
      await refused({ cookies: { a: { 'max-age': 'an hour' } } }).toMatchObject({ code: 'PORTICO_E_CONFIG' });
      await refused({ cookies: { a: { path: 7 } } }).toMatchObject({ code: 'PORTICO_E_CONFIG' });
      await refused({ cookies: { a: { path: '/a; Secure' } } }).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    });

    it('refuses an expression that does not compile, at its path', async () => {
      await refused({ cookies: { a: { value: '${previous +}' } } }).toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.cookies.a.value' },
      });
    });
  });
});
