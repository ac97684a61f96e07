import type { Handler } from '@portico/gateway-core';
import {
  type DiscoverIssuer,
  OAuth2Error,
  type RegisterClient,
  type RegistrationHandle,
} from './registration.ts';

/** What `/login?discovery=` needs: the discovery and registration functions and their settings. */
export interface DiscoverySettings {
  discover: DiscoverIssuer | undefined;
  register: RegisterClient | undefined;
  /** The `discoveryHandler`, or the heap's ClientHandler. */
  handler: () => Promise<Handler>;
  /** The client metadata of dynamic registration; without it, only configured registrations are used. */
  metadata: Record<string, unknown> | undefined;
  /** Plain-HTTP issuers accepted (the filter's `requireHttps: false`). */
  allowHttp: boolean;
}

const invalidRequest = (description: string) =>
  new OAuth2Error({ error: 'invalid_request', error_description: description });

/** The domain of a discovery input: an e-mail address's, a URL's host, or the input itself taken as a host. */
export function domainOf(input: string): string {
  const at = input.lastIndexOf('@');
  if (at >= 0) return input.slice(at + 1).toLowerCase();
  try {
    return new URL(input).hostname.toLowerCase();
  } catch {
    return input.toLowerCase();
  }
}

/** `text` without the slashes it ends with (a loop: the input is the client's). */
function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '/') end--;
  return text.slice(0, end);
}

/**
 * The registrations a filter logs users in with: those its configuration names, and those it made
 * by dynamic registration at issuers found by discovery (kept for the filter's life, one per issuer,
 * so that the callback finds them by name).
 */
export class Registrations {
  readonly #byName = new Map<string, RegistrationHandle>();
  readonly #configured: readonly RegistrationHandle[];
  readonly #discovery: DiscoverySettings;
  /** Dynamic registrations by issuer identifier, shared by concurrent logins. */
  readonly #dynamic = new Map<string, Promise<RegistrationHandle>>();

  constructor(configured: readonly RegistrationHandle[], discovery: DiscoverySettings) {
    this.#configured = configured;
    this.#discovery = discovery;
    for (const registration of configured) this.#byName.set(registration.name, registration);
  }

  byName(name: string): RegistrationHandle | undefined {
    return this.#byName.get(name);
  }

  /** The one configured registration, when there is exactly one. */
  get single(): RegistrationHandle | undefined {
    return this.#configured.length === 1 ? this.#configured[0] : undefined;
  }

  /**
   * The registration for a user who typed `input` (an e-mail address, a host, an issuer URL): a
   * configured one whose issuer supports the input's domain or is the input. Only given `metadata`
   * does the filter look further: the issuer discovery finds at the input's host, with a configured
   * registration at it or one made there by dynamic registration. Without `metadata` nothing is
   * fetched from a host the client names (departure 64).
   */
  async byDiscovery(input: string): Promise<RegistrationHandle> {
    const domain = domainOf(input);
    const supporting = this.#configured.find((r) => r.issuer.supportsDomain(domain));
    if (supporting !== undefined) return supporting;
    const { discover, register, metadata } = this.#discovery;
    if (metadata === undefined || discover === undefined || register === undefined) {
      const named = await this.#configuredAt(input);
      if (named !== undefined) return named;
      throw invalidRequest(`no registration supports the domain ${domain}`);
    }
    const handler = await this.#discovery.handler();
    const { allowHttp } = this.#discovery;
    const issuer = await discover({ issuerUrl: input, handler, allowHttp });
    const identifier = await issuer.identifier();
    for (const registration of this.#configured)
      if ((await registration.issuer.identifier().catch(() => undefined)) === identifier) return registration;
    return this.#registerAt(identifier, () => register({ issuer, metadata, handler, allowHttp }));
  }

  /** The configured registration whose issuer identifier is `input` (a trailing slash aside). */
  async #configuredAt(input: string): Promise<RegistrationHandle | undefined> {
    const wanted = withoutTrailingSlashes(input);
    for (const registration of this.#configured) {
      const identifier = await registration.issuer.identifier().catch(() => undefined);
      if (identifier !== undefined && withoutTrailingSlashes(identifier) === wanted) return registration;
    }
    return undefined;
  }

  #registerAt(identifier: string, register: () => Promise<RegistrationHandle>): Promise<RegistrationHandle> {
    let registration = this.#dynamic.get(identifier);
    if (registration === undefined) {
      registration = register().then((made) => {
        this.#byName.set(made.name, made);
        return made;
      });
      // A registration that failed is tried again by the next login.
      registration.catch(() => this.#dynamic.delete(identifier));
      this.#dynamic.set(identifier, registration);
    }
    return registration;
  }
}
