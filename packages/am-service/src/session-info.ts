import { EL_CALL, EL_GET, type ElObject } from '@portico/gateway-core/expressions';

/** What an EL_CALL answers for a method the object lacks: the core's registered symbol. */
const NO_SUCH_METHOD = Symbol.for('portico.el.noSuchMethod');

/**
 * An instant AM gave (`2026-02-21T14:31:18Z`), as expressions read the incumbents' `Instant`:
 * `epochSecond`, `nano`, `toEpochMilli()`, and its ISO 8601 form as a string.
 */
export class AmInstant implements ElObject {
  readonly epochMillis: number;

  constructor(epochMillis: number) {
    this.epochMillis = epochMillis;
  }

  /** Reads an ISO 8601 instant; undefined for anything else (AM leaves some times out). */
  static parse(value: unknown): AmInstant | undefined {
    if (
      typeof value !== 'string' ||
      !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)
    )
      return undefined;
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? new AmInstant(ms) : undefined;
  }

  get epochSecond(): number {
    return Math.floor(this.epochMillis / 1000);
  }

  get nano(): number {
    return (this.epochMillis - this.epochSecond * 1000) * 1_000_000;
  }

  [EL_GET](key: string): unknown {
    switch (key) {
      case 'epochSecond':
        return this.epochSecond;
      case 'nano':
        return this.nano;
      default:
        return undefined;
    }
  }

  [EL_CALL](name: string, args: unknown[]): unknown {
    if (args.length !== 0) return NO_SUCH_METHOD;
    switch (name) {
      case 'toEpochMilli':
        return this.epochMillis;
      case 'getEpochSecond':
        return this.epochSecond;
      case 'toString':
        return this.toString();
      default:
        return NO_SUCH_METHOD;
    }
  }

  /** ISO 8601 in UTC, without a fraction when there is none (`2026-02-21T14:31:18Z`), as Java writes it. */
  toString(): string {
    const iso = new Date(this.epochMillis).toISOString();
    return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
  }
}

/**
 * What AM says of a session (its `getSessionInfo` answer), as `${contexts.amSession}` shows it:
 * `username`, `universalId`, `realm`, the three times as instants (null when AM left one out),
 * `properties` (a map, empty rather than null) and `asJsonValue()`, the answer as AM wrote it.
 */
export class AmSessionInfo implements ElObject {
  readonly username: string | null;
  readonly universalId: string | null;
  readonly realm: string | null;
  readonly sessionHandle: string | null;
  readonly latestAccessTime: AmInstant | null;
  readonly maxIdleExpirationTime: AmInstant | null;
  readonly maxSessionExpirationTime: AmInstant | null;
  readonly properties: Readonly<Record<string, string>>;
  readonly #raw: Readonly<Record<string, unknown>>;

  constructor(raw: Record<string, unknown>) {
    this.#raw = raw;
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    this.username = text(raw.username);
    this.universalId = text(raw.universalId);
    this.realm = text(raw.realm);
    this.sessionHandle = text(raw.sessionHandle);
    this.latestAccessTime = AmInstant.parse(raw.latestAccessTime) ?? null;
    this.maxIdleExpirationTime = AmInstant.parse(raw.maxIdleExpirationTime) ?? null;
    this.maxSessionExpirationTime = AmInstant.parse(raw.maxSessionExpirationTime) ?? null;
    const properties: Record<string, string> = {};
    if (typeof raw.properties === 'object' && raw.properties !== null && !Array.isArray(raw.properties)) {
      for (const [key, value] of Object.entries(raw.properties))
        if (typeof value === 'string') properties[key] = value;
    }
    this.properties = Object.freeze(properties);
  }

  /** The answer as AM wrote it. */
  get info(): Readonly<Record<string, unknown>> {
    return this.#raw;
  }

  /** When the session ends first (idle or maximum time), in epoch milliseconds; undefined when AM gave neither. */
  expiresAt(): number | undefined {
    const times = [this.maxIdleExpirationTime, this.maxSessionExpirationTime]
      .filter((time): time is AmInstant => time !== null)
      .map((time) => time.epochMillis);
    return times.length === 0 ? undefined : Math.min(...times);
  }

  [EL_GET](key: string): unknown {
    switch (key) {
      case 'username':
      case 'universalId':
      case 'realm':
      case 'sessionHandle':
      case 'latestAccessTime':
      case 'maxIdleExpirationTime':
      case 'maxSessionExpirationTime':
      case 'properties':
      case 'info':
        return this[key];
      default:
        return undefined;
    }
  }

  [EL_CALL](name: string, args: unknown[]): unknown {
    if (name === 'asJsonValue' && args.length === 0) return this.#raw;
    return NO_SUCH_METHOD;
  }
}
