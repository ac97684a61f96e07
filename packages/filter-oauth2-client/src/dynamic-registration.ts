import { type Handler, Request } from '@portico/gateway-core';
import { ClientObject, ClientState } from './client.ts';
import type { ClientCredentials } from './client-auth.ts';
import { type IssuerObject, type IssuerState, isIssuerObject } from './issuer.ts';
import { asOAuth2Error, oauth2Error } from './oauth2-errors.ts';
import { assertSecure, endpointOf, send, type Transport } from './provider-fetch.ts';
import { OAuth2Error, type RegisterClient } from './registration.ts';

/** Registrations made per issuer, by the metadata they were made with. */
const made = new WeakMap<IssuerState, Map<string, Promise<ClientState>>>();

/**
 * The seam's RegisterClient: RFC 7591 dynamic registration at the issuer's `registration_endpoint`
 * with the filter's `metadata` (its `scopes` sent as `scope`; `grant_types` authorization_code and
 * refresh_token unless the metadata names them). The registration is kept per issuer and metadata:
 * the next login at the same issuer uses it instead of registering again.
 */
export const registerClient: RegisterClient = async (input) => {
  if (!isIssuerObject(input.issuer))
    throw oauth2Error(
      'server_error',
      `the issuer ${input.issuer.name} was not made by @portico/filter-oauth2-client`,
    );
  const issuer: IssuerObject = input.allowHttp === true ? input.issuer.allowingHttp() : input.issuer;
  const key = JSON.stringify(sorted(input.metadata));
  let kept = made.get(issuer.state);
  if (kept === undefined) made.set(issuer.state, (kept = new Map()));
  let registration = kept.get(key);
  if (registration === undefined) {
    registration = register(issuer, input.metadata, input.handler);
    kept.set(key, registration);
    registration.catch(() => {
      if (kept.get(key) === registration) kept.delete(key);
    });
  }
  return new ClientObject(await registration, issuer);
};

async function register(
  issuer: IssuerObject,
  metadata: Record<string, unknown>,
  handler: Handler,
): Promise<ClientState> {
  const transport: Transport = { handler: async () => handler, allowHttp: issuer.allowHttp };
  try {
    const endpoint = await issuer.endpoint('registration_endpoint', 'registration endpoint');
    assertSecure(endpoint, transport.allowHttp, 'registration endpoint');
    const { scopes: _scopes, ...sent } = metadata;
    const scopes = scopesOf(metadata);
    if (scopes.length > 0 && sent.scope === undefined) sent.scope = scopes.join(' ');
    sent.grant_types ??= ['authorization_code', 'refresh_token'];
    sent.response_types ??= ['code'];
    const response = await send(
      transport,
      new Request({
        method: 'POST',
        uri: endpoint,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        entity: JSON.stringify(sent),
      }),
    );
    let answer: Record<string, unknown> = {};
    try {
      const json: unknown = await response.json();
      if (typeof json === 'object' && json !== null && !Array.isArray(json))
        answer = json as Record<string, unknown>;
    } catch {
      // An answer that is not JSON is judged by its status below.
    }
    if (response.status !== 201 && response.status !== 200) {
      if (typeof answer.error === 'string')
        throw new OAuth2Error({
          error: answer.error,
          ...(typeof answer.error_description === 'string'
            ? { error_description: answer.error_description }
            : {}),
        });
      throw oauth2Error(
        'server_error',
        `the registration endpoint ${endpointOf(endpoint)} answered ${response.status}`,
      );
    }
    if (typeof answer.client_id !== 'string' || answer.client_id === '')
      throw oauth2Error(
        'server_error',
        `the registration endpoint ${endpointOf(endpoint)} answered no client_id`,
      );
    const identity = { clientId: answer.client_id, credentials: credentialsOf(answer) };
    return new ClientState({
      name: issuer.name,
      identity: async () => identity,
      issuer,
      scopes,
      pkceMethod: 'S256',
      handler: transport.handler,
    });
  } catch (error) {
    throw asOAuth2Error(error, 'the dynamic registration');
  }
}

/** How the registered client authenticates: as the registration answer says (client_secret_basic by default). */
function credentialsOf(answer: Record<string, unknown>): ClientCredentials {
  const secret = typeof answer.client_secret === 'string' ? answer.client_secret : undefined;
  const method = answer.token_endpoint_auth_method;
  if (secret === undefined && (method === undefined || method === 'none')) return { method: 'none' };
  if (secret !== undefined && (method === undefined || method === 'client_secret_basic'))
    return { method: 'client_secret_basic', secret };
  if (secret !== undefined && method === 'client_secret_post') return { method, secret };
  throw oauth2Error(
    'server_error',
    `the registered client is to authenticate by ${String(method)}, which the gateway cannot do with what it was given`,
  );
}

function scopesOf(metadata: Record<string, unknown>): string[] {
  if (Array.isArray(metadata.scopes))
    return metadata.scopes.filter((s): s is string => typeof s === 'string');
  if (typeof metadata.scope === 'string') return metadata.scope.split(' ').filter((s) => s !== '');
  return [];
}

/** The metadata with its keys in order, so that equal metadata makes one key. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}
