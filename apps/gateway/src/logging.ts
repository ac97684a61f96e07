import { createRequire } from 'node:module';
import type { Logger } from '@portico/gateway-core';
import pino from 'pino';
import { UsageError } from './commands/output.ts';

// The readable console form is loaded only when asked for: it is not small, and servers log JSON.
const require = createRequire(import.meta.url);

export type LogFormat = 'json' | 'pretty';

/** The levels pino knows, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Structured logs (pino). JSON lines for machines by default when standard output is not a terminal;
 * a readable console form otherwise or with `--log-format pretty`. The core logs through the small
 * Logger interface this adapts. The level is `options.level`, else `PORTICO_LOG_LEVEL` (any case;
 * empty counts as unset), else `info`; one pino does not know is a usage error naming the accepted
 * levels (pino itself would throw with a stack trace).
 */
export function createLogger(
  options: { format?: LogFormat; level?: string; env?: NodeJS.ProcessEnv } = {},
): Logger & { pino: pino.Logger } {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const level = logLevel(options.level, (options.env ?? process.env).PORTICO_LOG_LEVEL);
  const destination =
    format === 'pretty'
      ? (require('pino-pretty') as typeof import('pino-pretty'))({
          colorize: process.stdout.isTTY,
          sync: true,
          ignore: 'pid,hostname',
        })
      : pino.destination({ sync: true });
  const base = pino({ level, base: { pid: process.pid } }, destination);
  return wrap(base);
}

/** The level asked for (`option`, else the environment's), checked; `info` when neither is given. */
function logLevel(option: string | undefined, variable: string | undefined): string {
  const [given, source] =
    option !== undefined ? [option, 'the log level'] : [variable || undefined, 'PORTICO_LOG_LEVEL'];
  if (given === undefined) return 'info';
  const level = given.toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level;
  throw new UsageError(`${source} '${given}' is not a log level: use one of ${LOG_LEVELS.join(', ')}`);
}

/** The keys every line already has: a record's own key of the same name would repeat it. */
const LINE_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/**
 * A record's data as written on its line: a key the line already has (a worker's `pid` logged by the
 * primary) becomes `data.<key>`, so that no line carries a key twice.
 */
export function lineData(data: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(data).some((key) => LINE_KEYS.has(key))) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [LINE_KEYS.has(key) ? `data.${key}` : key, value]),
  );
}

function wrap(base: pino.Logger): Logger & { pino: pino.Logger } {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, data?: Record<string, unknown>): void => {
      if (data) base[level](lineData(data), message);
      else base[level](message);
    };
  return { pino: base, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
