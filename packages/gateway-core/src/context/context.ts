import { randomBytes } from 'node:crypto';
import type { Bindings } from '../expression/compiler.ts';
import type { Request, Response } from '../http/message.ts';
import type { Uri } from '../http/uri.ts';

/** Who is calling: `contexts.client` in expressions. */
export interface ClientInfo {
  remoteAddress: string;
  remotePort: number;
  localAddress: string;
  localPort: number;
  isSecure: boolean;
  /** The client's TLS certificate chain (DER), when it presented one. */
  certificates: Uint8Array[];
  userAgent: string | null;
}

/** Where the router matched: `contexts.router`. */
export interface RouterInfo {
  /** The id (file name without .json) and name of the route that took the request. */
  routeId: string;
  routeName: string;
  /**
   * The request URI as the route received it, before its baseURI applied: a URI object, as the
   * incumbents' (`contexts.router.originalUri.host`), never changed after the route saw it.
   */
  originalUri: Uri;
  matchedUri: string;
  remainingUri: string;
  uriTemplateVariables: Record<string, string>;
}

export type Session = Record<string, unknown>;

/**
 * `contexts.upgrade`: present when the request asks to switch protocols (WebSocket). A handler that
 * proxies the upgrade sets `claimed` and takes over the socket; otherwise the server answers the
 * request with the handler's response and closes the connection.
 */
export interface UpgradeContext {
  socket: import('node:stream').Duplex;
  head: Buffer;
  claimed: boolean;
}

const UNKNOWN_CLIENT: ClientInfo = Object.freeze({
  remoteAddress: '127.0.0.1',
  remotePort: 0,
  localAddress: '127.0.0.1',
  localPort: 0,
  isSecure: false,
  certificates: [],
  userAgent: null,
});

const CLIENT_FIELDS = Object.keys(UNKNOWN_CLIENT) as (keyof ClientInfo)[];

/** The client as given when it has every field (the server's, reused per connection), else completed. */
function completeClient(client: Partial<ClientInfo>): ClientInfo {
  for (const field of CLIENT_FIELDS) if (!(field in client)) return { ...UNKNOWN_CLIENT, ...client };
  return client as ClientInfo;
}

/**
 * Transaction IDs, shaped as version-4 UUIDs: 80 random bits drawn once per process, then a 48-bit
 * counter. Unique across processes and instances like random UUIDs, without a random draw and a
 * formatted string per request (randomUUID() cost about 480 bytes per request on the hot path).
 */
const TRANSACTION_PREFIX = (() => {
  const hex = randomBytes(10).toString('hex');
  const variant = ((Number.parseInt(hex[15]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(12, 15)}-${variant}${hex.slice(16, 19)}-`;
})();
let transactionCount = 0;

/** The next transaction's serial; its ID is made from it when first read (transactionIdOf). */
function nextTransactionSerial(): number {
  transactionCount = (transactionCount + 1) % 0x1000000000000;
  return transactionCount;
}

function transactionIdOf(serial: number): string {
  return TRANSACTION_PREFIX + serial.toString(16).padStart(12, '0');
}

/** Reads and writes a context's observation slot: for context/observation.ts only, not exported by the package. */
export let observationSlot: {
  read(context: Context): unknown;
  write(context: Context, observation: unknown): void;
};

/** The named contexts every root context has. */
const ROOT_CONTEXTS: ReadonlySet<string> = new Set(['transactionId', 'client', 'attributes']);
const NO_INIT = Object.freeze({});

/**
 * The context a request is processed in: its transaction ID, the caller, the request attributes,
 * the session, and named contexts filters add on the way (`contexts.router`, `contexts.oauth2` ...).
 * A child context adds or replaces named contexts and shares attributes and session with its
 * parent, so a filter can hand the next handler more context without changing what others see.
 */
export class Context {
  /**
   * The root's transaction ID, or the serial it is made from on first read: most requests end
   * without anything reading it (logs of failures, sessions and audit do), and formatting it cost
   * three strings per request.
   */
  #transaction: string | number = 0;
  readonly client: ClientInfo;
  readonly attributes: Record<string, unknown>;
  /** Aborted when the client goes away; outbound calls made for the request should follow it. */
  readonly signal: AbortSignal;
  readonly parent: Context | undefined;
  /**
   * The named contexts as one record, made when first read. Most requests only look one up by name
   * (`get`), which a child answers from the one it adds: no record per child, nor the root's three.
   */
  #contexts: Readonly<Record<string, unknown>> | undefined;
  /** The one named context a child adds (`child`); none for the root or a `withSession` scope. */
  #name: string | undefined;
  #value: unknown;
  /**
   * The request's session, or how to load it on first use (the server loads sessions lazily). It
   * lives in one holder shared by every context of the request (but see `withSession`).
   */
  #session: { value: Session | (() => Session) };
  /**
   * What observes the exchange (context/observation.ts), kept on its root context. A field of every
   * context, so that observing one does not add a property to it: an added property changed the
   * shape of each observed root context, a backing store per request and two shapes to every
   * function that reads a context.
   */
  #observation: unknown = undefined;

  static {
    observationSlot = {
      read: (context) => context.#observation,
      write: (context, observation) => {
        context.#observation = observation;
      },
    };
  }

  constructor(
    init: {
      transactionId?: string;
      client?: Partial<ClientInfo>;
      attributes?: Record<string, unknown>;
      session?: Session | (() => Session);
      signal?: AbortSignal;
    } = {},
    parent?: Context,
    contexts?: Readonly<Record<string, unknown>>,
  ) {
    if (parent) {
      // A child shares everything with its parent but the named contexts.
      this.client = parent.client;
      this.attributes = parent.attributes;
      this.signal = parent.signal;
      this.#session = parent.#session;
      this.parent = parent;
      this.#contexts = contexts;
      return;
    }
    this.#transaction = init.transactionId ?? nextTransactionSerial();
    this.client = init.client ? completeClient(init.client) : UNKNOWN_CLIENT;
    this.attributes = init.attributes ?? {};
    this.#session = { value: init.session ?? {} };
    this.signal = init.signal ?? new AbortController().signal;
    this.parent = undefined;
  }

  /** The request's transaction ID, shared by every context made from the root. */
  get transactionId(): string {
    if (this.parent !== undefined) return this.parent.transactionId;
    const transaction = this.#transaction;
    if (typeof transaction === 'string') return transaction;
    const id = transactionIdOf(transaction);
    this.#transaction = id;
    return id;
  }

  /** Every named context, nearest first: a child's own over its parent's. */
  get contexts(): Readonly<Record<string, unknown>> {
    if (this.#contexts !== undefined) return this.#contexts;
    const parent = this.parent;
    if (parent === undefined) {
      this.#contexts = {
        transactionId: { transactionId: this.transactionId },
        client: this.client,
        attributes: { attributes: this.attributes },
      };
    } else if (this.#name === undefined) {
      this.#contexts = parent.contexts;
    } else {
      this.#contexts = { ...parent.contexts, [this.#name]: this.#value };
    }
    return this.#contexts;
  }

  /** The session, loaded on first use. */
  get session(): Session {
    const holder = this.#session;
    if (typeof holder.value === 'function') holder.value = holder.value();
    return holder.value;
  }
  set session(value: Session) {
    this.#session.value = value;
  }

  /** True once something has looked at the session (the server only saves sessions that were used). */
  get sessionUsed(): boolean {
    return typeof this.#session.value !== 'function';
  }

  /** A context that also carries `contexts[name]`; the rest is shared with this one. */
  child(name: string, value: unknown): Context {
    const child = new Context(NO_INIT, this);
    child.#name = name;
    child.#value = value;
    return child;
  }

  /**
   * A context like this one whose session is another (a route's own session producer): contexts made
   * from it share that session; this context keeps its own.
   */
  withSession(session: Session | (() => Session)): Context {
    const scoped = new Context(NO_INIT, this);
    scoped.#session = { value: session };
    return scoped;
  }

  /** The named context, nearest first. */
  get<T = unknown>(name: string): T | undefined {
    // Up the chain without making a record, unless one was made or given.
    for (let at: Context | undefined = this; at !== undefined; at = at.parent) {
      if (at.#contexts !== undefined) return at.#contexts[name] as T | undefined;
      if (at.#name === name) return at.#value as T;
      if (at.parent === undefined && ROOT_CONTEXTS.has(name)) return at.contexts[name] as T;
    }
    return undefined;
  }

  get router(): RouterInfo | undefined {
    return this.get<RouterInfo>('router');
  }
}

/**
 * `session` and `contexts` are getters, so that an expression that never mentions them neither loads
 * the session nor makes the record of named contexts (Context.contexts). One getter each for all
 * bindings, reading `this.context`. A getter written in the literal is a new closure per request,
 * and under load that closure kept its request's whole graph (context, request, response, upstream
 * exchange) alive across scavenges until the next mark-compact: V8 allocates a property's accessor
 * pair directly in the old generation, and a scavenge treats whatever an old object points to as
 * alive: more promoted per request, for every route with a condition (bench/README.md, "Garbage
 * collection").
 */
const CONTEXTS = fromContext((context) => context.contexts);
const SESSION = fromContext((context) => context.session);

function fromContext(read: (context: Context) => unknown): PropertyDescriptor {
  return {
    get(this: { context: Context }) {
      return read(this.context);
    },
    enumerable: true,
    configurable: true,
  };
}

/** What expressions evaluated for a request see. */
export function bindingsFor(context: Context, request: Request, response?: Response): Bindings {
  const bindings = {
    request,
    response,
    context,
    attributes: context.attributes,
  };
  // Two defineProperty calls: defineProperties with a shared map read 0.1-0.4 KB more allocated per
  // request on 1,000 routes (2 runs each, near the noise), so it was not kept.
  Object.defineProperty(bindings, 'contexts', CONTEXTS);
  return Object.defineProperty(bindings, 'session', SESSION);
}
