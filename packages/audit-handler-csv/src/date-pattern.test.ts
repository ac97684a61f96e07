import { describe, expect, it } from 'vitest';
import { DatePattern, DatePatternError, DEFAULT_SUFFIX } from './date-pattern.ts';

// Local time, as history files are named.
const AT = new Date(2026, 10, 29, 7, 5, 9, 42).getTime();

describe('DatePattern', () => {
  it('writes the default suffix as year, month, day, hours (00-23), minutes and seconds', () => {
    expect(new DatePattern(DEFAULT_SUFFIX).format(AT)).toBe('-2026.11.29-07.05.09');
    expect(new DatePattern(DEFAULT_SUFFIX).format(new Date(2026, 0, 2, 23, 59, 58).getTime())).toBe(
      '-2026.01.02-23.59.58',
    );
  });

  it('reads the other fields and quoted text as Java does', () => {
    expect(new DatePattern("yy-MMM-EEE hh'h' a SSS ''").format(AT)).toBe("26-Nov-Sun 07h AM 042 '");
    expect(new DatePattern("MMMM EEEE 'o''clock'").format(AT)).toBe("November Sunday o'clock");
  });

  it('matches the names it writes and no others', () => {
    const pattern = new RegExp(`^${new DatePattern(DEFAULT_SUFFIX).regex}$`);
    expect(pattern.test('-2026.11.29-07.05.09')).toBe(true);
    expect(pattern.test('-2026.11.29-07.05')).toBe(false);
    expect(pattern.test('-2026x11.29-07.05.09')).toBe(false);
  });

  it('refuses letters that are no date field, and an unclosed quote', () => {
    expect(() => new DatePattern('-yyyy.gz')).toThrow(DatePatternError);
    expect(() => new DatePattern("-yyyy'x")).toThrow(/never closed/);
  });
});
