import amServicePlugin from '@portico/am-service';
import headerPlugin from '@portico/filter-header';
import { type Handler, Request } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { type AmServer, startAmServer, upstreamForSuite } from '@portico/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'routes/session-info.json';
const upstream = upstreamForSuite();
let am: AmServer;

beforeAll(async () => {
  am = await startAmServer({
    users: { demo: { password: 'Ch4ng31t', properties: { AuthLevel: '2' } } },
  });
});
afterAll(() => am.close());
afterEach(() => am.override(null));

/** What the filters after it see, sent upstream in headers: the corpus's own reads of the context. */
const tellSession = {
  type: 'HeaderFilter',
  config: {
    messageType: 'REQUEST',
    add: {
      'X-User': ['${contexts.amSession.username}'],
      'X-Uid': ['${contexts.amSession.universalId}'],
      'X-Realm': ['${contexts.amSession.realm}'],
      'X-Iat': ['${contexts.amSession.latestAccessTime.epochSecond}'],
      'X-Exp': ['${contexts.amSession.maxIdleExpirationTime.epochSecond}'],
      'X-Max': ['${contexts.amSession.maxSessionExpirationTime}'],
      'X-Auth-Level': ['${contexts.amSession.properties.AuthLevel}'],
      'X-Raw': ["${contexts.amSession.asJsonValue()['username']}"],
      'X-Has-Session': ['${not empty contexts.amSession}'],
    },
  },
};

function chainWith(filter: Record<string, unknown>, amService: Record<string, unknown> = { url: am.url }) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin, amServicePlugin, headerPlugin],
    file: FILE,
    heap: [
      { name: 'AM', type: 'AmService', config: amService },
      { name: 'SessionInfo', type: 'SessionInfoFilter', config: filter },
      {
        name: 'Main',
        type: 'Chain',
        config: { filters: ['SessionInfo', tellSession], handler: { type: 'ClientHandler' } },
      },
    ],
    defaults: [{ name: 'ForgeRockClientHandler', type: 'VendorClientHandler' }],
  });
  return { heap, logger, chain: () => heap.get<Handler>('Main', 'handler') };
}

async function send(
  filter: Record<string, unknown>,
  headers: Record<string, string>,
  amService?: Record<string, unknown>,
) {
  const { heap, chain, logger } = chainWith(filter, amService);
  const before = upstream.received.length;
  try {
    const response = await (await chain()).handle(
      testContext(),
      new Request({ uri: `${upstream.url}/app`, headers }),
    );
    await response.entity.text();
    return { response, received: upstream.received.slice(before).at(0), logger };
  } finally {
    await heap.destroy();
  }
}

describe('SessionInfoFilter', () => {
  it("hands AM's session info on as contexts.amSession, the token read from AM's cookie by default", async () => {
    const token = am.login('demo');
    const { response, received } = await send(
      { amService: 'AM' },
      { Cookie: `iPlanetDirectoryPro=${token}` },
    );
    expect(response.status).toBe(200);
    const headers = received!.headers;
    expect(headers['x-user']).toBe('demo');
    expect(headers['x-uid']).toBe('id=demo,ou=user,dc=openam,dc=forgerock,dc=org');
    expect(headers['x-realm']).toBe('/');
    expect(headers['x-auth-level']).toBe('2');
    expect(headers['x-raw']).toBe('demo');
    expect(headers['x-has-session']).toBe('true');
    const iat = Number(headers['x-iat']);
    expect(Math.abs(iat - Date.now() / 1000)).toBeLessThan(3);
    expect(Number(headers['x-exp']) - iat).toBe(30 * 60);
    expect(headers['x-max']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const call = am.received.filter((r) => r.target.includes('getSessionInfo')).at(-1)!;
    expect(call.headers.iplanetdirectorypro).toBe(token);
  });

  describe('amService', () => {
    it('is required', async () => {
      await expect(chainWith({}).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: FILE, jsonPath: '$.heap[1].config.amService' },
      });
    });

    it('must name an AmService', async () => {
      await expect(chainWith({ amService: 'Main' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_REFERENCE',
        details: { jsonPath: '$.heap[1].config.amService' },
      });
    });

    it("decides the default cookie: the AmService's ssoTokenHeader", async () => {
      const token = am.login('demo');
      const { received } = await send(
        { amService: 'AM' },
        { Cookie: `iPlanetDirectoryPro=wrong; amSso=${token}` },
        { url: am.url, ssoTokenHeader: 'amSso' },
      );
      expect(received!.headers['x-user']).toBe('demo');
    });

    it("decides the default cookie: the name AM's serverinfo reports when none is configured", async () => {
      const other = await startAmServer({ cookieName: 'otherCookie' });
      try {
        const token = other.login('demo');
        const { received } = await send(
          { amService: 'AM' },
          { Cookie: `otherCookie=${token}` },
          { url: other.url },
        );
        expect(received!.headers['x-user']).toBe('demo');
      } finally {
        await other.close();
      }
    });
  });

  describe('ssoToken', () => {
    it('is evaluated per request when given', async () => {
      const token = am.login('demo');
      const { received } = await send(
        { amService: 'AM', ssoToken: "${request.headers['X-Sso'][0]}" },
        { 'X-Sso': token, Cookie: 'iPlanetDirectoryPro=not-this-one' },
      );
      expect(received!.headers['x-user']).toBe('demo');
    });

    it('must be an expression that compiles', async () => {
      await expect(
        chainWith({ amService: 'AM', ssoToken: '${request.headers[' }).chain(),
      ).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[1].config.ssoToken' },
      });
    });
  });

  describe('without a token', () => {
    it('goes on without contexts.amSession, asking AM nothing', async () => {
      const from = am.received.filter((r) => r.target.includes('getSessionInfo')).length;
      for (const filter of [
        { amService: 'AM' },
        { amService: 'AM', ssoToken: "${request.headers['X-Sso'][0]}" },
      ]) {
        const { response, received } = await send(
          filter,
          {},
          { url: am.url, ssoTokenHeader: 'iPlanetDirectoryPro' },
        );
        expect(response.status).toBe(200);
        expect(received!.headers['x-has-session']).toBe('false');
        expect(received!.headers['x-user']).toBeUndefined();
      }
      expect(am.received.filter((r) => r.target.includes('getSessionInfo'))).toHaveLength(from);
    });
  });

  describe("AM's failures answer 500, logged with their code, and the request goes no further", () => {
    it('a session AM does not know, or has ended', async () => {
      const token = am.login('demo');
      am.logout(token);
      const { response, received, logger } = await send(
        { amService: 'AM' },
        { Cookie: `iPlanetDirectoryPro=${token}` },
      );
      expect(response.status).toBe(500);
      expect(received).toBeUndefined();
      expect(logger.records.find((r) => r.level === 'error')?.data).toMatchObject({
        code: 'PORTICO_E_AM_REFUSED',
      });
    });

    it('an AM that cannot be reached', async () => {
      const { response, received, logger } = await send(
        { amService: 'AM' },
        { Cookie: 'iPlanetDirectoryPro=AQIC5wtoken' },
        { url: 'http://127.0.0.1:9/am', ssoTokenHeader: 'iPlanetDirectoryPro' },
      );
      expect(response.status).toBe(500);
      expect(received).toBeUndefined();
      expect(logger.records.find((r) => r.level === 'error')?.data).toMatchObject({
        code: 'PORTICO_E_AM_UNREACHABLE',
      });
    });

    it('an answer that is not session info', async () => {
      am.override((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'text/html' });
        response.end('<html>maintenance</html>');
      });
      const { response, logger } = await send(
        { amService: 'AM' },
        { Cookie: 'iPlanetDirectoryPro=AQIC5wtoken' },
        { url: am.url, ssoTokenHeader: 'iPlanetDirectoryPro' },
      );
      expect(response.status).toBe(500);
      expect(logger.records.find((r) => r.level === 'error')?.data).toMatchObject({
        code: 'PORTICO_E_AM_ANSWER',
      });
    });
  });
});
