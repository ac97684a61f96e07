import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { compile, compileLValue } from '../expression/expression.ts';
import { Entity } from './entity.ts';
import { forEachFieldOf, Headers } from './headers.ts';
import { Request, Response } from './message.ts';
import { Uri } from './uri.ts';

describe('Headers', () => {
  it('is case-insensitive, multi-valued, and keeps order and original spelling', () => {
    const h = Headers.fromRaw([
      'Content-Type',
      'text/plain',
      'X-Multi',
      'a',
      'x-multi',
      'b',
      'Accept',
      '*/*',
    ]);
    expect(h.get('content-type')).toBe('text/plain');
    expect(h.getAll('X-MULTI')).toEqual(['a', 'b']);
    expect(h.names()).toEqual(['Content-Type', 'X-Multi', 'Accept']);
    expect(h.toRaw()).toEqual([
      'Content-Type',
      'text/plain',
      'X-Multi',
      'a',
      'X-Multi',
      'b',
      'Accept',
      '*/*',
    ]);
  });

  it('set replaces, add appends, delete removes, an empty list deletes', () => {
    const h = new Headers({ A: '1' });
    h.add('a', ['2', 3]);
    expect(h.getAll('A')).toEqual(['1', '2', '3']);
    h.set('A', 'x');
    expect(h.getAll('a')).toEqual(['x']);
    h.set('A', []);
    expect(h.has('a')).toBe(false);
    expect(h.delete('missing')).toBe(false);
  });

  it('add appends a list of any length (no spread of it as arguments)', () => {
    const h = new Headers({ A: '1' });
    h.add(
      'a',
      Array.from({ length: 200_000 }, (_, i) => String(i)),
    );
    const values = h.getAll('a');
    expect(values.length).toBe(200_001);
    expect(values.at(-1)).toBe('199999');
  });

  it('getAll returns a copy', () => {
    const h = new Headers({ A: '1' });
    h.getAll('A').push('2');
    expect(h.getAll('A')).toEqual(['1']);
  });

  it('reads and writes through expressions', () => {
    const request = new Request({ uri: 'http://h/p', headers: { 'X-Api-Key': 'k1' } });
    expect(compile("${request.headers['x-api-key'][0]}").evaluate({ request })).toBe('k1');
    expect(compile("${request.headers['X-Missing']}").evaluate({ request })).toBeNull();
    expect(compile("${request.headers.containsKey('X-API-KEY')}").evaluate({ request })).toBe(true);
    expect(compile('${request.headers.size()}').evaluate({ request })).toBe(1);
    expect(compile("${keyMatch(request.headers, '(?i)x-api.*')}").evaluate({ request })).toBe('X-Api-Key');
    expect(compile('${length(request.headers)}').evaluate({ request })).toBe(1);
    expect(compile('${empty request.headers}').evaluate({ request })).toBe(false);
    compileLValue("${request.headers['X-New']}").assign({ request }, 'v');
    compileLValue("${request.headers['X-Api-Key']}").assign({ request }, null);
    expect(request.headers.toJSON()).toEqual({ 'X-New': ['v'] });
    compileLValue("${request.headers['X-List']}").assign({ request }, ['a', 'b']);
    expect(request.headers.getAll('x-list')).toEqual(['a', 'b']);
  });
});

describe('Headers read off the wire', () => {
  const arrived = () => ['Set-Cookie', 'a=1', 'X-One', '1', 'set-cookie', 'b=2', 'Date', 'd'];
  const lines = (headers: Headers) => {
    const out: string[] = [];
    headers.forEachField((name, value) => out.push(`${name}: ${value}`));
    return out;
  };

  it('are given field by field as they arrived while nothing changes them, lookups included', () => {
    const headers = Headers.fromRaw(arrived());
    expect(headers.get('SET-COOKIE')).toBe('a=1');
    expect(headers.getAll('set-cookie')).toEqual(['a=1', 'b=2']);
    expect(headers.has('x-one')).toBe(true);
    expect(headers.has('X-Two')).toBe(false);
    expect(headers.delete('X-Two')).toBe(false);
    expect(lines(headers)).toEqual(['Set-Cookie: a=1', 'X-One: 1', 'set-cookie: b=2', 'Date: d']);
    expect(headers.toRaw()).toEqual(arrived());
  });

  it("gather each name's values where it first came once changed, in order, first spelling kept", () => {
    const headers = Headers.fromRaw(arrived());
    headers.add('x-one', '2');
    expect(lines(headers)).toEqual(['Set-Cookie: a=1', 'Set-Cookie: b=2', 'X-One: 1', 'X-One: 2', 'Date: d']);
  });

  it('remove every line of a name in any case, without touching the list they were read from', () => {
    const raw = arrived();
    const headers = Headers.fromRaw(raw);
    expect(headers.delete('SET-cookie')).toBe(true);
    expect(headers.toRaw()).toEqual(['X-One', '1', 'Date', 'd']);
    expect(raw).toEqual(arrived());
    expect(headers.has('set-cookie')).toBe(false);
  });

  it('give a copy that changes apart from them, and a toRaw list of their own', () => {
    const headers = Headers.fromRaw(arrived());
    const copy = headers.clone();
    copy.set('Date', 'e');
    copy.delete('x-one');
    expect(headers.get('date')).toBe('d');
    expect(headers.get('x-one')).toBe('1');
    headers.toRaw().push('X-Injected', 'x');
    expect(headers.has('x-injected')).toBe(false);
  });

  it('ignore a name without a value at the end, as before', () => {
    const headers = Headers.fromRaw(['A', '1', 'B']);
    expect(headers.toRaw()).toEqual(['A', '1']);
    expect(headers.has('b')).toBe(false);
    expect(headers.names()).toEqual(['A']);
  });

  it('match names in ASCII case only, as HTTP does (the Kelvin sign is not a K), changed or not', () => {
    const arrived = Headers.fromRaw(['Key', 'v']);
    const changed = Headers.fromRaw(['Key', 'v']).set('Other', 'o');
    for (const headers of [arrived, changed]) {
      expect(headers.get('\u212Aey')).toBeUndefined();
      expect(headers.has('\u212AEY')).toBe(false);
      expect(headers.get('KEY')).toBe('v');
    }
    changed.set('\u212Aey', 'kelvin');
    expect(changed.getAll('key')).toEqual(['v']);
    expect(changed.get('\u212AEY')).toBe('kelvin');
  });

  it('answer expressions as the grouped form does', () => {
    const request = new Request({ uri: 'http://h/p' });
    request.headers = Headers.fromRaw(arrived());
    expect(compile("${request.headers['set-cookie']}").evaluate({ request })).toEqual(['a=1', 'b=2']);
    expect(compile('${request.headers.size()}').evaluate({ request })).toBe(3);
  });
});

describe('forEachFieldOf', () => {
  it('gives the lines of headers without forEachField (an older core, a plugin) from their pairs', () => {
    const out: string[] = [];
    const pairs: [string, string[]][] = [
      ['A', ['1', '2']],
      ['B', ['3']],
    ];
    forEachFieldOf(pairs, (name, value) => out.push(`${name}=${value}`));
    expect(out).toEqual(['A=1', 'A=2', 'B=3']);
  });
});

describe('Uri', () => {
  it.each<[string, Record<string, unknown>]>([
    [
      'http://example.com/a/b?x=1#f',
      { scheme: 'http', host: 'example.com', port: null, rawPath: '/a/b', rawQuery: 'x=1', rawFragment: 'f' },
    ],
    [
      'https://user:pw@Example.COM:8443/p',
      { scheme: 'https', userInfo: 'user:pw', host: 'example.com', port: 8443, rawPath: '/p' },
    ],
    ['http://[::1]:8080/', { host: '[::1]', port: 8080, rawPath: '/' }],
    ['/only/path?q', { scheme: null, host: null, rawPath: '/only/path', rawQuery: 'q' }],
    ['/a%2Fb/c%20d', { rawPath: '/a%2Fb/c%20d', path: '/a%2Fb/c d' }],
    ['/bad%zz', { rawPath: '/bad%zz', path: '/bad%zz' }],
    ['http://h', { rawPath: '', pathAndQuery: '/' }],
    ['http://h:80/x', { hostAndPort: 'h', effectivePort: 80, origin: 'http://h' }],
    ['https://h:8443/x', { hostAndPort: 'h:8443', effectivePort: 8443 }],
  ])('parses %s', (text, expected) => {
    const uri = Uri.parse(text);
    for (const [key, value] of Object.entries(expected))
      expect((uri as unknown as Record<string, unknown>)[key]).toEqual(value);
  });

  it.each(['http://h:99999/', 'http://h/a b', 'http://h/\n'])('refuses %j with a coded error', (text) => {
    expect(() => Uri.parse(text)).toThrow(expect.objectContaining({ code: 'PORTICO_E_CONFIG' }));
  });

  it('prints back exactly what it parsed', () => {
    for (const text of ['http://u@h:1/a%2F?q=%20#x', '/p?', 'https://h/', '//h/p'])
      expect(Uri.parse(text).toString()).toBe(text);
  });

  it('rebases scheme, host and port, keeping path, query and fragment', () => {
    const uri = Uri.parse('http://gateway:8080/app/x%20y?q=1#frag');
    expect(uri.rebase('https://backend').toString()).toBe('https://backend/app/x%20y?q=1#frag');
    expect(uri.rebase('http://backend:9000/ignored/path').toString()).toBe(
      'http://backend:9000/app/x%20y?q=1#frag',
    );
  });

  it('is assignable from expressions', () => {
    const request = new Request({ uri: 'http://h/old?x=1' });
    compileLValue('${request.uri.path}').assign({ request }, '/new path');
    expect(request.uri.toString()).toBe('http://h/new%20path?x=1');
    compileLValue('${request.uri.host}').assign({ request }, 'other');
    compileLValue('${request.uri.port}').assign({ request }, '81');
    expect(request.uri.toString()).toBe('http://other:81/new%20path?x=1');
    compileLValue('${request.uri}').assign({ request }, 'https://x/y');
    expect(request.uri.toString()).toBe('https://x/y');
    expect(compile('${request.uri.path}').evaluate({ request })).toBe('/y');
  });
});

describe('Entity', () => {
  const streamOf = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c)));

  it('streams an untouched body once, without copying', () => {
    const source = streamOf('a', 'b');
    const entity = new Entity(source);
    expect(entity.isBuffered).toBe(false);
    expect(entity.stream()).toBe(source);
    expect(() => entity.stream()).toThrow();
  });

  it('buffers once and stays replayable', async () => {
    const entity = new Entity(streamOf('{"a":', '1}'));
    expect(await entity.json()).toEqual({ a: 1 });
    expect(await entity.text()).toBe('{"a":1}');
    const replay: Buffer[] = [];
    for await (const chunk of entity.stream()!) replay.push(chunk as Buffer);
    expect(Buffer.concat(replay).toString()).toBe('{"a":1}');
    expect(entity.length).toBe(7);
  });

  it('refuses a body larger than the bound with a coded error', async () => {
    await expect(new Entity(streamOf('x'.repeat(100), 'y'.repeat(100))).bytes(150)).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
    await expect(new Entity(streamOf('x'), 10_000).bytes(100)).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
  });

  it('parses forms', async () => {
    expect(await new Entity('a=1&b=x+y&a=%C3%A9&flag').form()).toEqual({
      a: ['1', 'é'],
      b: ['x y'],
      flag: [''],
    });
  });

  it('shows buffered content to expressions, and nothing of an unread stream', async () => {
    const request = new Request({ method: 'post', uri: '/', entity: new Entity(streamOf('{"user":"al"}')) });
    expect(compile('${request.entity.json.user}').evaluate({ request })).toBeNull();
    await request.entity.bytes();
    expect(compile('${request.entity.json.user}').evaluate({ request })).toBe('al');
    expect(compile('${request.entity.string}').evaluate({ request })).toBe('{"user":"al"}');
    compileLValue('${request.entity.string}').assign({ request }, 'replaced');
    expect(await request.entity.text()).toBe('replaced');
  });
});

describe('Request and Response in expressions', () => {
  it('exposes method, cookies, query parameters and form', async () => {
    const request = new Request({
      method: 'post',
      uri: '/p?q=1&q=2&s=a+b',
      headers: { Cookie: 'sid=abc; theme=dark', 'Content-Type': 'application/x-www-form-urlencoded' },
      entity: 'user=al',
    });
    const b = { request };
    expect(compile('${request.method}').evaluate(b)).toBe('POST');
    expect(compile("${request.cookies['sid'][0].value}").evaluate(b)).toBe('abc');
    expect(compile("${request.queryParams['q']}").evaluate(b)).toEqual(['1', '2']);
    expect(compile("${request.queryParams['s'][0]}").evaluate(b)).toBe('a b');
    expect(compile("${request.form['user'][0]}").evaluate(b)).toBe('al');
    expect(compile("${request.form['q'][1]}").evaluate(b)).toBe('2');
  });

  it("reads a form whose one field repeats more often than a call's arguments may number", async () => {
    const count = 200_000;
    const request = new Request({
      method: 'POST',
      uri: '/p?a=first',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      entity: Array.from({ length: count }, (_, i) => `a=${i}`).join('&'),
    });
    await request.entity.bytes();
    const values = request.form.a;
    expect(values?.length).toBe(count + 1);
    expect([values?.[0], values?.[1], values?.[count]]).toEqual(['first', '0', String(count - 1)]);
  });

  it('gives responses a status object as the incumbents do', () => {
    const response = new Response({ status: 404 });
    const b = { response };
    expect(compile('${response.status.code}').evaluate(b)).toBe(404);
    expect(compile('${response.status.reasonPhrase}').evaluate(b)).toBe('Not Found');
    expect(compile("${response.status.family == 'CLIENT_ERROR'}").evaluate(b)).toBe(true);
    expect(compile('${response.status.isClientError}').evaluate(b)).toBe(true);
    compileLValue('${response.status}').assign(b, 503);
    expect(response.status).toBe(503);
  });
});
