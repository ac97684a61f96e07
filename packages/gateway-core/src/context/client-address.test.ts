import { describe, expect, it } from 'vitest';
import { apiProtectionFilter } from '../builtins/api-protection.ts';
import { Request, Response } from '../http/message.ts';
import { testContext } from '../testing/heap.ts';
import { plainAddress } from './client-address.ts';

describe('client addresses in one form', () => {
  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:10.1.2.3', '10.1.2.3'],
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:abcd', '::ffff:abcd'],
    ['', ''],
  ])('%s is %s', (raw, plain) => {
    expect(plainAddress(raw)).toBe(plain);
  });

  it('the administrative guard compares both sides in that form', async () => {
    const next = { handle: async () => Response.empty(200) };
    const request = new Request({ uri: 'http://gw/openig/ping' });
    const mapped = testContext({ client: { remoteAddress: '::ffff:10.0.0.7' } });
    expect((await apiProtectionFilter(['10.0.0.7']).filter(mapped, request, next)).status).toBe(200);
    const plain = testContext({ client: { remoteAddress: '10.0.0.7' } });
    expect((await apiProtectionFilter(['::ffff:10.0.0.7']).filter(plain, request, next)).status).toBe(200);
    expect((await apiProtectionFilter(['10.0.0.8']).filter(plain, request, next)).status).toBe(403);
    const loopback = testContext({ client: { remoteAddress: '::ffff:127.0.0.1' } });
    expect((await apiProtectionFilter(undefined).filter(loopback, request, next)).status).toBe(200);
  });
});
