import type { INVALID, ParseContext } from '../config/parse-context.ts';
import { INVALID_VALUE, ScalarSchema } from '../config/scalar-schemas.ts';
import { Duration } from '../duration/duration.ts';

const DEFAULT = Duration.ofSeconds(10);

/**
 * The Router's scanInterval: a duration (default 10 seconds), `disabled`/`zero` to load once, or, as
 * the incumbents still accept with a warning, a number of seconds where 0 or less means disabled.
 * `unlimited` is refused. A schema like any setting's, so that an expression or a token giving it
 * from the environment is described, not quoted, when it is wrong.
 */
class ScanIntervalSchema extends ScalarSchema<Duration> {
  readonly expected = 'a duration such as "10 seconds", or "disabled"';

  protected accept(value: unknown): Duration | typeof INVALID_VALUE {
    if (typeof value === 'number') return value <= 0 ? Duration.ZERO : Duration.ofSeconds(value);
    if (typeof value !== 'string') return INVALID_VALUE;
    try {
      const duration = Duration.parse(value);
      return duration.isUnlimited ? INVALID_VALUE : duration;
    } catch {
      return INVALID_VALUE;
    }
  }

  override parseValue(value: unknown, path: string, ctx: ParseContext): Duration | typeof INVALID {
    if (value === null) return DEFAULT;
    if (typeof value === 'number') {
      ctx.logger.warn(
        'scanInterval as a number of seconds is deprecated; write a duration such as "10 seconds"',
        { jsonPath: path },
      );
    }
    return super.parseValue(value, path, ctx);
  }

  jsonSchema() {
    return this.withDescription({ type: ['string', 'number', 'null'] });
  }
}

export function scanIntervalSetting() {
  return new ScanIntervalSchema().default(DEFAULT);
}
