import { describe, expect, it } from 'vitest';
import { charsetSetting } from './charset-setting.ts';
import { parseConfig } from './parse-config.ts';
import { s } from './schema-builders.ts';

const parse = (config: unknown) => parseConfig(s.object({ charset: charsetSetting() }), config);

describe('charsetSetting', () => {
  it('defaults to UTF-8, or to the default it is given', () => {
    expect(parse({})).toEqual({ charset: 'UTF-8' });
    expect(parseConfig(s.object({ charset: charsetSetting('ISO-8859-1') }), {})).toEqual({
      charset: 'ISO-8859-1',
    });
  });

  it('keeps a known name as written', () => {
    expect(parse({ charset: 'windows-1252' })).toEqual({ charset: 'windows-1252' });
  });

  it('refuses an unknown name where it is written', () => {
    expect(() => parse({ charset: 'UTF-9' })).toThrow(
      expect.objectContaining({
        message: expect.stringContaining("'UTF-9' is not a known character set"),
        details: expect.objectContaining({ jsonPath: '$.charset' }),
      }),
    );
  });
});
