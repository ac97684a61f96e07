import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Request, Response } from '@portico/gateway-core';
import type { SessionProducer } from '@portico/gateway-core/sessions';
import { pluginHeap, recordingMetrics } from '@portico/gateway-core/testing';
import keystorePlugin, { KeyStore } from '@portico/keystore';
import { EncryptJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import plugin from './index.ts';

const SECRET = randomBytes(32).toString('base64');

/** A real KeyStore over the PKCS12 fixture keytool made: an RSA key, an EC key, a secret key, a certificate. */
const KEYS = {
  name: 'Keys',
  type: 'KeyStore',
  config: {
    url: path.join(import.meta.dirname, '..', '..', 'keystore', 'fixtures', 'store.p12'),
    password: 'changeit',
  },
};
const ENTRIES = { rsa: 'jwe-key', ec: 'ec-key', secret: 'secret' } as const;

const heaps: ReturnType<typeof pluginHeap>['heap'][] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const heap of heaps.splice(0)) await heap.destroy();
});

/** A JwtSession named `Session`, created through a real heap (counting into `metrics`, if given). */
async function sessionFrom(
  config: unknown,
  more: unknown[] = [],
  metrics?: ReturnType<typeof recordingMetrics>['metrics'],
) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin, keystorePlugin],
    file: 'config/config.json',
    heap: [...more, { name: 'Session', type: 'JwtSession', config }],
    ...(metrics === undefined ? {} : { metrics }),
  });
  heaps.push(heap);
  return { session: await heap.get<SessionProducer>('Session', 'object'), heap, logger };
}

const request = (cookie?: string, uri = 'http://gw.example/') =>
  new Request({ uri, headers: cookie === undefined ? {} : { Cookie: cookie } });

/** One exchange: opens the session for a request with `cookie`, lets `use` work on it, commits. */
async function exchange(
  producer: SessionProducer,
  cookie: string | undefined,
  use?: (session: Record<string, unknown>) => void,
  uri?: string,
) {
  const handle = await producer.open(request(cookie, uri));
  let seen: Record<string, unknown> | undefined;
  if (use) {
    seen = handle.data();
    use(seen);
  }
  const response = Response.empty(200);
  await handle.commit(response);
  const setCookie = response.headers.getAll('set-cookie');
  return { seen, setCookie, cookie: setCookie[0]?.split(';')[0] };
}

const write = (values: Record<string, unknown>) => (session: Record<string, unknown>) => {
  Object.assign(session, values);
};

describe('JwtSession round trip', () => {
  it('keeps the session in an encrypted cookie the next request brings back', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const first = await exchange(session, undefined, write({ user: 'alice', roles: ['a', 'b'] }));
    expect(first.setCookie).toHaveLength(1);
    expect(first.cookie).toMatch(/^openig-jwt-session=[\w-]+\.[\w-]*\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(first.cookie).not.toContain('alice');
    let read: Record<string, unknown> | undefined;
    await exchange(session, first.cookie, (s) => {
      read = { ...s };
    });
    expect(read).toEqual({ user: 'alice', roles: ['a', 'b'] });
  });

  it('sets a browser-session cookie for the whole site, HttpOnly and SameSite=Lax', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { setCookie } = await exchange(session, undefined, write({ a: 1 }));
    expect(setCookie[0]).toMatch(/; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(setCookie[0]).not.toMatch(/Max-Age|Expires|Domain|Secure/);
  });

  it('adds Secure when the request came over HTTPS', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { setCookie } = await exchange(session, undefined, write({ a: 1 }), 'https://gw.example/');
    expect(setCookie[0]).toMatch(/; Secure$/);
  });

  it('sets no cookie for a request that never uses the session', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    expect((await exchange(session, undefined)).setCookie).toEqual([]);
    expect((await exchange(session, undefined, () => {})).setCookie).toEqual([]);
  });

  it('is issued again only when the request changed the session', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ n: 1 }));
    expect((await exchange(session, cookie, (s) => s.n)).setCookie).toEqual([]);
    expect((await exchange(session, cookie, write({ n: 1 }))).setCookie).toEqual([]);
    const changed = await exchange(session, cookie, write({ n: 2 }));
    expect(changed.setCookie).toHaveLength(1);
    let read: unknown;
    await exchange(session, changed.cookie, (s) => {
      read = s.n;
    });
    expect(read).toBe(2);
  });

  it('removes the cookie of a session the request emptied', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ n: 1 }));
    const { setCookie } = await exchange(session, cookie, (s) => {
      delete s.n;
    });
    expect(setCookie).toEqual(['openig-jwt-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
  });

  it('reads the valid one when a request carries several cookies of its name', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ n: 7 }));
    let read: unknown;
    await exchange(session, `openig-jwt-session=garbage; ${cookie}`, (s) => {
      read = s.n;
    });
    expect(read).toBe(7);
  });
});

describe('JwtSession refuses cookies it cannot trust', () => {
  it('reads at most four cookies of its name per request (each may be an RSA decryption and a warning)', async () => {
    const { session, logger } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ n: 7 }));
    const garbage = Array.from({ length: 500 }, (_, i) => `openig-jwt-session=bad.${i}.x.y.z`).join('; ');
    let read: unknown;
    await exchange(session, `${garbage}; ${cookie}`, (s) => {
      read = s.n;
    });
    expect(read).toBeUndefined();
    expect(
      logger.records.filter((r) => r.message === 'a JWT session cookie was refused and reset'),
    ).toHaveLength(4);
    // Within the first four, the valid one is still found.
    await exchange(session, `openig-jwt-session=a.b.c.d.e; openig-jwt-session=f.g.h.i.j; ${cookie}`, (s) => {
      read = s.n;
    });
    expect(read).toBe(7);
  });

  it('resets a tampered cookie: empty session, cookie removed, a warning', async () => {
    const { session, logger } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ role: 'user' }));
    const value = cookie!.split('=')[1]!;
    const parts = value.split('.');
    // Flip one character of the ciphertext.
    const text = parts[3]!;
    parts[3] = (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    const tampered = `openig-jwt-session=${parts.join('.')}`;
    let read: Record<string, unknown> | undefined;
    const { setCookie } = await exchange(session, tampered, (s) => {
      read = { ...s };
    });
    expect(read).toEqual({});
    expect(setCookie).toEqual(['openig-jwt-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'a JWT session cookie was refused and reset' }),
    );
  });

  it('resets a refused cookie even when the request does not use the session', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { setCookie } = await exchange(session, 'openig-jwt-session=not.a.jwt.at.all');
    expect(setCookie).toEqual(['openig-jwt-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax']);
  });

  it('refuses a cookie made with another secret', async () => {
    const { session: one } = await sessionFrom({ sharedSecret: SECRET });
    const { session: other } = await sessionFrom({ sharedSecret: randomBytes(32).toString('base64') });
    const { cookie } = await exchange(one, undefined, write({ admin: true }));
    let read: Record<string, unknown> | undefined;
    await exchange(other, cookie, (s) => {
      read = { ...s };
    });
    expect(read).toEqual({});
  });

  it('replaces a refused session with what the request then writes', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { setCookie } = await exchange(session, 'openig-jwt-session=x.y.z', write({ fresh: true }));
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).not.toContain('Max-Age=0');
  });
});

describe('JwtSession settings', () => {
  it('names the cookie with cookieName (default openig-jwt-session)', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET, cookieName: 'IG' });
    const { cookie } = await exchange(session, undefined, write({ a: 1 }));
    expect(cookie).toMatch(/^IG=/);
    let read: unknown;
    await exchange(session, `openig-jwt-session=${cookie!.slice(3)}; ${cookie}`, (s) => {
      read = s.a;
    });
    expect(read).toBe(1);
  });

  it('refuses a cookieName that cannot be a cookie name', async () => {
    await expect(sessionFrom({ cookieName: 'my session' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'config/config.json', jsonPath: '$.heap[0].config.cookieName' },
    });
  });

  it('sets the Domain attribute from cookieDomain, also when removing the cookie', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET, cookieDomain: '.example.com' });
    const { setCookie, cookie } = await exchange(session, undefined, write({ a: 1 }));
    expect(setCookie[0]).toContain('; Domain=.example.com;');
    const removed = await exchange(session, cookie, (s) => {
      delete s.a;
    });
    expect(removed.setCookie[0]).toContain('; Domain=.example.com;');
  });

  it('marks the cookie Secure when cookie.secure says so, also behind a proxy that ends TLS', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET, cookie: { secure: true } });
    // The gateway receives plain http from the load balancer; the user agent speaks https.
    const { setCookie, cookie } = await exchange(session, undefined, write({ a: 1 }), 'http://gw.example/');
    expect(setCookie[0]).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    const removed = await exchange(session, cookie, (data) => {
      delete data.a;
    });
    expect(removed.setCookie[0]).toMatch(/Max-Age=0; HttpOnly; SameSite=Lax; Secure$/);
    const never = (await sessionFrom({ sharedSecret: SECRET, cookie: { secure: false } })).session;
    const overHttps = await exchange(never, undefined, write({ a: 1 }), 'https://gw.example/');
    expect(overHttps.setCookie[0]).not.toContain('Secure');
  });

  it('takes PingGateway’s cookie settings: name, domain, path, sameSite, httpOnly', async () => {
    const { session } = await sessionFrom({
      sharedSecret: SECRET,
      cookie: { name: 'IG', domain: '.example.com', path: '/app', sameSite: 'strict', httpOnly: true },
    });
    const { setCookie } = await exchange(session, undefined, write({ a: 1 }));
    expect(setCookie[0]).toMatch(/^IG=[^;]+; Path=\/app; Domain=\.example\.com; HttpOnly; SameSite=Strict$/);
    const none = (await sessionFrom({ sharedSecret: SECRET, cookie: { sameSite: 'NONE', secure: true } }))
      .session;
    expect((await exchange(none, undefined, write({ a: 1 }))).setCookie[0]).toMatch(/SameSite=None; Secure$/);
  });

  it('refuses cookie settings that would weaken or break the cookie, naming the field', async () => {
    const refused = {
      'cookie.httpOnly': { httpOnly: false },
      'cookie.secure': { sameSite: 'NONE' },
      'cookie.path': { path: '/a; Domain=evil.example' },
      'cookie.domain': { domain: 'example.com; Secure' },
      'cookie.sameSite': { sameSite: 'sometimes' },
    };
    for (const [field, cookie] of Object.entries(refused)) {
      await expect(sessionFrom({ sharedSecret: SECRET, cookie })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: `$.heap[0].config.${field}` },
      });
    }
    await expect(sessionFrom({ cookieName: 'A', cookie: { name: 'B' } })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.cookie' },
    });
    await expect(sessionFrom({ cookieDomain: 'a.example; x' })).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[0].config.cookieDomain' },
    });
  });

  it('expires a session sessionTimeout after it was last changed (default 30 minutes)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(session, undefined, write({ a: 1 }));
    const readAfter = async (minutes: number) => {
      vi.setSystemTime(Date.now() + minutes * 60_000);
      let read: unknown;
      const { setCookie } = await exchange(session, cookie, (s) => {
        read = s.a;
      });
      return { read, setCookie };
    };
    expect((await readAfter(29)).read).toBe(1);
    const expired = await readAfter(2);
    expect(expired.read).toBeUndefined();
    expect(expired.setCookie[0]).toContain('Max-Age=0');
  });

  it('takes sessionTimeout as a duration', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { session } = await sessionFrom({ sharedSecret: SECRET, sessionTimeout: '10 seconds' });
    const { cookie } = await exchange(session, undefined, write({ a: 1 }));
    vi.setSystemTime(Date.now() + 11_000);
    let read: unknown = 'unset';
    await exchange(session, cookie, (s) => {
      read = s.a;
    });
    expect(read).toBeUndefined();
  });

  it('refuses a zero or malformed sessionTimeout, and caps one beyond 3650 days', async () => {
    for (const sessionTimeout of ['zero', 'soon'])
      await expect(sessionFrom({ sessionTimeout })).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.sessionTimeout' },
      });
    const { logger } = await sessionFrom({ sharedSecret: SECRET, sessionTimeout: 'unlimited' });
    expect(logger.records).toContainEqual(
      expect.objectContaining({ message: 'sessionTimeout is longer than 3650 days; 3650 days are used' }),
    );
  });

  it('shares sessions between objects (instances, restarts) with the same sharedSecret', async () => {
    const { session: one } = await sessionFrom({ sharedSecret: SECRET });
    const { session: two } = await sessionFrom({ sharedSecret: SECRET });
    const { cookie } = await exchange(one, undefined, write({ n: 5 }));
    let read: unknown;
    await exchange(two, cookie, (s) => {
      read = s.n;
    });
    expect(read).toBe(5);
  });

  it('refuses a sharedSecret that is not Base64 or shorter than 32 bytes', async () => {
    await expect(sessionFrom({ sharedSecret: 'not base64!' })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[0].config.sharedSecret' },
    });
    await expect(sessionFrom({ sharedSecret: randomBytes(31).toString('base64') })).rejects.toThrow(
      /31 bytes long; at least 32/,
    );
  });

  it('makes a key at startup without sharedSecret or keystore, and says so', async () => {
    const { session: one, logger } = await sessionFrom({});
    const { session: two } = await sessionFrom({});
    expect(logger.records).toContainEqual(
      expect.objectContaining({ level: 'warn', data: { session: 'Session' } }),
    );
    const { cookie } = await exchange(one, undefined, write({ n: 1 }));
    let read: Record<string, unknown> | undefined;
    await exchange(two, cookie, (s) => {
      read = { ...s };
    });
    expect(read).toEqual({});
  });

  it.each(['rsa', 'ec', 'secret'] as const)(
    'encrypts with the %s key of a keystore entry (alias, password)',
    async (entry) => {
      const { session } = await sessionFrom(
        { keystore: 'Keys', alias: ENTRIES[entry], password: 'changeit', sharedSecret: SECRET },
        [KEYS],
      );
      const { cookie } = await exchange(session, undefined, write({ k: entry }));
      let read: unknown;
      await exchange(session, cookie, (s) => {
        read = s.k;
      });
      expect(read).toBe(entry);
      // The keystore's key, not sharedSecret: a session with only the secret cannot read the cookie.
      const { session: secretOnly } = await sessionFrom({ sharedSecret: SECRET });
      await exchange(secretOnly, cookie, (s) => {
        read = s.k;
      });
      expect(read).toBeUndefined();
    },
  );

  it.each(['rsa', 'ec'] as const)(
    'refuses a session forged with only the public key of a %s entry: key-pair sessions are signed too',
    async (entry) => {
      const { session, logger } = await sessionFrom(
        { keystore: 'Keys', alias: ENTRIES[entry], password: 'changeit' },
        [KEYS],
      );
      // The certificate (public key) is no secret: encrypting to it is open to anyone.
      const publicKey = KeyStore.read(readFileSync(KEYS.config.url), 'changeit').certificate(
        ENTRIES[entry],
      )!.publicKey;
      const now = Math.floor(Date.now() / 1000);
      const forged = await new EncryptJWT({ s: { user: 'mallory' } })
        .setProtectedHeader({ alg: entry === 'rsa' ? 'RSA-OAEP-256' : 'ECDH-ES', enc: 'A256GCM' })
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .encrypt(publicKey);
      let read: unknown = 'not read';
      const { setCookie } = await exchange(session, `openig-jwt-session=${forged}`, (s) => {
        read = s.user;
      });
      expect(read).toBeUndefined();
      expect(setCookie).toEqual([expect.stringMatching(/^openig-jwt-session=; .*Max-Age=0/)]);
      expect(logger.records.some((r) => r.message === 'a JWT session cookie was refused and reset')).toBe(
        true,
      );
      // Its own cookies still read.
      const { cookie } = await exchange(session, undefined, write({ user: 'alice' }));
      await exchange(session, cookie, (s) => {
        read = s.user;
      });
      expect(read).toBe('alice');
    },
  );

  it('signs key-pair sessions with sharedSecret when given: another secret cannot read them', async () => {
    const { session: one } = await sessionFrom(
      { keystore: 'Keys', alias: 'jwe-key', password: 'changeit', sharedSecret: SECRET },
      [KEYS],
    );
    const { session: other } = await sessionFrom(
      {
        keystore: 'Keys',
        alias: 'jwe-key',
        password: 'changeit',
        sharedSecret: randomBytes(32).toString('base64'),
      },
      [KEYS],
    );
    const { cookie } = await exchange(one, undefined, write({ user: 'alice' }));
    let read: unknown = 'not read';
    await exchange(other, cookie, (s) => {
      read = s.user;
    });
    expect(read).toBeUndefined();
  });

  it('requires alias with keystore', async () => {
    await expect(sessionFrom({ keystore: 'Keys' }, [KEYS])).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[1].config.alias' },
    });
  });

  it('refuses a keystore that is not one, or an entry that cannot decrypt', async () => {
    await expect(
      sessionFrom({ keystore: 'Keys', alias: 'a' }, [{ name: 'Keys', type: 'TemporaryStorage' }]),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[1].config.keystore' },
    });
    await expect(sessionFrom({ keystore: 'Keys', alias: 'partner' }, [KEYS])).rejects.toMatchObject({
      code: 'PORTICO_E_KEYSTORE_ENTRY',
      message: /is a certificate/,
      details: { jsonPath: '$.heap[1].config.alias' },
    });
    await expect(
      sessionFrom({ keystore: 'Keys', alias: 'jwe-key', password: 'wrong' }, [KEYS]),
    ).rejects.toMatchObject({
      code: 'PORTICO_E_KEYSTORE_PASSWORD',
      message: /the password does not decrypt the keystore entry 'jwe-key'/,
      details: { jsonPath: '$.heap[1].config.alias' },
    });
    await expect(sessionFrom({ keystore: 'Missing', alias: 'a' })).rejects.toMatchObject({
      code: 'PORTICO_E_REFERENCE',
    });
  });

  it('refuses unknown settings', async () => {
    await expect(sessionFrom({ cookiePath: '/app' })).rejects.toMatchObject({
      details: { jsonPath: '$.heap[0].config.cookiePath' },
    });
  });

  it('loads with no config at all, as real configurations declare it', async () => {
    const { heap } = pluginHeap({ plugins: [plugin], heap: [{ name: 'JwtSession', type: 'JwtSession' }] });
    heaps.push(heap);
    await expect(heap.get('JwtSession')).resolves.toBeDefined();
  });
});

describe('JwtSession size and content limits', () => {
  it('refuses, with a clear error, a session too large for a cookie instead of dropping it', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const handle = await session.open(request());
    Object.assign(handle.data(), { small: 'x', profile: randomBytes(3000).toString('base64') });
    const response = Response.empty(200);
    const failure = await Promise.resolve(handle.commit(response)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'PORTICO_E_SESSION' });
    expect(String((failure as Error).message)).toMatch(
      /too large for its cookie 'openig-jwt-session': \d{4,} bytes encrypted, where a cookie holds 4096.*largest entries: profile \d+ bytes/,
    );
    expect(response.headers.has('set-cookie')).toBe(false);
  });

  it('accepts a session just under the limit', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const { setCookie } = await exchange(session, undefined, write({ v: 'x'.repeat(2800) }));
    expect(setCookie[0]!.split(';')[0]!.length).toBeLessThanOrEqual(4096);
  });

  it('refuses a value that cannot be written as JSON', async () => {
    const { session } = await sessionFrom({ sharedSecret: SECRET });
    const handle = await session.open(request());
    handle.data().big = 10n;
    await expect(handle.commit(Response.empty(200))).rejects.toMatchObject({ code: 'PORTICO_E_SESSION' });
  });
});

describe('JwtSession metrics', () => {
  it('counts refused cookies, sessions too large and values JSON cannot write as store jwt, series resolved once', async () => {
    const recorded = recordingMetrics();
    const errors = (reason: string) =>
      recorded.value('portico_session_store_errors_total', 'jwt', reason) ?? 0;
    const { session } = await sessionFrom({ sharedSecret: SECRET }, [], recorded.metrics);
    const afterCreate = recorded.resolved;
    const { cookie } = await exchange(session, undefined, write({ role: 'user' }));
    await exchange(session, cookie, () => {});
    expect(errors('refused')).toBe(0);
    // Tampered: one character of the ciphertext flipped.
    const parts = cookie!.split('=')[1]!.split('.');
    parts[3] = (parts[3]![0] === 'A' ? 'B' : 'A') + parts[3]!.slice(1);
    await exchange(session, `openig-jwt-session=${parts.join('.')}`);
    expect(errors('refused')).toBe(1);
    // Made with another secret; not a JWT at all.
    const { session: other } = await sessionFrom({ sharedSecret: randomBytes(32).toString('base64') });
    await exchange(session, (await exchange(other, undefined, write({ admin: true }))).cookie);
    await exchange(session, 'openig-jwt-session=not.a.jwt.at.all');
    expect(errors('refused')).toBe(3);

    const large = await session.open(request());
    large.data().profile = randomBytes(3000).toString('base64');
    await expect(large.commit(Response.empty(200))).rejects.toMatchObject({ code: 'PORTICO_E_SESSION' });
    const big = await session.open(request());
    big.data().big = 10n;
    await expect(big.commit(Response.empty(200))).rejects.toMatchObject({ code: 'PORTICO_E_SESSION' });
    expect(errors('too_large')).toBe(1);
    expect(errors('not_json')).toBe(1);
    expect(recorded.resolved).toBe(afterCreate);
  });

  it('does not count an expired cookie: its session ended, nothing failed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const recorded = recordingMetrics();
    const { session } = await sessionFrom(
      { sharedSecret: SECRET, sessionTimeout: '10 seconds' },
      [],
      recorded.metrics,
    );
    const { cookie } = await exchange(session, undefined, write({ a: 1 }));
    vi.setSystemTime(Date.now() + 11_000);
    let read: unknown;
    const { setCookie } = await exchange(session, cookie, (s) => {
      read = s.a;
    });
    expect(read).toBeUndefined();
    expect(setCookie[0]).toContain('Max-Age=0');
    expect(recorded.value('portico_session_store_errors_total', 'jwt', 'refused') ?? 0).toBe(0);
  });
});
