import type { Logger } from '@portico/gateway-core';
import type pino from 'pino';
import { LOG_LEVELS } from '../logging.ts';

/**
 * The gateway log's level, read and changed at run time (`<prefix>/api/logging`). With `--workers N`
 * a change made in one worker reaches every process: the worker applies it, tells the primary, and
 * the primary applies it and hands it to every other worker (node:cluster's IPC channel).
 */
export interface LogLevels {
  /** The level, upper case (`INFO`). */
  get(): string;
  /** Sets the level (any case): false when it is not one of `LOG_LEVELS`. */
  set(level: string): boolean;
}

/** The message a level change travels in between the processes. */
export const LEVEL_MESSAGE = 'portico:log-level';

/** A known level in pino's spelling (lower case), or undefined. */
export function knownLevel(level: unknown): string | undefined {
  if (typeof level !== 'string') return undefined;
  const lower = level.toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(lower) ? lower : undefined;
}

/**
 * The levels of this process's logger; in a cluster worker (`inWorker`), a change is also sent to the
 * primary, and changes the primary hands over are applied.
 */
export function processLogLevels(
  logger: Logger & { pino?: pino.Logger },
  options: { inWorker?: boolean } = {},
): LogLevels | undefined {
  const base = logger.pino;
  if (base === undefined) return undefined;
  const inWorker = options.inWorker === true && typeof process.send === 'function';
  if (inWorker) {
    process.on('message', (message: { type?: string; level?: unknown }) => {
      const level = message?.type === LEVEL_MESSAGE ? knownLevel(message.level) : undefined;
      if (level !== undefined) base.level = level;
    });
  }
  return {
    get: () => base.level.toUpperCase(),
    set: (given) => {
      const level = knownLevel(given);
      if (level === undefined) return false;
      base.level = level;
      if (inWorker && process.connected) process.send?.({ type: LEVEL_MESSAGE, level });
      return true;
    },
  };
}
