import { describe, expect, it } from 'vitest';
import { Request } from '../../http/message.ts';
import { responseHeadersFrom, upstreamRequestHeaders } from './headers.ts';

describe('responseHeadersFrom', () => {
  it('drops what a one-token Connection field names, whatever its case and spaces', () => {
    const headers = responseHeadersFrom(['Connection', ' X-Hop ', 'x-hop', 'secret', 'X-Kept', 'yes']);
    expect(headers.names()).toEqual(['X-Kept']);
  });

  it('drops what each of several Connection fields lists, and keeps the rest', () => {
    const headers = responseHeadersFrom([
      'Connection',
      'close',
      'Close',
      'not a header to keep',
      'connection',
      'keep-alive, X-One,x-two',
      'X-One',
      '1',
      'X-Two',
      '2',
      'Keep-Alive',
      'timeout=5',
      'X-Three',
      '3',
    ]);
    expect(headers.names()).toEqual(['X-Three']);
  });
});

describe('upstreamRequestHeaders', () => {
  const request = (headers: Record<string, string | string[]>) =>
    new Request({ uri: 'http://upstream.example/', headers });

  it("writes the client's X-Forwarded-For first and the client's address last, once", () => {
    const out = upstreamRequestHeaders(
      request({ 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'], 'X-Other': 'o' }),
      {
        host: 'upstream.example',
        forwarded: { for: '192.0.2.7', proto: 'http', host: 'gateway.example' },
      },
    );
    expect(out.get('x-forwarded-for')).toBe('10.0.0.1, 10.0.0.2, 192.0.2.7');
    expect([...out.keys()].filter((name) => name.toLowerCase() === 'x-forwarded-for')).toHaveLength(1);
    expect(out.get('X-Other')).toBe('o');
  });

  it('without forwarding, passes the client X-Forwarded-For on as it came', () => {
    const out = upstreamRequestHeaders(request({ 'X-Forwarded-For': '10.0.0.1' }), {
      host: 'upstream.example',
    });
    expect(out.get('X-Forwarded-For')).toBe('10.0.0.1');
  });

  it('drops the fields a Connection set by a filter lists, and those the handler replaces', () => {
    const out = upstreamRequestHeaders(
      request({ Connection: 'X-Hop', 'X-Hop': 'h', 'X-Set': 'client', 'X-Keep': 'k' }),
      {
        host: 'upstream.example',
        extra: [['x-set', 'handler']],
      },
    );
    expect([...out.keys()]).toEqual(['Host', 'X-Keep', 'x-set']);
    expect(out.get('x-set')).toBe('handler');
  });
});
