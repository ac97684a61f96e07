import type { Handler } from '@portico/gateway-core';
import { type IssuerMetadata, IssuerObject, IssuerState } from './issuer.ts';
import { asOAuth2Error, oauth2Error } from './oauth2-errors.ts';
import { getJson, ProviderFetchError, type Transport } from './provider-fetch.ts';
import type { DiscoverIssuer } from './registration.ts';

const WELL_KNOWN = '/.well-known/openid-configuration';
const ISSUER_REL = 'http://openid.net/specs/connect/1.0/issuer';
/** The longest user input discovery starts from. */
const MAX_INPUT = 2048;
/** Issuers found by discovery kept per discovery handler (the oldest let go first). */
const MAX_KEPT = 100;

/**
 * The discovery document at `url`, checked: a JSON object naming its `issuer` (equal to `expected`
 * when given, as OpenID Connect Discovery §4.3 requires) and its authorization and token endpoints.
 */
export async function fetchMetadata(
  transport: Transport,
  url: string,
  expected?: string,
): Promise<IssuerMetadata> {
  const json = await getJson(transport, url, 'discovery endpoint');
  const where = `the discovery document at ${url}`;
  if (typeof json.issuer !== 'string' || json.issuer === '')
    throw new ProviderFetchError(`${where} names no issuer`);
  if (expected !== undefined && withoutSlash(json.issuer) !== withoutSlash(expected))
    throw new ProviderFetchError(`${where} names the issuer '${json.issuer}', not '${expected}'`);
  for (const key of ['authorization_endpoint', 'token_endpoint'])
    if (typeof json[key] !== 'string') throw new ProviderFetchError(`${where} has no ${key}`);
  return json as IssuerMetadata;
}

function withoutSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

const discovered = new WeakMap<Handler, Map<string, Promise<IssuerObject>>>();

/**
 * The seam's DiscoverIssuer: the issuer of the user's input (an e-mail address, a host[:port] or a
 * URL). An e-mail address is first asked of its domain's WebFinger (RFC 7033, over HTTPS); when
 * that names no issuer, or for a host, the issuer is `https://<host>`. Its discovery document
 * (`<issuer>/.well-known/openid-configuration`) must name that same issuer. Issuers found are kept
 * per discovery handler, so that the next user of the same provider costs no request.
 */
export const discoverIssuer = (async (input: Parameters<DiscoverIssuer>[0]): Promise<IssuerObject> => {
  const allowHttp = input.allowHttp === true;
  const transport: Transport = { handler: async () => input.handler, allowHttp };
  let issuer: string;
  try {
    issuer = await issuerOf(input.issuerUrl.trim(), transport);
  } catch (error) {
    throw asOAuth2Error(error, 'the discovery');
  }
  let kept = discovered.get(input.handler);
  if (kept === undefined) discovered.set(input.handler, (kept = new Map()));
  let found = kept.get(issuer);
  if (found === undefined) {
    const state = new IssuerState({
      name: issuer,
      wellKnownEndpoint: `${withoutSlash(issuer)}${WELL_KNOWN}`,
      expectedIdentifier: issuer,
      endpoints: {},
      handler: transport.handler,
      supportedDomains: [],
      skewSeconds: 0,
    });
    const view = new IssuerObject(state, allowHttp);
    found = view.identifier().then(() => view);
    kept.set(issuer, found);
    if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
    found.catch(() => {
      if (kept.get(issuer) === found) kept.delete(issuer);
    });
  }
  const issuerObject = await found;
  const view = allowHttp ? issuerObject.allowingHttp() : new IssuerObject(issuerObject.state);
  // The kept metadata, checked against this caller's requireHttps.
  await view.identifier();
  return view;
}) satisfies DiscoverIssuer;

/** The issuer URL the input names. */
async function issuerOf(input: string, transport: Transport): Promise<string> {
  if (input === '' || input.length > MAX_INPUT)
    throw oauth2Error('invalid_request', 'the discovery input is empty or too long');
  const at = input.lastIndexOf('@');
  if (at > 0 && !input.includes('/')) {
    const host = input.slice(at + 1);
    if (!URL.canParse(`https://${host}`)) throw oauth2Error('invalid_request', `'${host}' is not a domain`);
    const finger = await webFinger(input, host, transport);
    return finger ?? new URL(`https://${host}`).origin;
  }
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? input : `https://${input}`;
  if (!URL.canParse(url))
    throw oauth2Error('invalid_request', `'${input}' is no URL, host or e-mail address`);
  const parsed = new URL(url);
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '')
    throw oauth2Error('invalid_request', 'an issuer URL has no query, fragment or user');
  const path = parsed.pathname.endsWith(WELL_KNOWN)
    ? parsed.pathname.slice(0, -WELL_KNOWN.length)
    : parsed.pathname;
  return withoutSlash(`${parsed.origin}${path}`);
}

/** The issuer the domain's WebFinger names for the account, or undefined when it names none. */
async function webFinger(account: string, host: string, transport: Transport): Promise<string | undefined> {
  const url = new URL(`https://${host}/.well-known/webfinger`);
  url.searchParams.set('resource', `acct:${account}`);
  url.searchParams.set('rel', ISSUER_REL);
  try {
    const json = await getJson({ ...transport, allowHttp: false }, url.href, 'WebFinger endpoint');
    const links = Array.isArray(json.links) ? (json.links as Record<string, unknown>[]) : [];
    const href = links.find((link) => link?.rel === ISSUER_REL)?.href;
    return typeof href === 'string' && URL.canParse(href) ? withoutSlash(href) : undefined;
  } catch {
    return undefined;
  }
}
