import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { trustedProxies } from './trusted-proxies.ts';

const where = { file: 'config/routes/r.json', jsonPath: '$.handler.config' };

describe('trustedProxies: the clients whose X-Forwarded-* fields are passed on', () => {
  it('is nothing to ask per request when the list is empty or absent', () => {
    expect(trustedProxies(undefined, where)).toBeUndefined();
    expect(trustedProxies([], where)).toBeUndefined();
  });

  it('takes addresses and CIDR blocks of either family', () => {
    const trusted = trustedProxies(['10.0.0.0/8', '192.0.2.7', '::1', 'fd00::/8'], where)!;
    expect(['10.1.2.3', '192.0.2.7', '::1', 'fd12::5'].map(trusted)).toEqual([true, true, true, true]);
    expect(['11.0.0.1', '192.0.2.8', '::2', 'fe80::1', '', 'not an address'].map(trusted)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it.each([['10.0.0.0/33'], ['proxy.example'], ['10.0.0.0/'], ['::1/129'], ['']])(
    'refuses %j with a coded error naming its place',
    (entry) => {
      let error: unknown;
      try {
        trustedProxies(['127.0.0.1', entry], where);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(PorticoError);
      expect(error).toMatchObject({
        code: ErrorCode.CONFIG,
        details: { file: 'config/routes/r.json', jsonPath: '$.handler.config.trustedProxies[1]' },
      });
    },
  );
});
