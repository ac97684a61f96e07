import { ErrorCode } from '@portico/gateway-core';
import { describe, expect, it } from 'vitest';
import { UsageError } from './commands/output.ts';
import { createLogger } from './logging.ts';

describe('the log level', () => {
  it('comes from PORTICO_LOG_LEVEL in any case; empty or unset is info', () => {
    expect(createLogger({ format: 'json', env: { PORTICO_LOG_LEVEL: 'DEBUG' } }).pino.level).toBe('debug');
    expect(createLogger({ format: 'json', env: { PORTICO_LOG_LEVEL: 'silent' } }).pino.level).toBe('silent');
    expect(createLogger({ format: 'json', env: { PORTICO_LOG_LEVEL: '' } }).pino.level).toBe('info');
    expect(createLogger({ format: 'json', env: {} }).pino.level).toBe('info');
  });

  it('one pino does not know is a usage error naming the variable and the accepted levels', () => {
    const attempt = () => createLogger({ format: 'json', env: { PORTICO_LOG_LEVEL: 'verbose' } });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(
      "PORTICO_LOG_LEVEL 'verbose' is not a log level: use one of fatal, error, warn, info, debug, trace, silent",
    );
    try {
      attempt();
    } catch (error) {
      expect((error as UsageError).code).toBe(ErrorCode.USAGE);
    }
  });
});
