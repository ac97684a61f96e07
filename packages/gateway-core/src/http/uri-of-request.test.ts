import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EL_SET } from '../expression/access.ts';
import { normalizeEscapes, normalizeRawPath, Uri } from './uri.ts';

const parts = (uri: Uri) => ({
  scheme: uri.scheme,
  userInfo: uri.userInfo,
  host: uri.host,
  port: uri.port,
  rawPath: uri.rawPath,
  rawQuery: uri.rawQuery,
  rawFragment: uri.rawFragment,
});

/** What parse makes of the same request, or the error it throws. */
function viaParse(scheme: string, host: string, target: string) {
  try {
    return parts(Uri.parse(`${scheme}://${host}${target}`));
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function viaOfRequest(scheme: string, host: string, target: string) {
  try {
    return parts(Uri.ofRequest(scheme, host, target));
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe('Uri.ofRequest, the per-request fast path', () => {
  it('gives what parse gives for typical requests', () => {
    for (const [host, target] of [
      ['Example.COM:8080', '/a/b?x=1&y=%20#frag'],
      ['gw', '/'],
      ['gw:', '/p?'],
      ['[::1]:8443', '/v6'],
      ['user@host', '/x'],
      ['h:99999', '/too-big'],
      ['h:8x', '/bad-port'],
      ['h', '/with space'],
    ] as const) {
      expect(viaOfRequest('http', host, target), `${host}${target}`).toEqual(viaParse('http', host, target));
    }
  });

  it('agrees with parse on arbitrary hosts and targets', () => {
    const chars = fc.constantFrom(..."aZ09-._~:/?#[]@!$&'()*+,;=% \t\u0001é".split(''));
    const text = fc.array(chars, { maxLength: 20 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, text, fc.constantFrom('http', 'https'), (host, rest, scheme) => {
        const target = `/${rest}`;
        expect(viaOfRequest(scheme, host, target)).toEqual(viaParse(scheme, host, target));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('Uri.hostFromClient: whether the host is still the one the client named', () => {
  const arrived = () => Uri.ofRequest('http', 'evil.example:8080', '/a?b');

  it('holds on the URI a request arrived with, and on its copies', () => {
    expect(arrived().hostFromClient).toBe(true);
    expect(arrived().copy().hostFromClient).toBe(true);
    expect(arrived().with({ rawPath: '/other', port: 9 }).hostFromClient).toBe(true);
    expect(Uri.ofRequest('http', 'user@h', '/x').hostFromClient).toBe(true);
  });

  it('ends once anything else chooses the host, even the same name', () => {
    expect(Uri.parse('http://evil.example:8080/a').hostFromClient).toBe(false);
    expect(arrived().rebase('http://evil.example:8080').hostFromClient).toBe(false);
    expect(arrived().with({ host: 'evil.example' }).hostFromClient).toBe(false);
    const set = arrived();
    set.host = 'evil.example';
    expect(set.hostFromClient).toBe(false);
    const assigned = arrived();
    assigned[EL_SET]('host', 'evil.example');
    expect([assigned.hostFromClient, assigned.host]).toEqual([false, 'evil.example']);
    const portOnly = arrived();
    portOnly[EL_SET]('port', 9);
    expect(portOnly.hostFromClient).toBe(true);
  });
});

describe('Uri.rewrittenAs: a URI an expression writes over the request URI', () => {
  const arrived = () => Uri.ofRequest('http', 'evil.example:8080', '/a?b');

  it('keeps the host the client’s when the new URI names the same host', () => {
    expect(arrived().rewrittenAs('http://evil.example:8080/a?b&page=2').hostFromClient).toBe(true);
    expect(arrived().rewrittenAs('https://EVIL.example/v2/a').hostFromClient).toBe(true);
    expect(arrived().rewrittenAs(arrived()).hostFromClient).toBe(true);
  });

  it('makes it the configuration’s when the new URI names another host, or the old one was not the client’s', () => {
    expect(arrived().rewrittenAs('http://upstream.internal/a').hostFromClient).toBe(false);
    expect(
      Uri.parse('http://evil.example:8080/').rewrittenAs('http://evil.example:8080/a').hostFromClient,
    ).toBe(false);
  });

  it('gives a copy, so the URI written stays as it was', () => {
    const original = arrived();
    const written = Uri.parse('http://x.example/').rewrittenAs(original);
    written.rawPath = '/changed';
    expect([written === original, original.rawPath, written.hostFromClient]).toEqual([false, '/a', true]);
  });
});

describe('normalizeRawPath: the one form of a request path', () => {
  it.each([
    ['/a/b', '/a/b'],
    ['/', '/'],
    ['/a/./b', '/a/b'],
    ['/a/../b', '/b'],
    ['/../a', '/a'],
    ['/a/b/..', '/a/'],
    ['/a/b/.', '/a/b/'],
    ['//a//b//', '/a/b/'],
    ['/%2e%2e/a', '/a'],
    ['/a/%2E/b', '/a/b'],
    ['/a/.%2e/b', '/b'],
    ['/a/..;jsessionid=1/b', '/b'],
    ['/a/%2fb', '/a/%2Fb'],
    ['/a/%2F..', '/a/%2F..'],
    ['/.well-known/x', '/.well-known/x'],
    ['/a/...', '/a/...'],
    ['*', '*'],
    ['', ''],
  ])('%s → %s', (raw, normal) => {
    expect(normalizeRawPath(raw)).toBe(normal);
  });

  it('returns the very same string when there is nothing to do', () => {
    const path = `/api/v1/items/${'x'.repeat(10)}`;
    expect(normalizeRawPath(path)).toBe(path);
    const escaped = '/a%20b/%C3%A9/%2F/%25';
    expect(normalizeRawPath(escaped)).toBe(escaped);
  });

  it.each([
    // Escaped unreserved characters are decoded before dot segments are looked for: never above the root.
    ['/%61pi/x', '/api/x'],
    ['/%2e%2e/%2E%2E/private', '/private'],
    ['/public/%2e%2e/private', '/private'],
    ['/a/%2E%2e%3Bx/b', '/a/..%3Bx/b'],
    ['/a%2Eb/c', '/a.b/c'],
    // A reserved escape stays one, upper-cased: no separator appears, no segment is resolved.
    ['/a/%2f../b', '/a/%2F../b'],
    ['/%2e%2e%2f%2e%2e/etc', '/..%2F../etc'],
    ['/%25%32%65/x', '/%252e/x'],
  ])('escapes first, then segments: %s → %s', (raw, normal) => {
    expect(normalizeRawPath(raw)).toBe(normal);
  });

  it('is idempotent', () => {
    for (const raw of [
      '/a/./b/../../c//d/',
      '/%2e/%2E%2e/x/./',
      '//..//a/b/..;x/c',
      '/%61/%%32%65%%32%65/%4%31/%7e',
      '/%252e%252e/%2f',
    ]) {
      const once = normalizeRawPath(raw);
      expect(normalizeRawPath(once)).toBe(once);
    }
  });

  it('the decoded path keeps %2F encoded: one segment, never a separator', () => {
    expect(new Uri({ rawPath: '/%2Fprivate/a%20b' }).path).toBe('/%2Fprivate/a b');
    const uri = new Uri({ rawPath: '/x' });
    uri.path = '/a%2Fb c';
    expect(uri.rawPath).toBe('/a%2Fb%20c');
  });
});

describe('normalizeEscapes: RFC 3986 §6.2.2.1-2', () => {
  const hex = (code: number) => code.toString(16).padStart(2, '0');

  it('decodes every escaped unreserved character, in either case: ALPHA, DIGIT, -, ., _, ~', () => {
    const unreserved = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';
    for (const c of unreserved) {
      const code = c.charCodeAt(0);
      expect(normalizeEscapes(`/x%${hex(code).toUpperCase()}y`)).toBe(`/x${c}y`);
      expect(normalizeEscapes(`/x%${hex(code)}y`)).toBe(`/x${c}y`);
    }
  });

  it('keeps every other ASCII escape an escape, its hex digits in upper case', () => {
    for (let code = 0; code < 0x80; code++) {
      const c = String.fromCharCode(code);
      if (/[A-Za-z0-9\-._~]/.test(c)) continue;
      expect(normalizeEscapes(`/x%${hex(code)}`)).toBe(`/x%${hex(code).toUpperCase()}`);
    }
    for (const reserved of ['%2F', '%25', '%3F', '%23', '%5C', '%3B', '%2B', '%20', '%00'])
      expect(normalizeEscapes(`/a${reserved}b`)).toBe(`/a${reserved}b`);
  });

  it('upper-cases escapes of bytes past ASCII, valid UTF-8 or not, without decoding them', () => {
    expect(normalizeEscapes('/caf%c3%a9')).toBe('/caf%C3%A9');
    expect(normalizeEscapes('/%ff%Fe')).toBe('/%FF%FE');
    expect(normalizeEscapes('/%c3%41')).toBe('/%C3A');
  });

  it('leaves a malformed escape as it came, and what its two next characters hold', () => {
    expect(normalizeEscapes('/%')).toBe('/%');
    expect(normalizeEscapes('/a%')).toBe('/a%');
    expect(normalizeEscapes('/a%6')).toBe('/a%6');
    expect(normalizeEscapes('/%zz%61')).toBe('/%zza');
    expect(normalizeEscapes('/%g1/%61')).toBe('/%g1/a');
    // Decoding %32 or %31 would make a new escape out of the malformed one: %2e, %41.
    expect(normalizeEscapes('/%%32%65')).toBe('/%%32e');
    expect(normalizeEscapes('/%4%31')).toBe('/%4%31');
    expect(normalizeEscapes('/%%2e')).toBe('/%%2E');
  });

  it('decodes nothing twice: %25 stays, what follows it is text', () => {
    expect(normalizeEscapes('/%2561')).toBe('/%2561');
    expect(normalizeEscapes('/%25%36%31')).toBe('/%2561');
    expect(normalizeEscapes(normalizeEscapes('/%25%36%31'))).toBe('/%2561');
  });

  it('keeps the decoded view of the path as it was', () => {
    for (const raw of ['/%61pi/%2fx', '/%%32%65', '/%c3%a9%7E', '/%4%31', '/%25%36%31', '/a%zz%41'])
      expect(new Uri({ rawPath: normalizeEscapes(raw) }).path).toBe(new Uri({ rawPath: raw }).path);
  });

  it('returns the very same string when there is nothing to change', () => {
    for (const raw of ['/plain/path', '/a%20b', '/%C3%A9', '/%zz', '/%2F%25'])
      expect(normalizeEscapes(raw)).toBe(raw);
  });
});
