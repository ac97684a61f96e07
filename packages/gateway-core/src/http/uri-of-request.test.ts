import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Uri } from './uri.ts';

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
