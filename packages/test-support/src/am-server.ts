import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { type ReceivedRequest, startUpstream } from './upstream.ts';

/**
 * A STAND-IN for an access management server (the incumbents' AM), which is a commercial product
 * that cannot run in this repository's tests. It is not AM: it is a small HTTP server written here
 * that answers the few REST endpoints of AM's published API that Portico's AmService calls, in the
 * shapes AM documents for them, so that the gateway's side can be tested against a real server over
 * real sockets. What it serves, under `/am` (the deployment path AM's examples use):
 *
 * - `POST /json/realms/root[/realms/<sub>...]/authenticate` with the `X-OpenAM-Username` and
 *   `X-OpenAM-Password` headers (zero-page login): `{ tokenId, successUrl, realm }`, or 401.
 * - `POST .../sessions?_action=getSessionInfo`: the session of the `tokenId` in the body (else of
 *   the token in the SSO token header, as AM reads it): `username`, `universalId`, `realm`,
 *   `latestAccessTime`, `maxIdleExpirationTime`, `maxSessionExpirationTime` (ISO 8601 instants,
 *   whole seconds) and `properties`; 401 for a session it does not know, as AM refuses an invalid
 *   session.
 * - `GET /json/serverinfo/*`: the server's settings, of which the SSO token cookie name.
 *
 * As AM, a POST under `/json` must carry `Accept-API-Version` (or `X-Requested-With`), else 403
 * (AM's CSRF check); a resource version it does not serve is 404. Errors are AM's JSON form,
 * `{ code, reason, message }`. Whatever else AM does (trees, policies, notifications) it lacks.
 */
export interface AmServer {
  /** `http://127.0.0.1:<port>/am`: what an AmService's `url` names. */
  readonly url: string;
  /** The SSO token cookie (and header) name it reports; `iPlanetDirectoryPro` unless told. */
  readonly cookieName: string;
  /** Every request it received, in order. */
  readonly received: AmRequest[];
  /** Logs a user in (as `authenticate` does) and returns the session's token. */
  login(username: string, realm?: string): string;
  /** Ends a session: later calls about its token are refused as AM refuses an invalid session. */
  logout(token: string): void;
  /** Answers the next requests with `answer` instead (an outage, a slow or a huge answer); null restores. */
  override(answer: ((request: AmRequest, response: ServerResponse) => void) | null): void;
  close(): Promise<void>;
}

/** One request as the stand-in received it. */
export type AmRequest = ReceivedRequest;

export interface AmServerOptions {
  /** Users by name: their password and session properties. Default: `demo` / `Ch4ng31t`. */
  users?: Record<string, { password: string; properties?: Record<string, string> }>;
  /** The cookie name `serverinfo` reports. */
  cookieName?: string;
  /** Idle timeout of a session, in minutes (AM's default: 30). */
  idleMinutes?: number;
  /** Maximum session time, in minutes (AM's default: 120). */
  maxMinutes?: number;
}

interface Session {
  username: string;
  realm: string;
  created: number;
  lastAccess: number;
  properties: Record<string, string>;
}

/** Resource versions of the endpoints it serves (major versions AM has had for them). */
const SERVED_VERSIONS: Record<string, readonly number[]> = {
  authenticate: [1, 2],
  sessions: [1, 2, 3, 4, 5],
  serverinfo: [1],
};

const REALM_PATH = /^\/am\/json\/realms\/root((?:\/realms\/[^/?]+)*)\/([a-z]+)(?:\/\*)?\/?(?:\?(.*))?$/;

export async function startAmServer(options: AmServerOptions = {}): Promise<AmServer> {
  const users = options.users ?? { demo: { password: 'Ch4ng31t' } };
  const cookieName = options.cookieName ?? 'iPlanetDirectoryPro';
  const idle = (options.idleMinutes ?? 30) * 60_000;
  const max = (options.maxMinutes ?? 120) * 60_000;
  const sessions = new Map<string, Session>();
  let overridden: ((request: AmRequest, response: ServerResponse) => void) | null = null;

  const newSession = (username: string, realm: string): string => {
    // AM's tokens are opaque strings with `*` separators; this keeps the shape, not the content.
    const token = `AQIC5w${randomBytes(24).toString('base64url')}.*AAJTSQACMDEAAlNLABQ*`;
    // Whole seconds, as AM reports its times: a session ends when its answer says it does.
    const now = Math.floor(Date.now() / 1000) * 1000;
    sessions.set(token, {
      username,
      realm,
      created: now,
      lastAccess: now,
      properties: { AMCtxId: randomUUID(), ...(users[username]?.properties ?? {}) },
    });
    return token;
  };

  const liveSession = (token: string | undefined): Session | undefined => {
    if (token === undefined) return undefined;
    const session = sessions.get(token);
    if (session === undefined) return undefined;
    const now = Date.now();
    if (now >= session.lastAccess + idle || now >= session.created + max) {
      sessions.delete(token);
      return undefined;
    }
    return session;
  };

  const serve = (request: AmRequest, response: ServerResponse) => {
    if (request.target === '/am/json/serverinfo/*' && request.method === 'GET') {
      return json(response, 200, {
        domains: [],
        protectedUserAttributes: [],
        cookieName,
        secureCookie: false,
        forgotPassword: 'false',
        selfRegistration: 'false',
        lang: 'en',
        successfulUserRegistrationDestination: 'default',
        socialImplementations: [],
        referralsEnabled: 'false',
        zeroPageLogin: { enabled: true, refererWhitelist: [], allowedWithoutReferer: true },
        realm: '/',
        xuiUserSessionValidationEnabled: true,
        fileBasedConfiguration: true,
        userIdAttributes: [],
      });
    }
    const match = REALM_PATH.exec(request.target);
    if (match === null) return error(response, 404, 'Not Found', 'Resource not found');
    const realm = realmOf(match[1] ?? '');
    const endpoint = match[2]!;
    const query = new URLSearchParams(match[3] ?? '');
    if (request.method === 'POST' && !csrfSafe(request.headers))
      return error(response, 403, 'Forbidden', 'CSRF attempt detected');
    const version = requestedVersion(request.headers['accept-api-version']);
    if (version !== undefined && !(SERVED_VERSIONS[endpoint] ?? []).includes(Math.floor(version)))
      return error(
        response,
        404,
        'Not Found',
        `Accept-API-Version: Requested version "${version.toFixed(1)}" does not match any routes.`,
      );
    if (endpoint === 'authenticate' && request.method === 'POST') {
      const username = header(request.headers, 'x-openam-username');
      const password = header(request.headers, 'x-openam-password');
      if (username === undefined || users[username]?.password !== password)
        return error(response, 401, 'Unauthorized', 'Authentication Failed');
      return json(response, 200, { tokenId: newSession(username, realm), successUrl: '/am/console', realm });
    }
    if (endpoint === 'sessions' && request.method === 'POST') {
      const action = query.get('_action');
      if (action !== 'getSessionInfo')
        return error(response, 501, 'Not Implemented', `Action '${action}' not implemented`);
      let body: unknown;
      try {
        body = request.body === '' ? {} : JSON.parse(request.body);
      } catch {
        return error(
          response,
          400,
          'Bad Request',
          'The request could not be processed because the provided content is not valid JSON',
        );
      }
      const tokenId = (body as { tokenId?: unknown }).tokenId;
      const token = typeof tokenId === 'string' ? tokenId : header(request.headers, cookieName.toLowerCase());
      const session = liveSession(token);
      if (session === undefined) return error(response, 401, 'Unauthorized', 'Access Denied');
      const instant = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
      return json(response, 200, {
        username: session.username,
        universalId: `id=${session.username},ou=user,${session.realm === '/' ? 'dc=openam,dc=forgerock,dc=org' : `o=${session.realm.slice(1).replaceAll('/', ',o=')},ou=services,dc=openam,dc=forgerock,dc=org`}`,
        realm: session.realm,
        latestAccessTime: instant(session.lastAccess),
        maxIdleExpirationTime: instant(session.lastAccess + idle),
        maxSessionExpirationTime: instant(session.created + max),
        properties: session.properties,
      });
    }
    return error(response, 405, 'Method Not Allowed', 'Method not allowed');
  };

  const upstream = await startUpstream((request, response) => {
    if (overridden !== null) overridden(request, response);
    else serve(request, response);
  });
  return {
    url: `${upstream.url}/am`,
    cookieName,
    received: upstream.received,
    login: (username, realm = '/') => newSession(username, realm),
    logout: (token) => {
      sessions.delete(token);
    },
    override: (answer) => {
      overridden = answer;
    },
    close: () => upstream.close(),
  };
}

/** `/realms/a/realms/b` → `/a/b`; nothing → `/`. */
function realmOf(path: string): string {
  const names = path
    .split('/realms/')
    .filter((name) => name !== '')
    .map((name) => decodeURIComponent(name));
  return `/${names.join('/')}`;
}

function csrfSafe(headers: IncomingHttpHeaders): boolean {
  return headers['accept-api-version'] !== undefined || headers['x-requested-with'] !== undefined;
}

/** The resource version of an `Accept-API-Version` header (`resource=4.0, protocol=1.0`). */
function requestedVersion(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const found = text === undefined ? null : /resource=(\d+(?:\.\d+)?)/.exec(text);
  return found === null ? undefined : Number(found[1]);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json;charset=UTF-8',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

function error(response: ServerResponse, code: number, reason: string, message: string): void {
  json(response, code, { code, reason, message });
}
