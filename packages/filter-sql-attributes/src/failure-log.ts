import type { Logger } from '@portico/gateway-core';

/**
 * Logs failed lookups as errors, at most one record a minute with a count of those held back, so
 * that a database outage under load leaves a readable log rather than one line per request.
 */
export class FailureLog {
  readonly #logger: Logger;
  readonly #intervalMs: number;
  #lastLogged = Number.NEGATIVE_INFINITY;
  #heldBack = 0;

  constructor(logger: Logger, intervalMs = 60_000) {
    this.#logger = logger;
    this.#intervalMs = intervalMs;
  }

  record(data: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.#lastLogged < this.#intervalMs) {
      this.#heldBack++;
      return;
    }
    const held = this.#heldBack;
    this.#lastLogged = now;
    this.#heldBack = 0;
    this.#logger.error('the SQL lookup failed; the target is an empty map', {
      ...data,
      ...(held > 0 ? { failuresNotLogged: held } : {}),
    });
  }
}
