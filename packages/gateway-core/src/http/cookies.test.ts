import { describe, expect, it } from 'vitest';
import { parseSetCookie, splitSetCookie2 } from './cookies.ts';

describe('parseSetCookie', () => {
  it('reads the pair and the attributes, names lower-cased and quotes removed', () => {
    expect(
      parseSetCookie('SID=a=b; Path="/app"; Expires=Wed, 21 Oct 2035 07:28:00 GMT; Secure; HttpOnly'),
    ).toEqual({
      name: 'SID',
      value: 'a=b',
      attributes: { path: '/app', expires: 'Wed, 21 Oct 2035 07:28:00 GMT', secure: '', httponly: '' },
    });
  });

  it('keeps the value as sent and lets a repeated attribute override', () => {
    expect(parseSetCookie(' A = "quoted" ; Path=/a; path=/b')).toMatchObject({
      name: 'A',
      value: '"quoted"',
      attributes: { path: '/b' },
    });
  });

  it('is undefined without a name', () => {
    expect(parseSetCookie('novalue')).toBeUndefined();
    expect(parseSetCookie('=x; Path=/')).toBeUndefined();
  });
});

describe('splitSetCookie2', () => {
  it('splits at commas outside quoted strings', () => {
    expect(splitSetCookie2('A="1,2"; Version="1", B="x"; Comment="a, b",')).toEqual([
      'A="1,2"; Version="1"',
      'B="x"; Comment="a, b"',
    ]);
  });
});
