import { brand, hasBrand } from './brand.ts';

/**
 * Every error Portico reports carries a stable code (`PORTICO_E_*`). Tests and tools compare codes,
 * never messages. Where the fault comes from configuration, the error names the file, the JSON path
 * and what was expected, so an operator can go straight to it.
 */
export const ErrorCode = {
  /** An expression does not parse, names an unknown function, or cannot be assigned to. */
  EXPRESSION: 'PORTICO_E_EXPRESSION',
  /** A duration is not written in the accepted English form. */
  DURATION: 'PORTICO_E_DURATION',
  /** A configuration value has the wrong shape or type, or a required one is missing or null. */
  CONFIG: 'PORTICO_E_CONFIG',
  /** A command-line invocation is malformed. */
  USAGE: 'PORTICO_E_USAGE',
  /** A heap object names a type no installed plugin provides. */
  UNKNOWN_TYPE: 'PORTICO_E_UNKNOWN_TYPE',
  /** Two plugins provide the same type name. */
  DUPLICATE_TYPE: 'PORTICO_E_DUPLICATE_TYPE',
  /** A plugin's manifest disagrees with its package.json, or is not a manifest at all. */
  MANIFEST: 'PORTICO_E_MANIFEST',
  /** A reference names no heap object, or an object of the wrong kind. */
  REFERENCE: 'PORTICO_E_REFERENCE',
  /** Heap objects refer to each other in a cycle. */
  CYCLE: 'PORTICO_E_CYCLE',
  /** Two heap objects, or two routes, share a name. */
  DUPLICATE_NAME: 'PORTICO_E_DUPLICATE_NAME',
  /** A route file cannot be loaded. */
  ROUTE: 'PORTICO_E_ROUTE',
  /** A body is larger than the configured bound (answered with 413). */
  ENTITY_TOO_LARGE: 'PORTICO_E_ENTITY_TOO_LARGE',
  /** The upstream could not be reached or did not answer in time. */
  UPSTREAM: 'PORTICO_E_UPSTREAM',
  /** A session cannot be saved (for example, too large for the cookie that carries it). */
  SESSION: 'PORTICO_E_SESSION',
  /**
   * A header field that cannot be written: a name that is not an HTTP token, or a value with a line
   * break or another control character (from configuration or an expression). Never sent.
   */
  HEADER: 'PORTICO_E_HEADER',
  /** A request the gateway refuses before any route sees it (400): a bad Host, an unusable target. */
  BAD_REQUEST: 'PORTICO_E_BAD_REQUEST',
  /** A connector cannot listen: its port is in use or not allowed, or its host is not this machine's. */
  LISTEN: 'PORTICO_E_LISTEN',
  /**
   * A plugin brought its own copy of @portico/gateway-core instead of sharing the gateway's (npm
   * installed the peer dependency beside it). Names both folders.
   */
  SECOND_CORE: 'PORTICO_E_SECOND_CORE',
  /**
   * A secret cannot be had: no store holds its ID, it is of another kind than asked (a password
   * where a private key is needed), or a store cannot be read. Never shows a secret's value.
   */
  SECRET: 'PORTICO_E_SECRET',
  /** A task was handed to a ScheduledExecutorService that has stopped (its heap was destroyed). */
  EXECUTOR: 'PORTICO_E_EXECUTOR',
  /** A configured script failed while answering a request: it threw, ran out of time, or returned no Response. */
  SCRIPT: 'PORTICO_E_SCRIPT',
} as const;

/**
 * A code: one of the core's (`ErrorCode`), or a plugin's own, namespaced by the plugin
 * (`PORTICO_E_KEYSTORE_PASSWORD` for `@portico/keystore`) and listed in its README. Upper-case
 * letters, digits and underscores after `PORTICO_E_`.
 */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode] | `PORTICO_E_${string}`;

const CODE = /^PORTICO_E_[A-Z][A-Z0-9_]*$/;

export interface PorticoErrorDetails {
  /** The configuration file the fault is in, when known. */
  file?: string;
  /** JSON path of the faulty value inside that file, e.g. `$.heap[2].config.condition`. */
  jsonPath?: string;
  /** What was expected at that place, in words. */
  expected?: string;
  /** 1-based column inside the offending text (expressions). */
  column?: number;
  /** The offending text itself (an expression, a duration). */
  text?: string;
  /**
   * Of an unknown type (`PORTICO_E_UNKNOWN_TYPE` from the type registry): the type name as the
   * configuration wrote it. Tools and the Router tell the registry's error by it, not by its words.
   */
  unknownType?: string;
  /**
   * Of an unknown type: the plugin package providing it that was installed after the gateway
   * discovered its plugins. Its message already says to restart the gateway to use it.
   */
  pluginInstalledSince?: string;
  /**
   * The failure was logged where it was found, with what it means: one line for an outage of a
   * store, not one for every request it fails. Who catches it answers it without logging it again
   * (at debug level only, with its transaction).
   */
  logged?: boolean;
  cause?: unknown;
}

const PORTICO_ERROR = brand('PorticoError');

export class PorticoError extends Error {
  readonly code: ErrorCodeValue;
  readonly details: PorticoErrorDetails;
  /** Its brand: `instanceof PorticoError` holds for one made by another copy of the core too. */
  readonly [PORTICO_ERROR] = true;

  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: the class `instanceof` asks, which may be a subclass
    return hasBrand(this, PorticoError, PORTICO_ERROR, value);
  }

  constructor(code: ErrorCodeValue, message: string, details: PorticoErrorDetails = {}) {
    // A malformed code is the plugin's bug, not the operator's: it fails where it is made.
    if (!CODE.test(code))
      throw new TypeError(`'${code}' is not an error code (PORTICO_E_<NAMESPACE>_<WHAT>)`);
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'PorticoError';
    this.code = code;
    this.details = details;
  }

  /** Returns a copy that also names where in the configuration the fault is. */
  at(location: { file?: string; jsonPath?: string }): PorticoError {
    return new PorticoError(this.code, this.message, { ...this.details, ...location });
  }

  /** One line for people: code, place, message and expectation. */
  override toString(): string {
    const { file, jsonPath, expected } = this.details;
    const place = [file, jsonPath].filter(Boolean).join(' ');
    return `${this.code}${place ? ` ${place}` : ''}: ${this.message}${expected ? ` (expected ${expected})` : ''}`;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details, cause: undefined };
  }
}

export function isPorticoError(value: unknown, code?: ErrorCodeValue): value is PorticoError {
  return value instanceof PorticoError && (code === undefined || value.code === code);
}

/**
 * One error for several problems: the first, with all of them as its cause (see problemsOf); one
 * that already combines several counts as each of them. `whenNone` gives the error for no problem.
 */
export function combineProblems(
  problems: readonly PorticoError[],
  whenNone?: () => PorticoError,
): PorticoError {
  const all = problems.flatMap((problem) => problemsOf(problem));
  const first = all[0];
  if (first === undefined) {
    if (whenNone === undefined) throw new TypeError('combineProblems: no problem to combine');
    return whenNone();
  }
  if (all.length === 1) return first;
  return new PorticoError(first.code, `${first.message} (and ${all.length - 1} more)`, {
    ...first.details,
    cause: all,
  });
}

/**
 * The problems one error stands for: itself, or the ones a combined error carries as its cause; none
 * for an error that is no PorticoError.
 */
export function problemsOf(error: unknown): PorticoError[] {
  if (!isPorticoError(error)) return [];
  const { cause } = error.details;
  if (Array.isArray(cause) && cause.length > 0 && cause.every((item) => isPorticoError(item))) return cause;
  return [error];
}
