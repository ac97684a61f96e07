import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Tokens } from './registration.ts';

/**
 * What the filter keeps in the user's session: one record per client endpoint, under
 * `oauth2:<clientEndpoint>` (the incumbents' key), holding one entry per registration. An entry has
 * the login in flight at that registration (`state`, `nonce`, PKCE verifier, `goto`) and, once the
 * callback has been answered, the tokens. Only plain JSON, and only what cannot be recomputed (the
 * ID token's claims are read again from the ID token), so that a cookie session stays small.
 */

/** A login started at a registration and not yet called back. */
export interface PendingLogin {
  /** The `state` sent to the provider: 256 random bits, base64url. */
  state: string;
  nonce: string;
  /** The PKCE code verifier; absent when the registration sends no challenge. */
  verifier?: string;
  /** Where the user goes once logged in (already checked against the goto policy). */
  goto?: string;
}

/** The tokens of a completed login, as kept. */
export interface StoredTokens {
  access_token: string;
  token_type: string;
  id_token?: string;
  refresh_token?: string;
  /** The granted scopes, space-separated (as the token endpoint writes them). */
  scope?: string;
  /** When the access token expires, epoch milliseconds. */
  expires_at?: number;
}

export interface RegistrationEntry {
  pending?: PendingLogin;
  tokens?: StoredTokens;
}

type Record_ = Record<string, RegistrationEntry>;

/** The session key of a client endpoint (absolute URL). */
export const sessionKey = (clientEndpoint: string) => `oauth2:${clientEndpoint}`;

/** A random value for `state`, `nonce` and the PKCE verifier: 256 bits, base64url (43 characters). */
export const randomToken = () => randomBytes(32).toString('base64url');

/** Tokens as the session keeps them: the claims are dropped, the expiry made absolute. */
export function storedTokens(tokens: Tokens, now = Date.now()): StoredTokens {
  const stored: StoredTokens = { access_token: tokens.access_token, token_type: tokens.token_type };
  if (tokens.id_token !== undefined) stored.id_token = tokens.id_token;
  if (tokens.refresh_token !== undefined) stored.refresh_token = tokens.refresh_token;
  if (tokens.scope !== undefined) stored.scope = tokens.scope.join(' ');
  const expiresAt =
    tokens.expiresAt ?? (tokens.expires_in === undefined ? undefined : now + tokens.expires_in * 1000);
  if (expiresAt !== undefined) stored.expires_at = expiresAt;
  return stored;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The filter's record in one session, read and written through copies: every change writes a new
 * record (or removes the key when nothing is left), so a session that compares what it saved sees it.
 */
export class SessionState {
  readonly #session: Record<string, unknown>;
  readonly #key: string;

  constructor(session: Record<string, unknown>, clientEndpoint: string) {
    this.#session = session;
    this.#key = sessionKey(clientEndpoint);
  }

  #read(): Record_ {
    const value = this.#session[this.#key];
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record_) : {};
  }

  #write(record: Record_): void {
    const kept = Object.entries(record).filter(([, e]) => e.pending !== undefined || e.tokens !== undefined);
    if (kept.length === 0) delete this.#session[this.#key];
    else this.#session[this.#key] = Object.fromEntries(kept);
  }

  /** The registration the user is logged in with, and its tokens. */
  loggedIn(): { registration: string; tokens: StoredTokens } | undefined {
    for (const [registration, entry] of Object.entries(this.#read()))
      if (entry.tokens?.access_token !== undefined) return { registration, tokens: entry.tokens };
    return undefined;
  }

  /** True when a login is in flight at some registration. */
  get authorizing(): boolean {
    return Object.values(this.#read()).some((entry) => entry.pending !== undefined);
  }

  /** The registrations with a login in flight. */
  pendingRegistrations(): string[] {
    return Object.entries(this.#read())
      .filter(([, entry]) => entry.pending !== undefined)
      .map(([name]) => name);
  }

  /** Starts a login at `registration`; an earlier one in flight there is replaced. */
  begin(registration: string, pending: PendingLogin): void {
    const record = this.#read();
    this.#write({ ...record, [registration]: { ...record[registration], pending } });
  }

  /**
   * The login in flight whose `state` is `state`, removed from the session (a state is used once:
   * a replayed callback finds nothing); undefined when none has it.
   */
  take(state: string): { registration: string; pending: PendingLogin } | undefined {
    const record = this.#read();
    for (const [registration, entry] of Object.entries(record)) {
      if (entry.pending === undefined || !sameSecret(entry.pending.state, state)) continue;
      const { pending, ...rest } = entry;
      this.#write({ ...record, [registration]: rest });
      return { registration, pending };
    }
    return undefined;
  }

  /** The user is logged in with `registration`: its tokens replace any other registration's. */
  complete(registration: string, tokens: StoredTokens): void {
    const record: Record_ = {};
    for (const [name, entry] of Object.entries(this.#read()))
      if (entry.pending !== undefined && name !== registration) record[name] = { pending: entry.pending };
    record[registration] = { ...this.#read()[registration], tokens };
    this.#write(record);
  }

  /** Forgets the tokens of `registration` (a refresh that failed); a login in flight stays. */
  forget(registration: string): void {
    const record = this.#read();
    const { tokens: _, ...rest } = record[registration] ?? {};
    this.#write({ ...record, [registration]: rest });
  }

  /** Removes everything the filter kept in this session for this client endpoint. */
  clear(): void {
    delete this.#session[this.#key];
  }
}
