import { type Context, Request, Response } from '@portico/gateway-core';
import { pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { COOKIE_JAR_SESSION_KEY, CookieFilter } from './index.ts';

function filterFrom(config: unknown): Promise<CookieFilter> {
  const { heap } = pluginHeap({
    plugins: [plugin],
    file: 'routes/cookies.json',
    heap: [{ name: 'Cookies', type: 'CookieFilter', config }],
  });
  return heap.get<CookieFilter>('Cookies', 'filter');
}

/** An application that answers with the given Set-Cookie / Set-Cookie2 headers. */
function app(headers: Record<string, string | string[]> = {}) {
  return recordingHandler(() => new Response({ status: 200, headers }));
}

function get(uri: string, headers: Record<string, string> = {}): Request {
  return new Request({ uri, headers });
}

/** One exchange; returns what the application received as Cookie and what the user agent gets. */
async function exchange(
  filter: CookieFilter,
  context: Context,
  request: Request,
  answer: Record<string, string | string[]> = {},
) {
  const next = app(answer);
  const response = await filter.filter(context, request, next.handler);
  return {
    upstreamCookie: next.requests[0]?.headers.get('cookie'),
    setCookie: response.headers.getAll('set-cookie'),
    setCookie2: response.headers.getAll('set-cookie2'),
  };
}

describe('CookieFilter', () => {
  describe('managed cookies', () => {
    it('keeps a cookie the application sets in the session instead of sending it to the user agent', async () => {
      const filter = await filterFrom({ managed: ['APP'] });
      const context = testContext();
      const first = await exchange(filter, context, get('http://app.example/'), {
        'Set-Cookie': 'APP=s3cret; Path=/',
      });
      expect(first.setCookie).toEqual([]);
      expect(JSON.stringify(context.session)).toContain('s3cret');
    });

    it('replays the stored cookie to the application on the next request of the session', async () => {
      const filter = await filterFrom({ managed: ['APP'] });
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=s3cret; Path=/' });
      const second = await exchange(filter, context, get('http://app.example/page'));
      expect(second.upstreamCookie).toBe('APP=s3cret');
    });

    it('does not pass on a managed cookie the user agent sends, but the stored one', async () => {
      const filter = await filterFrom({ managed: ['APP'], defaultAction: 'RELAY' });
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=real' });
      const sent = await exchange(
        filter,
        context,
        get('http://app.example/', { Cookie: 'APP=forged; other=1' }),
      );
      expect(sent.upstreamCookie).toBe('other=1; APP=real');
    });

    it('does not let a managed cookie through behind a comma (RFC 2965 servers split on it)', async () => {
      const filter = await filterFrom({ managed: ['APP'], relayed: ['lang'], defaultAction: 'SUPPRESS' });
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=real' });
      for (const cookie of [
        'lang=en, APP=forged',
        'lang=en,APP=forged',
        '$Version=1; lang=en , app = forged',
      ]) {
        const sent = await exchange(filter, context, get('http://app.example/', { Cookie: cookie }));
        expect(sent.upstreamCookie).not.toMatch(/forged/);
        expect(sent.upstreamCookie).toMatch(/lang=en/);
        expect(sent.upstreamCookie).toMatch(/APP=real$/);
      }
      // Commas that start no cookie, and relayed cookies together, pass as they came.
      const dates = await exchange(
        filter,
        testContext(),
        get('http://app.example/', { Cookie: 'lang="Wed, 01 Jan 2031"; x=1' }),
      );
      expect(dates.upstreamCookie).toBe('lang="Wed, 01 Jan 2031"');
      const relayed = await filterFrom({ relayed: ['a', 'b'], defaultAction: 'SUPPRESS' });
      const both = await exchange(relayed, testContext(), get('http://app.example/', { Cookie: 'a=1, b=2' }));
      expect(both.upstreamCookie).toBe('a=1, b=2');
    });

    it('survives the session being saved as JSON between requests (Redis, JWT cookie)', async () => {
      const filter = await filterFrom({});
      const first = testContext();
      await exchange(filter, first, get('http://app.example/'), { 'Set-Cookie': 'APP=v1' });
      const restored = testContext({ session: JSON.parse(JSON.stringify(first.session)) });
      expect((await exchange(filter, restored, get('http://app.example/'))).upstreamCookie).toBe('APP=v1');
    });

    it('replaces a stored cookie the application sets again', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=v1' });
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=v2' });
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBe('APP=v2');
    });

    it('ignores anything in the session that is not a stored cookie', async () => {
      const filter = await filterFrom({});
      const context = testContext({ session: { [COOKIE_JAR_SESSION_KEY]: [{ name: 'x' }, 'junk'] } });
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBeUndefined();
    });
  });

  describe('cookie attributes when replaying', () => {
    it('sends a cookie only under its Path', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'A=1; Path=/shop' });
      expect((await exchange(filter, context, get('http://app.example/shop/cart'))).upstreamCookie).toBe(
        'A=1',
      );
      expect(
        (await exchange(filter, context, get('http://app.example/shopping'))).upstreamCookie,
      ).toBeUndefined();
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBeUndefined();
    });

    it('gives a cookie without Path the directory of the request that set it', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/a/b/login'), { 'Set-Cookie': 'A=1' });
      expect((await exchange(filter, context, get('http://app.example/a/b/home'))).upstreamCookie).toBe(
        'A=1',
      );
      expect(
        (await exchange(filter, context, get('http://app.example/a/other'))).upstreamCookie,
      ).toBeUndefined();
    });

    it('does not store a cookie larger than a browser keeps, nor one for an overlong path or host', async () => {
      const filter = await filterFrom({ managed: ['APP', 'BIG'] });
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'APP=kept; Path=/' });
      const big = 'x'.repeat(4093);
      const answer = { 'Set-Cookie': [`BIG=${big}; Path=/`, `BIG=${big}x; Path=/big`, 'APP=deep'] };
      const longPath = `/${'p'.repeat(1100)}/page`;
      const result = await exchange(filter, context, get(`http://app.example${longPath}`), answer);
      expect(result.setCookie).toEqual([]);
      const longHost = await exchange(
        filter,
        context,
        get('http://app.example/', { Host: `${'h'.repeat(250)}.example` }),
        {
          'Set-Cookie': 'APP=host; Path=/',
        },
      );
      expect(longHost.setCookie).toEqual([]);
      const jar = context.session[COOKIE_JAR_SESSION_KEY] as { name: string; value: string; path: string }[];
      // BIG at 4096 bytes is kept; one byte more, the one for the 1100-byte directory and the one for a 260-character host are not.
      expect(jar.map((c) => `${c.name}=${c.value.length}@${c.path.length}`).sort()).toEqual([
        'APP=4@1',
        'BIG=4093@1',
      ]);
    });

    it('sends longer paths first', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), {
        'Set-Cookie': ['ROOT=r; Path=/', 'DEEP=d; Path=/x/y'],
      });
      expect((await exchange(filter, context, get('http://app.example/x/y/z'))).upstreamCookie).toBe(
        'DEEP=d; ROOT=r',
      );
    });

    it('sends a cookie without Domain to its host only, and a Domain cookie to its subdomains', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://www.example.com/', { Host: 'www.example.com' }), {
        'Set-Cookie': ['HOST=h', 'WIDE=w; Domain=.example.com'],
      });
      const sameHost = await exchange(filter, context, get('http://www.example.com/'));
      expect(sameHost.upstreamCookie).toBe('HOST=h; WIDE=w');
      const sibling = await exchange(filter, context, get('http://api.example.com/'));
      expect(sibling.upstreamCookie).toBe('WIDE=w');
      expect((await exchange(filter, context, get('http://example.org/'))).upstreamCookie).toBeUndefined();
    });

    it('matches on the host the user agent addressed (Host header), not the rebased URI', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://10.0.0.5:8080/', { Host: 'gateway.example:443' }), {
        'Set-Cookie': 'A=1',
      });
      const again = await exchange(
        filter,
        context,
        get('http://10.0.0.7:8080/', { Host: 'gateway.example' }),
      );
      expect(again.upstreamCookie).toBe('A=1');
    });

    it('keeps a cookie whose Domain names another site as a cookie of the host that set it', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://gw.example/'), {
        'Set-Cookie': 'A=1; Domain=internal.corp',
      });
      expect((await exchange(filter, context, get('http://gw.example/'))).upstreamCookie).toBe('A=1');
      expect((await exchange(filter, context, get('http://internal.corp/'))).upstreamCookie).toBeUndefined();
    });

    it('keeps a cookie whose Domain is a top-level domain (Domain=com) as a cookie of the host that set it', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://www.example.com/'), {
        'Set-Cookie': ['A=1; Domain=com', 'B=2; Domain=.com', 'C=3; Domain=example.com'],
      });
      expect((await exchange(filter, context, get('http://www.example.com/'))).upstreamCookie).toBe(
        'A=1; B=2; C=3',
      );
      expect((await exchange(filter, context, get('http://api.example.com/'))).upstreamCookie).toBe('C=3');
      expect((await exchange(filter, context, get('http://other.com/'))).upstreamCookie).toBeUndefined();
    });

    it('keeps a Domain naming a one-label host itself (Domain=localhost)', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://localhost/'), { 'Set-Cookie': 'A=1; Domain=localhost' });
      expect((await exchange(filter, context, get('http://app.localhost/'))).upstreamCookie).toBe('A=1');
    });

    it('sends a Secure cookie over https only', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('https://app.example/'), { 'Set-Cookie': 'S=1; Secure' });
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBeUndefined();
      expect((await exchange(filter, context, get('https://app.example/'))).upstreamCookie).toBe('S=1');
    });

    it('stops sending a cookie once Max-Age has passed, and drops it from the session', async () => {
      let now = Date.parse('2030-01-01T00:00:00Z');
      // Built directly, to give it a clock; the heap path is covered by every other test.
      const filter = new CookieFilter({
        managed: [],
        suppressed: [],
        relayed: [],
        defaultAction: 'MANAGE',
        now: () => now,
      });
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'T=1; Max-Age=60' });
      now += 59_000;
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBe('T=1');
      now += 2_000;
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBeUndefined();
      expect(context.session[COOKIE_JAR_SESSION_KEY]).toBeUndefined();
    });

    it('honours Expires, with Max-Age taking precedence', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), {
        'Set-Cookie': [
          'PAST=1; Expires=Thu, 01 Jan 1970 00:00:01 GMT',
          'FUTURE=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT',
          'BOTH=1; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:01 GMT',
        ],
      });
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBe(
        'FUTURE=1; BOTH=1',
      );
    });

    it('deletes a stored cookie the application expires', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'A=1; Path=/' });
      await exchange(filter, context, get('http://app.example/'), { 'Set-Cookie': 'A=; Path=/; Max-Age=0' });
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBeUndefined();
      expect(context.session[COOKIE_JAR_SESSION_KEY]).toBeUndefined();
    });
  });

  describe('suppressed and relayed cookies', () => {
    it('removes a suppressed cookie from the request and from the response', async () => {
      const filter = await filterFrom({ suppressed: ['TRACK'], defaultAction: 'RELAY' });
      const context = testContext();
      const result = await exchange(
        filter,
        context,
        get('http://app.example/', { Cookie: 'TRACK=1; keep=2' }),
        {
          'Set-Cookie': ['TRACK=9', 'keep=3'],
        },
      );
      expect(result.upstreamCookie).toBe('keep=2');
      expect(result.setCookie).toEqual(['keep=3']);
      expect(context.session[COOKIE_JAR_SESSION_KEY]).toBeUndefined();
    });

    it('passes a relayed cookie both ways untouched, without storing it', async () => {
      const filter = await filterFrom({ relayed: ['LANG'] });
      const context = testContext();
      const result = await exchange(filter, context, get('http://app.example/', { Cookie: 'LANG=en' }), {
        'Set-Cookie': 'LANG=fr; Path=/; HttpOnly',
      });
      expect(result.upstreamCookie).toBe('LANG=en');
      expect(result.setCookie).toEqual(['LANG=fr; Path=/; HttpOnly']);
      expect(context.session[COOKIE_JAR_SESSION_KEY]).toBeUndefined();
    });

    it('leaves the session alone when no cookie can be managed', async () => {
      const filter = await filterFrom({ relayed: ['a'], defaultAction: 'SUPPRESS' });
      const context = testContext({ session: () => ({ loaded: true }) });
      await exchange(filter, context, get('http://app.example/', { Cookie: 'a=1' }), { 'Set-Cookie': 'b=2' });
      expect(context.sessionUsed).toBe(false);
    });

    it('matches names case-insensitively', async () => {
      const filter = await filterFrom({ relayed: ['lang'], defaultAction: 'SUPPRESS' });
      const result = await exchange(
        filter,
        testContext(),
        get('http://app.example/', { Cookie: 'LANG=en; x=1' }),
      );
      expect(result.upstreamCookie).toBe('LANG=en');
    });

    it('removes RFC 2965 $Path and $Domain parts together with their cookie', async () => {
      const filter = await filterFrom({ suppressed: ['A'], defaultAction: 'RELAY' });
      const cookie = '$Version="1"; A="1"; $Path="/a"; B="2"; $Path="/b"';
      const result = await exchange(filter, testContext(), get('http://app.example/', { Cookie: cookie }));
      expect(result.upstreamCookie).toBe('$Version="1"; B="2"; $Path="/b"');
    });

    it('sends one Cookie header and none when nothing is left', async () => {
      const filter = await filterFrom({ relayed: ['a', 'b'], suppressed: ['c'] });
      const request = get('http://app.example/');
      request.headers.add('Cookie', 'a=1');
      request.headers.add('Cookie', 'b=2');
      expect((await exchange(filter, testContext(), request)).upstreamCookie).toBe('a=1; b=2');
      const nothing = await exchange(filter, testContext(), get('http://app.example/', { Cookie: 'c=1' }));
      expect(nothing.upstreamCookie).toBeUndefined();
    });
  });

  describe('defaultAction', () => {
    it('is MANAGE by default: an unlisted cookie is stored and hidden from the user agent', async () => {
      const filter = await filterFrom({});
      const context = testContext();
      const result = await exchange(filter, context, get('http://app.example/', { Cookie: 'ua=1' }), {
        'Set-Cookie': 'UNLISTED=1',
      });
      expect(result.upstreamCookie).toBeUndefined();
      expect(result.setCookie).toEqual([]);
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBe('UNLISTED=1');
    });

    it('RELAY passes unlisted cookies', async () => {
      const filter = await filterFrom({ defaultAction: 'RELAY' });
      const result = await exchange(filter, testContext(), get('http://app.example/', { Cookie: 'ua=1' }), {
        'Set-Cookie': 'X=1',
      });
      expect(result.upstreamCookie).toBe('ua=1');
      expect(result.setCookie).toEqual(['X=1']);
    });

    it('SUPPRESS removes unlisted cookies both ways', async () => {
      const filter = await filterFrom({ defaultAction: 'suppress' });
      const context = testContext();
      const result = await exchange(filter, context, get('http://app.example/', { Cookie: 'ua=1' }), {
        'Set-Cookie': 'X=1',
      });
      expect(result.upstreamCookie).toBeUndefined();
      expect(result.setCookie).toEqual([]);
      expect(context.session[COOKIE_JAR_SESSION_KEY]).toBeUndefined();
    });

    it('refuses any other value, naming the file and the JSON path', async () => {
      await expect(filterFrom({ defaultAction: 'KEEP' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/cookies.json', jsonPath: '$.heap[0].config.defaultAction' },
      });
    });
  });

  describe('precedence', () => {
    it('manages a cookie that is also suppressed and relayed', async () => {
      const filter = await filterFrom({ managed: ['X'], suppressed: ['X'], relayed: ['X'] });
      expect(filter.actionFor('x')).toBe('MANAGE');
    });

    it('suppresses a cookie that is also relayed', async () => {
      const filter = await filterFrom({ suppressed: ['X'], relayed: ['x'], defaultAction: 'RELAY' });
      const result = await exchange(filter, testContext(), get('http://app.example/', { Cookie: 'X=1' }), {
        'Set-Cookie': 'X=2',
      });
      expect(result.upstreamCookie).toBeUndefined();
      expect(result.setCookie).toEqual([]);
    });
  });

  describe('Set-Cookie2', () => {
    it('handles each cookie of a Set-Cookie2 header by its own action', async () => {
      const filter = await filterFrom({ managed: ['M'], relayed: ['R'], suppressed: ['S'] });
      const context = testContext();
      const result = await exchange(filter, context, get('http://app.example/'), {
        'Set-Cookie2': 'M="m1"; Version="1"; Path="/", R="r1"; Version="1", S="s1"; Version="1"',
      });
      expect(result.setCookie2).toEqual(['R="r1"; Version="1"']);
      expect((await exchange(filter, context, get('http://app.example/'))).upstreamCookie).toBe('M="m1"');
    });

    it('drops the header when none of its cookies is relayed', async () => {
      const filter = await filterFrom({});
      const result = await exchange(filter, testContext(), get('http://app.example/'), {
        'Set-Cookie2': 'A="1"; Version="1"',
      });
      expect(result.setCookie2).toEqual([]);
    });
  });

  describe('lists', () => {
    it.each(['managed', 'suppressed', 'relayed'])(
      'refuses %s when it is not an array of strings',
      async (field) => {
        await expect(filterFrom({ [field]: 'APP' })).rejects.toMatchObject({
          code: 'PORTICO_E_CONFIG',
          details: { jsonPath: `$.heap[0].config.${field}` },
        });
      },
    );

    it('defaults every list to empty', async () => {
      const filter = await filterFrom({ defaultAction: 'RELAY' });
      expect(['a', 'b'].map((n) => filter.actionFor(n))).toEqual(['RELAY', 'RELAY']);
    });

    it('refuses unknown settings', async () => {
      await expect(filterFrom({ manage: ['x'] })).rejects.toMatchObject({ code: 'PORTICO_E_CONFIG' });
    });
  });
});
