import { createRequire } from 'node:module';
import type { Logger } from '@portico/gateway-core';
import pino from 'pino';

// The readable console form is loaded only when asked for: it is not small, and servers log JSON.
const require = createRequire(import.meta.url);

export type LogFormat = 'json' | 'pretty';

/**
 * Structured logs (pino). JSON lines for machines by default when standard output is not a terminal;
 * a readable console form otherwise or with `--log-format pretty`. The core logs through the small
 * Logger interface this adapts.
 */
export function createLogger(
  options: { format?: LogFormat; level?: string } = {},
): Logger & { pino: pino.Logger } {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const level = options.level ?? process.env.PORTICO_LOG_LEVEL ?? 'info';
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

function wrap(base: pino.Logger): Logger & { pino: pino.Logger } {
  const at =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (message: string, data?: Record<string, unknown>): void => {
      if (data) base[level](data, message);
      else base[level](message);
    };
  return { pino: base, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
