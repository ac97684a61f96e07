import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PorticoError } from '../errors.ts';
import { Duration, parseDuration } from './index.ts';

// Written out here rather than imported, so the tests check the module against the specification.
const NS = 1n;
const US = 1_000n;
const MS = 1_000_000n;
const S = 1_000_000_000n;
const MIN = 60n * S;
const H = 60n * MIN;
const D = 24n * H;
// 2^63 - 1 nanoseconds: the documented largest finite duration.
const MAX_NANOS = 9_223_372_036_854_775_807n;

const SPELLINGS: [string, bigint][] = [
  ...['days', 'day', 'd'].map((s): [string, bigint] => [s, D]),
  ...['hours', 'hour', 'h'].map((s): [string, bigint] => [s, H]),
  ...['minutes', 'minute', 'min', 'm'].map((s): [string, bigint] => [s, MIN]),
  ...['seconds', 'second', 'sec', 's'].map((s): [string, bigint] => [s, S]),
  ...['milliseconds', 'millisecond', 'millisec', 'millis', 'milli', 'ms'].map((s): [string, bigint] => [
    s,
    MS,
  ]),
  ...['microseconds', 'microsecond', 'microsec', 'micros', 'micro', 'us', 'μs', 'µs'].map(
    (s): [string, bigint] => [s, US],
  ),
  ...['nanoseconds', 'nanosecond', 'nanosec', 'nanos', 'nano', 'ns'].map((s): [string, bigint] => [s, NS]),
];

/** `MiNuTeS`: every other letter upper case. */
function mixedCase(text: string): string {
  return [...text].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('');
}

/** Runs the action and returns the PorticoError it must throw, failing the test otherwise. */
function durationError(action: () => unknown): PorticoError {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(PorticoError);
  const error = thrown as PorticoError;
  expect(error.code).toBe('PORTICO_E_DURATION');
  expect(typeof error.details.expected).toBe('string');
  return error;
}

describe('Duration.parse: unit spellings', () => {
  it.each(SPELLINGS)('reads 7 %s', (spelling, nanos) => {
    expect(Duration.parse(`7 ${spelling}`).toNanos()).toBe(7n * nanos);
  });

  it.each(SPELLINGS)('reads upper case 12 %s without a space', (spelling, nanos) => {
    expect(Duration.parse(`12${spelling.toUpperCase()}`).toNanos()).toBe(12n * nanos);
  });

  it.each(SPELLINGS)('reads mixed case 1 %s', (spelling, nanos) => {
    expect(Duration.parse(`1 ${mixedCase(spelling)}`).toNanos()).toBe(nanos);
  });

  it.each([
    ...['indefinite', 'infinity', 'undefined', 'unlimited', 'none'].flatMap((s) => [s, s.toUpperCase()]),
    'Unlimited',
    'InFiNiTy',
    '  unlimited  ',
  ])('reads %j as UNLIMITED', (text) => {
    expect(Duration.parse(text)).toBe(Duration.UNLIMITED);
  });

  it.each(['zero', 'disabled', 'ZERO', 'Disabled', ' dIsAbLeD '])('reads %j as ZERO', (text) => {
    expect(Duration.parse(text)).toBe(Duration.ZERO);
  });
});

describe('Duration.parse: combinations', () => {
  it.each<[string, bigint]>([
    ['10s', 10n * S],
    ['  10 seconds  ', 10n * S],
    ['1h30m', H + 30n * MIN],
    ['1 hour, 30 minutes', H + 30n * MIN],
    ['1 hour,30 minutes', H + 30n * MIN],
    ['1 hour , 30 minutes', H + 30n * MIN],
    ['2 days and 3 hours', 2n * D + 3n * H],
    ['2 DAYS AND 3 HOURS', 2n * D + 3n * H],
    ['1 hour, and 5 minutes', H + 5n * MIN],
    ['23 hours 59 minutes and 59 seconds', 23n * H + 59n * MIN + 59n * S],
    ['23 hours, 59 minutes, and 59 seconds', 23n * H + 59n * MIN + 59n * S],
    ['1d2h3m4s5ms6us7ns', D + 2n * H + 3n * MIN + 4n * S + 5n * MS + 6n * US + 7n * NS],
    ['1 h\t2 m\n3 s', H + 2n * MIN + 3n * S],
    ['90 minutes', 90n * MIN],
    ['1 minute 1 minute', 2n * MIN],
    ['5 seconds 2 days', 2n * D + 5n * S],
    ['007 seconds', 7n * S],
    ['1000000 nanoseconds', MS],
  ])('reads %j', (text, nanos) => {
    expect(Duration.parse(text).toNanos()).toBe(nanos);
  });

  // The incumbent keeps only the first part of a comma-less fragment and would read 3 days.
  it("sums '3 days 4 hours' to 3 days + 4 hours: deliberately differs from the incumbent", () => {
    expect(Duration.parse('3 days 4 hours').toNanos()).toBe(3n * D + 4n * H);
  });

  // The incumbent splits parts only on ',' and ' and '.
  it('accepts plain spaces between parts: deliberately differs from the incumbent', () => {
    expect(Duration.parse('1 minute 30 seconds').toNanos()).toBe(MIN + 30n * S);
  });

  it.each(['0 seconds', '0s', '0 days and 0 ns', '0h0m'])('reads %j, a sum of 0, as ZERO', (text) => {
    expect(Duration.parse(text)).toBe(Duration.ZERO);
  });

  it('parseDuration is Duration.parse', () => {
    expect(parseDuration('1h30m').equals(Duration.parse('90 minutes'))).toBe(true);
  });

  it.each([
    ['9223372036854775807 ns', MAX_NANOS],
    [
      '106751 days 23 hours 47 minutes 16 seconds 854 milliseconds 775 microseconds 807 nanoseconds',
      MAX_NANOS,
    ],
  ])('reads the largest duration %j', (text, nanos) => {
    expect(Duration.parse(text).toNanos()).toBe(nanos);
  });
});

describe('Duration.parse: errors', () => {
  it.each<[string, string]>([
    ['empty text', ''],
    ['blank text', '   '],
    ['blank text with tabs and newlines', '\t\n '],
    ['a negative number', '-5 seconds'],
    ['a negative number in a later part', '1 minute, -5 seconds'],
    ['a missing number', 'seconds'],
    ['a missing number in a later part', '5 minutes seconds'],
    ['an unknown unit', '5 fortnights'],
    ['an unknown unit glued to and', '1hand2m'],
    ['a number with no unit', '5'],
    ['a number with no unit before another part', '5 6 seconds'],
    ['a number with no unit at the end', '1 minute 30'],
    ['a decimal', '1.5 hours'],
    ['a decimal without a leading digit', '.5 hours'],
    ['unlimited with another part', 'unlimited and 5 seconds'],
    ['a part with unlimited', '5 seconds, infinity'],
    ['unlimited as a unit', '5 unlimited'],
    ['zero with a unit', 'zero seconds'],
    ['disabled with another part', 'disabled 1s'],
    ['unlimited twice', 'unlimited unlimited'],
    ['a leading separator', ', 5 seconds'],
    ['a leading and', 'and 5 seconds'],
    ['a trailing comma', '5 seconds,'],
    ['a trailing and', '5 seconds and'],
    ['two commas', '5 seconds,, 6 minutes'],
    ['and twice', '5 seconds and and 6 minutes'],
    ['an unexpected character', '5 seconds;'],
    ['a plus sign', '+5 seconds'],
    ['a value too large in one part', '106752 days'],
    ['a sum too large', '106751 days 24 hours'],
    ['one nanosecond too many', '9223372036854775808 ns'],
    ['a huge number', `${'9'.repeat(60)} days`],
  ])('rejects %s: %j', (_name, text) => {
    const error = durationError(() => Duration.parse(text));
    expect(error.details.text).toBe(text);
  });

  it.each<[string, unknown]>([
    ['a number', 5],
    ['null', null],
    ['undefined', undefined],
    ['an object', { seconds: 5 }],
    ['an array', ['5 seconds']],
    ['a bigint', 5n],
  ])('rejects non-string input: %s (details.text is left unset: there is no text)', (_name, value) => {
    const error = durationError(() => Duration.parse(value as string));
    expect(error.details.text).toBeUndefined();
  });
});

describe('Duration.toString', () => {
  it.each<[Duration, string]>([
    [Duration.UNLIMITED, 'unlimited'],
    [Duration.ZERO, 'zero'],
    [Duration.ofNanos(D + 2n * H + 3n * MS), '1 day 2 hours 3 milliseconds'],
    [Duration.ofSeconds(1), '1 second'],
    [Duration.ofSeconds(90), '1 minute 30 seconds'],
    [Duration.ofMillis(1.5), '1 millisecond 500 microseconds'],
    [Duration.ofNanos(1n), '1 nanosecond'],
    [Duration.ofNanos(2n * US + 1n), '2 microseconds 1 nanosecond'],
    [Duration.ofNanos(400n * D), '400 days'],
    [Duration.parse('48h'), '2 days'],
  ])('writes %s', (duration, text) => {
    expect(duration.toString()).toBe(text);
    expect(duration.toJSON()).toBe(text);
  });

  it('serializes to JSON as its English text', () => {
    expect(JSON.stringify({ timeout: Duration.parse('90s') })).toBe('{"timeout":"1 minute 30 seconds"}');
  });

  it.each<Duration>([
    Duration.UNLIMITED,
    Duration.ZERO,
    Duration.ofNanos(1n),
    Duration.ofNanos(999n),
    Duration.ofNanos(1_001n),
    Duration.ofNanos(123_456_789n),
    Duration.ofNanos(D + H + MIN + S + MS + US + NS),
    Duration.ofNanos(2n * D + 2n * H + 2n * MIN + 2n * S + 2n * MS + 2n * US + 2n * NS),
    Duration.ofNanos(MAX_NANOS),
    Duration.ofNanos(MAX_NANOS - 1n),
    Duration.ofMillis(1),
    Duration.ofMillis(0.001),
    Duration.ofMillis(86_400_000),
    Duration.ofSeconds(3599.999999999),
    Duration.parse('23 hours 59 minutes and 59 seconds'),
    Duration.parse('1500 ms'),
  ])('round trips %s', (duration) => {
    const back = Duration.parse(duration.toString());
    expect(back.equals(duration)).toBe(true);
    expect(back.toString()).toBe(duration.toString());
  });
});

describe('Duration comparison', () => {
  const ordered = [
    Duration.ZERO,
    Duration.ofNanos(1n),
    Duration.parse('1us'),
    Duration.parse('1ms'),
    Duration.parse('1s'),
    Duration.parse('59 seconds 999 ms'),
    Duration.parse('1 minute'),
    Duration.parse('1 hour'),
    Duration.parse('1 day'),
    Duration.ofNanos(MAX_NANOS),
    Duration.UNLIMITED,
  ];

  it.each(
    ordered.flatMap((a, i) => ordered.map((b, j): [Duration, Duration, number] => [a, b, Math.sign(i - j)])),
  )('compares %s with %s', (a, b, sign) => {
    expect(Math.sign(a.compareTo(b))).toBe(sign);
    expect(a.equals(b)).toBe(sign === 0);
  });

  it('sorts with compareTo, UNLIMITED last and ZERO first', () => {
    const sorted = [...ordered].reverse().sort((a, b) => a.compareTo(b));
    expect(sorted.map(String)).toEqual(ordered.map(String));
  });

  it.each<[string, string]>([
    ['1h30m', '90 minutes'],
    ['1 day', '24 hours'],
    ['1000 ms', '1 second'],
    ['unlimited', 'infinity'],
    ['zero', '0 s'],
  ])('%j equals %j', (a, b) => {
    expect(Duration.parse(a).equals(Duration.parse(b))).toBe(true);
    expect(Duration.parse(a).compareTo(Duration.parse(b))).toBe(0);
  });

  it('has flags for UNLIMITED and ZERO only', () => {
    expect([Duration.UNLIMITED.isUnlimited, Duration.UNLIMITED.isZero]).toEqual([true, false]);
    expect([Duration.ZERO.isUnlimited, Duration.ZERO.isZero]).toEqual([false, true]);
    expect([Duration.parse('1ns').isUnlimited, Duration.parse('1ns').isZero]).toEqual([false, false]);
  });
});

describe('Duration conversions', () => {
  it.each<[string, number, number]>([
    ['unlimited', Infinity, Infinity],
    ['zero', 0, 0],
    ['1 second', 1000, 1],
    ['1500 ms', 1500, 1.5],
    ['1ms 999us 999ns', 1, 0.001999999],
    ['999 microseconds', 0, 0.000999],
    ['1 nanosecond', 0, 1e-9],
    ['2 days', 172_800_000, 172_800],
    ['1h30m', 5_400_000, 5400],
  ])('%j is %d ms and %d s', (text, millis, seconds) => {
    const duration = Duration.parse(text);
    expect(duration.toMillis()).toBe(millis);
    expect(duration.toSeconds()).toBeCloseTo(seconds, 12);
  });

  it('keeps the largest duration exact in milliseconds', () => {
    expect(Duration.ofNanos(MAX_NANOS).toMillis()).toBe(9_223_372_036_854);
  });

  it.each<[Duration, bigint]>([
    [Duration.ofMillis(0), 0n],
    [Duration.ofMillis(250), 250n * MS],
    [Duration.ofMillis(0.5), 500n * US],
    [Duration.ofSeconds(2), 2n * S],
    [Duration.ofSeconds(0.25), 250n * MS],
    [Duration.ofSeconds(1e-9), 1n],
    [Duration.ofNanos(42n), 42n],
  ])('%s has the expected nanoseconds', (duration, nanos) => {
    expect(duration.toNanos()).toBe(nanos);
  });

  it('makes ZERO from zero and UNLIMITED from Infinity', () => {
    expect(Duration.ofMillis(0)).toBe(Duration.ZERO);
    expect(Duration.ofNanos(0n)).toBe(Duration.ZERO);
    expect(Duration.ofMillis(Infinity)).toBe(Duration.UNLIMITED);
    expect(Duration.ofSeconds(Infinity)).toBe(Duration.UNLIMITED);
  });

  it('has no nanoseconds when unlimited', () => {
    durationError(() => Duration.UNLIMITED.toNanos());
  });

  it.each<[string, () => unknown]>([
    ['negative millis', () => Duration.ofMillis(-1)],
    ['NaN millis', () => Duration.ofMillis(Number.NaN)],
    ['-Infinity seconds', () => Duration.ofSeconds(-Infinity)],
    ['too many seconds', () => Duration.ofSeconds(1e13)],
    ['negative nanos', () => Duration.ofNanos(-1n)],
    ['too many nanos', () => Duration.ofNanos(MAX_NANOS + 1n)],
    ['a number of nanos', () => Duration.ofNanos(5 as unknown as bigint)],
  ])('rejects %s', (_name, action) => {
    durationError(action);
  });
});

describe('Duration properties', () => {
  const isDurationError = (error: unknown) =>
    error instanceof PorticoError && error.code === 'PORTICO_E_DURATION';

  function parsesOrThrowsDurationError(text: string): void {
    try {
      expect(Duration.parse(text)).toBeInstanceOf(Duration);
    } catch (error) {
      if (!isDurationError(error)) throw error;
    }
  }

  it('parses any string or throws a DURATION PorticoError, never anything else', () => {
    fc.assert(fc.property(fc.string(), parsesOrThrowsDurationError));
    fc.assert(fc.property(fc.string({ unit: 'binary' }), parsesOrThrowsDurationError));
  });

  it('parses any mix of duration-like pieces or throws a DURATION PorticoError', () => {
    const piece = fc.constantFrom(
      ...SPELLINGS.map(([s]) => s),
      'unlimited',
      'zero',
      'and',
      ',',
      ' ',
      '-',
      '.',
      '0',
      '7',
      '99999999999',
      'x',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) =>
        parsesOrThrowsDurationError(pieces.join('')),
      ),
    );
  });

  it('round trips any number of nanoseconds through toString', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: MAX_NANOS }), (nanos) => {
        const duration = Duration.ofNanos(nanos);
        expect(Duration.parse(duration.toString()).equals(duration)).toBe(true);
        expect(Duration.parse(duration.toString()).toNanos()).toBe(nanos);
      }),
    );
  });

  it('rejects any number of nanoseconds past the largest with a DURATION PorticoError', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: MAX_NANOS + 1n, max: MAX_NANOS * 1000n }), (nanos) => {
        durationError(() => Duration.ofNanos(nanos));
      }),
    );
  });
});
