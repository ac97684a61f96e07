import { Duration } from '../duration/duration.ts';
import { ErrorCode, isPorticoError, PorticoError } from '../errors.ts';
import type { Logger } from '../logging.ts';

/**
 * The Router's scanInterval: a duration (default 10 seconds), `disabled`/`zero` to load once, or, as
 * the incumbents still accept with a warning, a number of seconds where 0 or less means disabled.
 * `unlimited` is refused.
 */
export function parseScanInterval(
  value: unknown,
  where: { logger: Logger; file: string | undefined; jsonPath: string },
): Duration {
  const fail = (message: string) =>
    new PorticoError(ErrorCode.CONFIG, message, {
      jsonPath: where.jsonPath,
      expected: 'a duration such as "10 seconds", or "disabled"',
      ...(where.file === undefined ? {} : { file: where.file }),
    });
  if (value === undefined || value === null) return Duration.ofSeconds(10);
  if (typeof value === 'number') {
    where.logger.warn(
      'scanInterval as a number of seconds is deprecated; write a duration such as "10 seconds"',
      {
        jsonPath: where.jsonPath,
      },
    );
    return value <= 0 ? Duration.ZERO : Duration.ofSeconds(value);
  }
  if (typeof value !== 'string') throw fail(`${JSON.stringify(value)} is not a duration`);
  let duration: Duration;
  try {
    duration = Duration.parse(value);
  } catch (error) {
    throw isPorticoError(error) ? fail(error.message) : error;
  }
  if (duration.isUnlimited) throw fail('scanInterval cannot be unlimited');
  return duration;
}
