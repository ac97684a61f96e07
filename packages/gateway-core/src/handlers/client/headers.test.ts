import { describe, expect, it } from 'vitest';
import { Headers } from '../../http/headers.ts';
import { Request } from '../../http/message.ts';
import { responseHeadersFrom, upstreamRequestHeaders } from './headers.ts';

describe('responseHeadersFrom', () => {
  it('keeps the first spelling of a repeated name and every value in order, found in any case', () => {
    const headers = responseHeadersFrom(['Set-Cookie', 'a=1', 'X-One', '1', 'set-cookie', 'b=2']);
    expect(headers.names()).toEqual(['Set-Cookie', 'X-One']);
    expect(headers.getAll('SET-COOKIE')).toEqual(['a=1', 'b=2']);
    expect(headers.toRaw()).toEqual(['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'X-One', '1']);
    headers.add('x-one', '2');
    expect(headers.getAll('X-One')).toEqual(['1', '2']);
  });

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

describe('responseHeadersFrom, without a copy', () => {
  it('keeps the upstream list itself when it drops nothing, lines in their places', () => {
    const raw = ['Set-Cookie', 'a=1', 'X-One', '1', 'set-cookie', 'b=2'];
    expect(responseHeadersFrom(raw).toRaw()).toEqual(raw);
  });

  it('drops hop-by-hop fields in any case wherever they stand, keeping the rest in order', () => {
    const raw = ['Date', 'd', 'CONNECTION', 'keep-alive', 'Keep-Alive', 'timeout=5', 'X-A', '1', 'Te', 't'];
    expect(responseHeadersFrom(raw).toRaw()).toEqual(['Date', 'd', 'X-A', '1']);
    expect(raw).toHaveLength(10);
  });

  it('keeps Connection and Upgrade for a 101, and still drops the other hop-by-hop fields', () => {
    const raw = [
      'Upgrade',
      'websocket',
      'Connection',
      'Upgrade',
      'Keep-Alive',
      'x',
      'Sec-WebSocket-Accept',
      's',
    ];
    expect(responseHeadersFrom(raw, { keepUpgrade: true }).toRaw()).toEqual([
      'Upgrade',
      'websocket',
      'Connection',
      'Upgrade',
      'Sec-WebSocket-Accept',
      's',
    ]);
  });
});

describe('upstreamRequestHeaders', () => {
  const request = (headers: Record<string, string | string[]>) =>
    new Request({ uri: 'http://upstream.example/', headers });
  /** The flat list as a Map, failing when a name comes twice. */
  const fields = (list: (string | string[])[]) => {
    expect(list.length % 2).toBe(0);
    const map = new Map<string, string | string[]>();
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i] as string;
      expect(
        [...map.keys()].map((n) => n.toLowerCase()),
        name,
      ).not.toContain(name.toLowerCase());
      map.set(name, list[i + 1]!);
    }
    return map;
  };

  it("writes a trusted proxy's X-Forwarded-For first and its address last, once", () => {
    const out = fields(
      upstreamRequestHeaders(request({ 'x-forwarded-for': ['10.0.0.1', '10.0.0.2'], 'X-Other': 'o' }), {
        host: 'upstream.example',
        forwarded: { for: '192.0.2.7', proto: 'http', host: 'gateway.example', trusted: true },
      }),
    );
    expect(out.get('x-forwarded-for')).toBe('10.0.0.1, 10.0.0.2, 192.0.2.7');
    expect([...out.keys()].filter((name) => name.toLowerCase() === 'x-forwarded-for')).toHaveLength(1);
    expect(out.get('X-Other')).toBe('o');
  });

  it("spells X-Forwarded-For as the client did, without grouping the request's fields to find it", () => {
    const raw = ['A', '1', 'x-forwarded-for', '10.0.0.1', 'a', '2', 'X-Forwarded-For', '10.0.0.2'];
    const request = new Request({ uri: 'http://upstream.example/', headers: Headers.fromRaw(raw) });
    const list = upstreamRequestHeaders(request, {
      host: 'u.example',
      forwarded: { for: '192.0.2.7', proto: 'http', host: undefined, trusted: true },
    });
    expect(list).toEqual([
      'Host',
      'u.example',
      'A',
      ['1', '2'],
      'x-forwarded-for',
      '10.0.0.1, 10.0.0.2, 192.0.2.7',
      'X-Forwarded-Proto',
      'http',
    ]);
    // Still the list as it arrived: nothing asked for the fields as a whole.
    expect(request.headers.toRaw()).toEqual(raw);
  });

  it('adds no empty entry for an X-Forwarded-For field the client sent empty', () => {
    const forward = (raw: string[]) =>
      upstreamRequestHeaders(
        new Request({ uri: 'http://upstream.example/', headers: Headers.fromRaw(raw) }),
        {
          host: 'u.example',
          forwarded: { for: '192.0.2.7', proto: 'http', host: undefined, trusted: true },
        },
      ).slice(2, 4);
    expect(forward(['X-Forwarded-For', ''])).toEqual(['X-Forwarded-For', '192.0.2.7']);
    expect(forward(['X-Forwarded-For', ' ', 'X-Forwarded-For', '10.0.0.1 '])).toEqual([
      'X-Forwarded-For',
      '10.0.0.1, 192.0.2.7',
    ]);
  });

  it("replaces the X-Forwarded-* of a client that is not a trusted proxy with the gateway's own", () => {
    const raw = [
      'X-Forwarded-For',
      '10.0.0.1',
      'x-forwarded-proto',
      'https',
      'X-FORWARDED-HOST',
      'internal.example',
      'A',
      '1',
    ];
    const list = upstreamRequestHeaders(
      new Request({ uri: 'http://upstream.example/', headers: Headers.fromRaw(raw) }),
      {
        host: 'u.example',
        forwarded: { for: '192.0.2.7', proto: 'http', host: 'gateway.example', trusted: false },
      },
    );
    expect(list).toEqual([
      'Host',
      'u.example',
      'A',
      '1',
      'X-Forwarded-For',
      '192.0.2.7',
      'X-Forwarded-Proto',
      'http',
      'X-Forwarded-Host',
      'gateway.example',
    ]);
  });

  it("keeps a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host", () => {
    const out = fields(
      upstreamRequestHeaders(
        request({ 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'public.example' }),
        {
          host: 'upstream.example',
          forwarded: { for: '192.0.2.7', proto: 'http', host: 'gateway.example', trusted: true },
        },
      ),
    );
    expect([out.get('X-Forwarded-Proto'), out.get('X-Forwarded-Host')]).toEqual(['https', 'public.example']);
  });

  it('without forwarding, passes the client X-Forwarded-For on as it came', () => {
    const out = fields(
      upstreamRequestHeaders(request({ 'X-Forwarded-For': '10.0.0.1' }), { host: 'upstream.example' }),
    );
    expect(out.get('X-Forwarded-For')).toBe('10.0.0.1');
  });

  it('drops the fields a Connection set by a filter lists, and those the handler replaces', () => {
    const out = fields(
      upstreamRequestHeaders(
        request({ Connection: 'X-Hop', 'X-Hop': 'h', 'X-Set': 'client', 'X-Keep': 'k' }),
        {
          host: 'upstream.example',
          extra: [['x-set', 'handler']],
        },
      ),
    );
    expect([...out.keys()]).toEqual(['Host', 'X-Keep', 'x-set']);
    expect(out.get('x-set')).toBe('handler');
  });

  it("lets the handler's own fields replace Host, Content-Length and X-Forwarded-*, each sent once", () => {
    const list = upstreamRequestHeaders(request({ 'X-Forwarded-Proto': 'https', Accept: 'a' }), {
      host: 'upstream.example',
      contentLength: 3,
      forwarded: { for: '192.0.2.7', proto: 'http', host: 'gateway.example', trusted: true },
      extra: [
        ['host', 'virtual.example'],
        ['content-length', '3'],
        ['x-forwarded-for', '198.51.100.1'],
        ['X-Forwarded-Proto', 'http'],
        ['x-forwarded-host', 'set.example'],
      ],
    });
    expect(list).toEqual([
      'Accept',
      'a',
      'host',
      'virtual.example',
      'content-length',
      '3',
      'x-forwarded-for',
      '198.51.100.1',
      'X-Forwarded-Proto',
      'http',
      'x-forwarded-host',
      'set.example',
    ]);
  });

  it('gathers a name the client repeats, in any case and apart, where it first came, first spelling', () => {
    const request = new Request({
      uri: 'http://upstream.example/',
      headers: Headers.fromRaw(['Accept', 'a', 'X-Many', '1', 'Cookie', 'c', 'x-many', '2', 'X-MANY', '3']),
    });
    const list = upstreamRequestHeaders(request, { host: 'u.example' });
    expect(list).toEqual(['Host', 'u.example', 'Accept', 'a', 'X-Many', ['1', '2', '3'], 'Cookie', 'c']);
  });

  it('gathers repeated names the same way in a request of many fields (past the pairwise search)', () => {
    const raw: string[] = [];
    for (let i = 0; i < 40; i++) raw.push(`X-F${i}`, String(i));
    raw.push('x-f3', 'again', 'X-Last', 'l', 'X-F3', 'third');
    const request = new Request({ uri: 'http://upstream.example/', headers: Headers.fromRaw(raw) });
    const list = upstreamRequestHeaders(request, { host: 'u.example' });
    expect(list).toHaveLength(2 + 41 * 2);
    expect(list.slice(8, 10)).toEqual(['X-F3', ['3', 'again', 'third']]);
    expect(list.slice(-2)).toEqual(['X-Last', 'l']);
  });

  it('keeps several values of one name as one entry with an array, in order', () => {
    const list = upstreamRequestHeaders(request({ 'X-Many': ['1', '2'], Accept: 'a' }), {
      host: 'u.example',
    });
    expect(list).toEqual(['Host', 'u.example', 'X-Many', ['1', '2'], 'Accept', 'a']);
  });
});
