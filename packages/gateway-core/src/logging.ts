/**
 * The minimal logging surface the core needs. The server maps it onto its structured logger; tests
 * capture it. Kept tiny on purpose so the core does not depend on a logging library.
 */
export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

function write(level: string, message: string, data?: Record<string, unknown>): void {
  const line = data ? `${message} ${JSON.stringify(data)}` : message;
  process.stderr.write(`${new Date().toISOString()} ${level} ${line}\n`);
}

/** Writes to standard error; the default until the server installs its own logger. */
export const consoleLogger: Logger = {
  debug: () => {},
  info: (m, d) => write('INFO', m, d),
  warn: (m, d) => write('WARN', m, d),
  error: (m, d) => write('ERROR', m, d),
};

/** A logger that keeps every record, for tests. */
export function createMemoryLogger(): Logger & {
  records: { level: string; message: string; data?: Record<string, unknown> }[];
} {
  const records: { level: string; message: string; data?: Record<string, unknown> }[] = [];
  const keep = (level: string) => (message: string, data?: Record<string, unknown>) => {
    records.push(data === undefined ? { level, message } : { level, message, data });
  };
  return { records, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}
