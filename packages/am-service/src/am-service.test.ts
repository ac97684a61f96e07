import headerPlugin from '@portico/filter-header';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import secretStores from '@portico/secret-stores';
import { type AmServer, startAmServer } from '@portico/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import plugin, { type AmService, AmSessionInfo, isAmService } from './index.ts';

const FILE = 'config/config.json';
let am: AmServer;

beforeAll(async () => {
  am = await startAmServer({
    users: {
      demo: { password: 'Ch4ng31t', properties: { AuthLevel: '0' } },
      bjensen: { password: 'Secret12', properties: { AuthLevel: '1' } },
    },
  });
});
afterAll(() => am.close());
afterEach(() => am.override(null));

/** An AmService declared as `config`, created through a real heap; its tests destroy the heap. */
async function service(config: Record<string, unknown>, extra: unknown[] = []) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin, headerPlugin, secretStores],
    file: FILE,
    heap: [{ name: 'AM', type: 'AmService', config }, ...extra],
    defaults: [{ name: 'ForgeRockClientHandler', type: 'VendorClientHandler' }],
  });
  const created = await heap.get<AmService>('AM', 'object');
  return { service: created, heap, logger };
}

async function refused(config: Record<string, unknown>) {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [{ name: 'AM', type: 'AmService', config }],
  });
  try {
    return await heap.get('AM', 'object').then(
      () => undefined,
      (error: unknown) => error,
    );
  } finally {
    await heap.destroy();
  }
}

/** The getSessionInfo calls AM received since `from`. */
const sessionCalls = (from = 0) => am.received.slice(from).filter((r) => r.target.includes('getSessionInfo'));

describe('AmService', () => {
  it('asks AM for the session of a token and reads every field of the answer', async () => {
    const { service: amService, heap } = await service({ url: am.url });
    const token = am.login('demo');
    const info = await amService.sessionInfo(testContext(), token);
    expect(info).toBeInstanceOf(AmSessionInfo);
    expect(info.username).toBe('demo');
    expect(info.universalId).toBe('id=demo,ou=user,dc=openam,dc=forgerock,dc=org');
    expect(info.realm).toBe('/');
    expect(info.properties).toMatchObject({ AuthLevel: '0' });
    expect(info.properties.AMCtxId).toMatch(/^[0-9a-f-]{36}$/);
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs(info.latestAccessTime!.epochSecond - now)).toBeLessThanOrEqual(2);
    expect(info.maxIdleExpirationTime!.epochSecond - info.latestAccessTime!.epochSecond).toBe(30 * 60);
    expect(info.maxSessionExpirationTime!.toString()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const call = sessionCalls().at(-1)!;
    expect(call.method).toBe('POST');
    expect(call.target).toBe('/am/json/realms/root/sessions?_action=getSessionInfo');
    expect(call.headers['accept-api-version']).toBe('resource=4.0, protocol=1.0');
    expect(call.headers['content-type']).toBe('application/json');
    expect(call.headers.iplanetdirectorypro).toBe(token);
    expect(JSON.parse(call.body)).toEqual({ tokenId: token });
    expect(isAmService(amService)).toBe(true);
    await heap.destroy();
  });

  it('takes an optional setting whose expression gives null as unset, as the spec says; url stays required', async () => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      properties: { frConfigs: { amUrl: am.url } },
      heap: [
        {
          name: 'AM',
          type: 'AmService',
          config: {
            url: '${frConfigs.amUrl}',
            realm: '${frConfigs.amRealm}',
            ssoTokenHeader: '${frConfigs.ssoCookieName}',
            version: '${frConfigs.version}',
          },
        },
        { name: 'NoUrl', type: 'AmService', config: { url: '${frConfigs.none}' } },
      ],
    });
    const amService = await heap.get<AmService>('AM', 'object');
    expect([amService.url, amService.realm, amService.version]).toEqual([am.url, '/', undefined]);
    expect(amService.sessionsApiVersion).toBe('resource=4.0, protocol=1.0');
    await expect(heap.get('NoUrl', 'object')).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap[1].config.url' },
    });
    await heap.destroy();
  });

  describe('url', () => {
    it('is required', async () => {
      expect(await refused({ realm: '/' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[0].config.url' },
      });
    });

    it('must be an http(s) URL', async () => {
      expect(await refused({ url: 'am.example.com/am' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.url' },
      });
      expect(await refused({ url: 'https://am.example.com/am?x=1' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });

    it('may end in a slash', async () => {
      const { service: amService, heap } = await service({ url: `${am.url}/` });
      expect(amService.realmEndpoint).toBe(`${am.url}/json/realms/root`);
      expect((await amService.sessionInfo(testContext(), am.login('demo'))).username).toBe('demo');
      await heap.destroy();
    });
  });

  describe('realm', () => {
    it('is the root realm by default', async () => {
      const { service: amService, heap } = await service({ url: am.url });
      expect(amService.realm).toBe('/');
      await heap.destroy();
    });

    it('names a sub-realm in the REST paths, with or without its leading slash', async () => {
      for (const realm of ['/alpha/beta', 'alpha/beta', '/alpha/beta/']) {
        const { service: amService, heap } = await service({ url: am.url, realm });
        expect(amService.realm).toBe('/alpha/beta');
        expect(amService.oauth2Endpoint('introspect')).toBe(
          `${am.url}/oauth2/realms/root/realms/alpha/realms/beta/introspect`,
        );
        const from = am.received.length;
        const info = await amService.sessionInfo(testContext(), am.login('bjensen', '/alpha/beta'));
        expect(info.realm).toBe('/alpha/beta');
        expect(sessionCalls(from)[0]!.target).toBe(
          '/am/json/realms/root/realms/alpha/realms/beta/sessions?_action=getSessionInfo',
        );
        await heap.destroy();
      }
    });

    it('refuses an empty realm name', async () => {
      expect(await refused({ url: am.url, realm: '/alpha//beta' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.realm' },
      });
    });
  });

  describe('ssoTokenHeader', () => {
    it('names the header the token goes to AM in', async () => {
      const { service: amService, heap } = await service({ url: am.url, ssoTokenHeader: 'myCookie' });
      const token = am.login('demo');
      const from = am.received.length;
      await amService.sessionInfo(testContext(), token);
      expect(am.received.slice(from).map((r) => r.target)).toEqual([
        '/am/json/realms/root/sessions?_action=getSessionInfo',
      ]);
      expect(sessionCalls(from)[0]!.headers.mycookie).toBe(token);
      expect(await amService.ssoTokenHeader(testContext())).toBe('myCookie');
      await heap.destroy();
    });

    it("is asked of AM's serverinfo when not configured, once", async () => {
      const other = await startAmServer({ cookieName: 'amlbcookie2' });
      try {
        const { service: amService, heap } = await service({ url: other.url });
        expect(await amService.ssoTokenHeader(testContext())).toBe('amlbcookie2');
        const token = other.login('demo');
        await amService.sessionInfo(testContext(), token);
        await amService.sessionInfo(testContext(), token);
        expect(other.received.filter((r) => r.target === '/am/json/serverinfo/*')).toHaveLength(1);
        expect(other.received.at(-1)!.headers.amlbcookie2).toBe(token);
        await heap.destroy();
      } finally {
        await other.close();
      }
    });

    it('is iPlanetDirectoryPro when AM cannot say, asked again later', async () => {
      const { service: amService, heap, logger } = await service({ url: am.url });
      am.override((_request, response) => {
        response.writeHead(503);
        response.end();
      });
      expect(await amService.ssoTokenHeader(testContext())).toBe('iPlanetDirectoryPro');
      expect(logger.records.some((r) => r.level === 'warn' && /SSO token header/.test(r.message))).toBe(true);
      am.override(null);
      const from = am.received.length;
      expect(await amService.ssoTokenHeader(testContext())).toBe('iPlanetDirectoryPro');
      expect(am.received.slice(from).map((r) => r.target)).toEqual(['/am/json/serverinfo/*']);
      await heap.destroy();
    });

    it('must be a header name', async () => {
      expect(await refused({ url: am.url, ssoTokenHeader: 'a cookie' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.ssoTokenHeader' },
      });
    });
  });

  describe('amHandler', () => {
    it('is the heap ForgeRockClientHandler by default, which sends the transaction ID', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      const from = am.received.length;
      await amService.sessionInfo(testContext(), am.login('demo'));
      expect(sessionCalls(from)[0]!.headers['x-forgerock-transactionid']).toBeDefined();
      await heap.destroy();
    });

    it('sends every call to AM through the handler named', async () => {
      const { service: amService, heap } = await service({ url: am.url, amHandler: 'ToAm' }, [
        {
          name: 'ToAm',
          type: 'Chain',
          config: {
            filters: [
              { type: 'HeaderFilter', config: { messageType: 'REQUEST', add: { 'X-Via': ['ToAm'] } } },
            ],
            handler: { type: 'ClientHandler' },
          },
        },
      ]);
      const from = am.received.length;
      await amService.sessionInfo(testContext(), am.login('demo'));
      const calls = am.received.slice(from);
      expect(calls.map((r) => r.target)).toEqual([
        '/am/json/serverinfo/*',
        '/am/json/realms/root/sessions?_action=getSessionInfo',
      ]);
      expect(calls.every((r) => r.headers['x-via'] === 'ToAm')).toBe(true);
      await heap.destroy();
    });

    it('bounds a call to AM with its timeouts', async () => {
      const { service: amService, heap } = await service(
        { url: am.url, ssoTokenHeader: 'iPlanetDirectoryPro', amHandler: 'Slow' },
        [{ name: 'Slow', type: 'ClientHandler', config: { soTimeout: '200 ms' } }],
      );
      am.override(() => {
        // Never answers.
      });
      const started = Date.now();
      await expect(amService.sessionInfo(testContext(), 'AQIC5wtoken')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_UNREACHABLE',
      });
      expect(Date.now() - started).toBeLessThan(5000);
      await heap.destroy();
    });

    it('must be a handler', async () => {
      expect(await refused({ url: am.url, amHandler: 42 })).toMatchObject({
        details: { jsonPath: '$.heap[0].config.amHandler' },
      });
    });
  });

  describe('version', () => {
    it('picks the resource version of the session API: 2.1 before AM 7, 4.0 from AM 7', async () => {
      for (const [version, expected] of [
        ['6.5.1', 'resource=2.1, protocol=1.0'],
        ['6.5', 'resource=2.1, protocol=1.0'],
        ['7.1', 'resource=4.0, protocol=1.0'],
      ] as const) {
        const { service: amService, heap } = await service({
          url: am.url,
          version,
          ssoTokenHeader: 'iPlanetDirectoryPro',
        });
        const from = am.received.length;
        expect((await amService.sessionInfo(testContext(), am.login('demo'))).username).toBe('demo');
        expect(sessionCalls(from)[0]!.headers['accept-api-version']).toBe(expected);
        expect(amService.version).toBe(version);
        await heap.destroy();
      }
    });

    it('must be a version number', async () => {
      expect(await refused({ url: am.url, version: 'seven' })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.version' },
      });
    });
  });

  describe('agent', () => {
    it('is read with a passwordSecretId, or the deprecated password', async () => {
      for (const agent of [
        { username: 'ig-agent', passwordSecretId: 'agent.password' },
        { username: 'ig-agent', password: 'password' },
      ]) {
        const { service: amService, heap } = await service({ url: am.url, agent });
        expect(amService.agent).toMatchObject(agent);
        await heap.destroy();
      }
    });

    it('needs a username and one password setting', async () => {
      expect(await refused({ url: am.url, agent: { passwordSecretId: 'x' } })).toMatchObject({
        details: { jsonPath: '$.heap[0].config.agent.username' },
      });
      expect(await refused({ url: am.url, agent: { username: 'ig-agent' } })).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.agent' },
      });
      expect(
        await refused({ url: am.url, agent: { username: 'ig-agent', password: 'p', passwordSecretId: 'x' } }),
      ).toMatchObject({ code: 'PORTICO_E_CONFIG', details: { jsonPath: '$.heap[0].config.agent' } });
    });

    it('may be left out: session info needs no agent', async () => {
      const { service: amService, heap } = await service({ url: am.url });
      expect(amService.agent).toBeUndefined();
      await heap.destroy();
    });
  });

  describe('sessionCache', () => {
    it('is off by default: every call asks AM', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      const token = am.login('demo');
      const from = am.received.length;
      await amService.sessionInfo(testContext(), token);
      await amService.sessionInfo(testContext(), token);
      expect(sessionCalls(from)).toHaveLength(2);
      await heap.destroy();
    });

    it('keeps session info for maximumTimeToCache when enabled', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
        sessionCache: { enabled: true, maximumTimeToCache: '300 ms' },
      });
      const token = am.login('demo');
      const from = am.received.length;
      const first = await amService.sessionInfo(testContext(), token);
      expect(await amService.sessionInfo(testContext(), token)).toBe(first);
      expect(sessionCalls(from)).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 350));
      await amService.sessionInfo(testContext(), token);
      expect(sessionCalls(from)).toHaveLength(2);
      await heap.destroy();
    });

    it("never keeps it past the session's idle expiry, whatever maximumTimeToCache says (departure 94)", async () => {
      const quick = await startAmServer({ idleMinutes: 2 / 60 });
      try {
        const { service: amService, heap } = await service({
          url: quick.url,
          ssoTokenHeader: 'iPlanetDirectoryPro',
          sessionCache: { enabled: true, maximumTimeToCache: '1 hour' },
        });
        const token = quick.login('demo');
        const info = await amService.sessionInfo(testContext(), token);
        expect(await amService.sessionInfo(testContext(), token)).toBe(info);
        await new Promise((resolve) =>
          setTimeout(resolve, info.maxIdleExpirationTime!.epochMillis - Date.now() + 50),
        );
        // AM has ended the idle session: the cache does not answer for it.
        await expect(amService.sessionInfo(testContext(), token)).rejects.toMatchObject({
          code: 'PORTICO_E_AM_REFUSED',
        });
        await heap.destroy();
      } finally {
        await quick.close();
      }
    });

    it('holds at most maximumSize sessions, the oldest going first', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
        sessionCache: { enabled: true, maximumSize: 1 },
      });
      const [a, b] = [am.login('demo'), am.login('bjensen')];
      const from = am.received.length;
      await amService.sessionInfo(testContext(), a);
      await amService.sessionInfo(testContext(), b);
      await amService.sessionInfo(testContext(), b);
      expect(sessionCalls(from)).toHaveLength(2);
      await amService.sessionInfo(testContext(), a);
      expect(sessionCalls(from)).toHaveLength(3);
      await heap.destroy();
    });

    it('reads its other settings and refuses what is not one', async () => {
      const { heap } = await service({
        url: am.url,
        sessionCache: {
          enabled: true,
          executor: 'ScheduledExecutorService',
          onNotificationDisconnection: 'NEVER_CLEAR',
        },
      });
      await heap.destroy();
      expect(
        await refused({ url: am.url, sessionCache: { onNotificationDisconnection: 'SOMETIMES' } }),
      ).toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.sessionCache.onNotificationDisconnection' },
      });
      expect(await refused({ url: am.url, sessionCache: { maximumSize: 0 } })).toMatchObject({
        details: { jsonPath: '$.heap[0].config.sessionCache.maximumSize' },
      });
      expect(await refused({ url: am.url, sessionCache: { maximumTimeToCache: 'soon' } })).toMatchObject({
        details: { jsonPath: '$.heap[0].config.sessionCache.maximumTimeToCache' },
      });
    });
  });

  describe('the settings read for the filters still to come', () => {
    it('accepts notifications, sessionIdleRefresh, sessionProperties and secretsProvider', async () => {
      const { heap } = await service(
        {
          url: am.url,
          secretsProvider: 'Secrets',
          notifications: { enabled: false, reconnectDelay: '5 seconds', initialConnectionAttempts: 5 },
          sessionIdleRefresh: { enabled: true, interval: '5 seconds' },
          sessionProperties: ['AMCtxId', 'AuthLevel'],
        },
        [
          {
            name: 'Secrets',
            type: 'SecretsProvider',
            config: { stores: [{ type: 'SystemAndEnvSecretStore' }] },
          },
        ],
      );
      await heap.destroy();
      expect(await refused({ url: am.url, secretsProvider: 42 })).toMatchObject({
        details: { jsonPath: '$.heap[0].config.secretsProvider' },
      });
    });

    it('refuses what is not one of them, at its JSON path', async () => {
      for (const [config, path] of [
        [{ notifications: { enabled: 'often' } }, 'notifications.enabled'],
        [{ notifications: { reconnectDelay: 'later' } }, 'notifications.reconnectDelay'],
        [{ notifications: { initialConnectionAttempts: -1 } }, 'notifications.initialConnectionAttempts'],
        [{ notifications: { whenever: true } }, 'notifications.whenever'],
        [{ sessionIdleRefresh: { interval: 'often' } }, 'sessionIdleRefresh.interval'],
        [{ sessionProperties: 'AMCtxId' }, 'sessionProperties'],
        [{ unknown: true }, 'unknown'],
      ] as const) {
        expect(await refused({ url: am.url, ...config }), path).toMatchObject({
          details: { jsonPath: `$.heap[0].config.${path}` },
        });
      }
    });
  });

  describe("AM's failures, coded", () => {
    it('PORTICO_E_AM_REFUSED for a session AM does not know or has ended', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      const token = am.login('demo');
      am.logout(token);
      await expect(amService.sessionInfo(testContext(), token)).rejects.toMatchObject({
        code: 'PORTICO_E_AM_REFUSED',
        message: expect.stringMatching(/answered 401: Access Denied$/),
      });
      await expect(amService.sessionInfo(testContext(), 'AQIC5wnot-a-session')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_REFUSED',
      });
      await heap.destroy();
    });

    it('PORTICO_E_AM_UNREACHABLE for an AM that is down or answers 5xx', async () => {
      const { service: amService, heap } = await service({
        url: 'http://127.0.0.1:9/am',
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      await expect(amService.sessionInfo(testContext(), 'AQIC5wtoken')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_UNREACHABLE',
      });
      await heap.destroy();
      const second = await service({ url: am.url, ssoTokenHeader: 'iPlanetDirectoryPro' });
      am.override((_request, response) => {
        response.writeHead(500, { 'Content-Type': 'application/json' });
        response.end('{"code":500,"reason":"Internal Server Error","message":"Internal Server Error"}');
      });
      await expect(second.service.sessionInfo(testContext(), 'AQIC5wtoken')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_UNREACHABLE',
      });
      await second.heap.destroy();
    });

    it('PORTICO_E_AM_ANSWER for an answer that is not JSON, or too large', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      am.override((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'text/html' });
        response.end('<html>login</html>');
      });
      await expect(amService.sessionInfo(testContext(), 'AQIC5wtoken')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_ANSWER',
      });
      am.override((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify({ username: 'demo', properties: { big: 'x'.repeat(100_000) } }));
      });
      await expect(amService.sessionInfo(testContext(), 'AQIC5wtoken')).rejects.toMatchObject({
        code: 'PORTICO_E_AM_ANSWER',
      });
      await heap.destroy();
    });

    it('never puts the token in an error message', async () => {
      const { service: amService, heap } = await service({
        url: am.url,
        ssoTokenHeader: 'iPlanetDirectoryPro',
      });
      const error = await amService.sessionInfo(testContext(), 'AQIC5wsecret-token').catch((e: Error) => e);
      expect((error as Error).message).not.toContain('secret-token');
      await heap.destroy();
    });
  });
});
