import { describe, expect, it } from 'vitest';
import { checkConfig } from '../config/parse-config.ts';
import { s } from '../config/schema-builders.ts';
import { resolveTokens } from '../config/tokens.ts';
import { Duration } from '../duration/duration.ts';
import { createMemoryLogger } from '../logging.ts';
import { scanIntervalSetting } from './scan-interval.ts';

const config = s.object({ scanInterval: scanIntervalSetting() });
const check = (value: unknown, logger = createMemoryLogger()) =>
  checkConfig(config, value, { file: 'config.json', jsonPath: '$.handler.config', logger });

describe("the Router's scanInterval", () => {
  it('is a duration, 10 seconds when absent or null, disabled by "disabled" or a number of at most 0', () => {
    expect(check({}).value?.scanInterval).toEqual(Duration.ofSeconds(10));
    expect(check({ scanInterval: null }).value?.scanInterval).toEqual(Duration.ofSeconds(10));
    expect(check({ scanInterval: '2 minutes' }).value?.scanInterval).toEqual(Duration.ofSeconds(120));
    expect(check({ scanInterval: 'disabled' }).value?.scanInterval.isZero).toBe(true);
    expect(check({ scanInterval: -1 }).value?.scanInterval.isZero).toBe(true);
  });

  it('as a number of seconds, with a warning that this is deprecated', () => {
    const logger = createMemoryLogger();
    expect(check({ scanInterval: 5 }, logger).value?.scanInterval).toEqual(Duration.ofSeconds(5));
    expect(logger.records).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'scanInterval as a number of seconds is deprecated; write a duration such as "10 seconds"',
        data: { jsonPath: '$.handler.config.scanInterval' },
      }),
    ]);
  });

  it('refuses "unlimited" and what is no duration, quoted as written', () => {
    expect(check({ scanInterval: 'unlimited' }).errors.map((e) => e.toString())).toEqual([
      'PORTICO_E_CONFIG config.json $.handler.config.scanInterval: "unlimited" is not a duration such as "10 seconds", or "disabled" (expected a duration such as "10 seconds", or "disabled")',
    ]);
    expect(check({ scanInterval: ['1 second'] }).errors.map((e) => e.message)).toEqual([
      '["1 second"] is not a duration such as "10 seconds", or "disabled"',
    ]);
  });

  it('from the environment, is described, not quoted, when it is wrong', () => {
    process.env.PORTICO_SCAN_SECRET = 'hunter2-s3cr3t';
    const fromToken = resolveTokens({ scanInterval: '&{scan.secret}' }, { env: { SCAN_SECRET: 'hunter2' } });
    const errors = [
      ...check({ scanInterval: "${env['PORTICO_SCAN_SECRET']}" }).errors,
      ...check(fromToken).errors,
    ];
    expect(errors.map((e) => e.toString())).toEqual([
      `PORTICO_E_CONFIG config.json $.handler.config.scanInterval: the value of \${env['PORTICO_SCAN_SECRET']} (14 characters, not shown) is not a duration such as "10 seconds", or "disabled" (expected a duration such as "10 seconds", or "disabled")`,
      'PORTICO_E_CONFIG config.json $.handler.config.scanInterval: the value of &{scan.secret} (7 characters, not shown) is not a duration such as "10 seconds", or "disabled" (expected a duration such as "10 seconds", or "disabled")',
    ]);
    expect(JSON.stringify(errors.map((e) => e.toJSON()))).not.toContain('hunter2');
  });
});
