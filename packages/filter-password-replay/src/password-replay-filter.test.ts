import { createCipheriv } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import fileAttributes from '@portico/filter-file-attributes';
import { type Context, type Handler, Request, Response } from '@portico/gateway-core';
import { Entity } from '@portico/gateway-core/http-helpers';
import { pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { MAX_LOGIN_PAGE_BYTES, type PasswordReplayFilter } from './index.ts';

const FILE = 'routes/replay.json';
const LOGIN_FORM = {
  method: 'POST',
  uri: 'http://app.example.com/login',
  form: { username: ['${attributes.user}'], password: ['${attributes.password}'] },
};
const LOGIN_PAGE = [
  '<html><body><h1>Please sign in</h1>',
  '<form method="post" action="/login">',
  '<input type="hidden" name="csrf" value="tok-123">',
  '</form></body></html>',
].join('\n');

/** Each test creates the filter through a real heap, as the gateway does from a route file. */
function heapWith(config: unknown, others: unknown[] = []) {
  return pluginHeap({
    plugins: [plugin, fileAttributes],
    file: FILE,
    heap: [
      // The gateway's heap always declares it.
      { name: 'TemporaryStorage', type: 'TemporaryStorage' },
      ...others,
      { name: 'Replay', type: 'PasswordReplayFilter', config },
    ],
  });
}

async function filterFrom(config: unknown, others: unknown[] = []): Promise<PasswordReplayFilter> {
  return heapWith(config, others).heap.get<PasswordReplayFilter>('Replay', 'filter');
}

async function refusal(config: unknown): Promise<unknown> {
  return filterFrom(config).then(
    () => undefined,
    (error: unknown) => error,
  );
}

/**
 * An application behind the filter: a login page at GET /login and for anything else until a login
 * succeeded, the protected page after. `password` is the one it takes.
 */
function application(password = 'secret') {
  let loggedIn = false;
  return recordingHandler((request) => {
    if (request.method === 'POST' && request.uri.path === '/login') {
      const form = new URLSearchParams(request.entity.toString());
      loggedIn = form.get('password') === password;
      return Response.text(loggedIn ? 200 : 401, loggedIn ? 'welcome' : LOGIN_PAGE, 'text/html');
    }
    if (loggedIn && request.uri.path !== '/login') return Response.text(200, 'the protected page');
    return Response.text(200, LOGIN_PAGE, 'text/html; charset=UTF-8');
  });
}

/** Reads each request's body as a stream before `handler` sees it, as the upstream client sends it. */
function streamingTo(handler: Handler, bodies: string[]): Handler {
  return {
    async handle(context, request) {
      const chunks: Buffer[] = [];
      for await (const chunk of request.entity.stream() ?? []) chunks.push(chunk as Buffer);
      bodies.push(Buffer.concat(chunks).toString());
      return handler.handle(context, request);
    },
  };
}

function credentialsContext(): Context {
  return testContext({ attributes: { user: 'ann', password: 'secret' } });
}

const get = (uri: string) => new Request({ uri });

describe('PasswordReplayFilter with loginPage', () => {
  it('replaces a request for the login page with the login request, whose answer is returned', async () => {
    const filter = await filterFrom({ loginPage: "${request.uri.path == '/login'}", request: LOGIN_FORM });
    const app = application();
    const response = await filter.filter(
      credentialsContext(),
      get('http://app.example.com/login'),
      app.handler,
    );
    expect(await response.entity.text()).toBe('welcome');
    expect(app.requests).toHaveLength(1);
    const [login] = app.requests;
    expect(login!.method).toBe('POST');
    expect(String(login!.uri)).toBe('http://app.example.com/login');
    expect(login!.version).toBe('HTTP/1.1');
    expect(login!.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(login!.entity.toString()).toBe('username=ann&password=secret');
  });

  it('passes any other request on untouched', async () => {
    const filter = await filterFrom({ loginPage: "${request.uri.path == '/login'}", request: LOGIN_FORM });
    const app = application();
    const request = get('http://app.example.com/home');
    await filter.filter(credentialsContext(), request, app.handler);
    expect(app.requests).toEqual([request]);
  });

  it('fetches the login page first when it has extractions, and posts what they took', async () => {
    const filter = await filterFrom({
      loginPage: "${request.uri.path == '/login'}",
      loginPageExtractions: [
        { name: 'csrf', pattern: 'name="csrf" value="([^"]*)"' },
        { name: 'absent', pattern: 'nonce=(\\w+)' },
      ],
      request: { ...LOGIN_FORM, form: { ...LOGIN_FORM.form, csrf: ['${attributes.extracted.csrf}'] } },
    });
    const app = application();
    const context = credentialsContext();
    const response = await filter.filter(context, get('http://app.example.com/login'), app.handler);
    expect(await response.entity.text()).toBe('welcome');
    expect(app.requests.map((r) => `${r.method} ${r.uri.path}`)).toEqual(['GET /login', 'POST /login']);
    expect(app.requests[1]!.entity.toString()).toBe('username=ann&password=secret&csrf=tok-123');
    expect(context.attributes.extracted).toEqual({ csrf: 'tok-123', absent: null, isLoginPage: true });
  });

  it('keeps the body of a request for the login page for the login request, after fetching the page', async () => {
    const filter = await filterFrom({
      loginPage: true,
      loginPageExtractions: [{ name: 'csrf', pattern: 'name="csrf" value="([^"]*)"' }],
      request: {
        ...LOGIN_FORM,
        form: { username: ["${request.entity.form['user'][0]}"], csrf: ['${attributes.extracted.csrf}'] },
      },
    });
    const app = application();
    const request = new Request({
      method: 'POST',
      uri: 'http://app.example.com/login',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '6' },
      entity: Readable.from([Buffer.from('user=b')]),
    });
    await filter.filter(credentialsContext(), request, streamingTo(app.handler, []));
    expect(app.requests[1]!.entity.toString()).toBe('username=b&csrf=tok-123');
  });

  it('evaluates loginPage against the request only, reading its body when it asks for it', async () => {
    const filter = await filterFrom({
      loginPage: "${request.entity.string == 'log me in'}",
      request: LOGIN_FORM,
    });
    const app = application();
    const request = new Request({ method: 'POST', uri: 'http://app.example.com/x', entity: 'log me in' });
    await filter.filter(credentialsContext(), request, app.handler);
    expect(app.requests[0]!.uri.path).toBe('/login');
  });

  it('accepts loginPage written as a boolean', async () => {
    const filter = await filterFrom({ loginPage: true, request: LOGIN_FORM });
    const app = application();
    await filter.filter(credentialsContext(), get('http://app.example.com/any'), app.handler);
    expect(app.requests[0]!.method).toBe('POST');
  });
});

describe('PasswordReplayFilter with loginPageContentMarker', () => {
  const markerConfig = {
    loginPageContentMarker: 'Please sign in',
    loginPageExtractions: [{ name: 'csrf', pattern: 'name="csrf" value="([^"]*)"' }],
    request: { ...LOGIN_FORM, form: { ...LOGIN_FORM.form, csrf: ['${attributes.extracted.csrf}'] } },
  };

  it('logs in when the answer is a login page, then sends the request again', async () => {
    const filter = await filterFrom(markerConfig);
    const app = application();
    const context = credentialsContext();
    const response = await filter.filter(context, get('http://app.example.com/account'), app.handler);
    expect(await response.entity.text()).toBe('the protected page');
    expect(app.requests.map((r) => `${r.method} ${r.uri.path}`)).toEqual([
      'GET /account',
      'POST /login',
      'GET /account',
    ]);
    expect(app.requests[1]!.entity.toString()).toBe('username=ann&password=secret&csrf=tok-123');
    expect(context.attributes.extracted).toEqual({ csrf: 'tok-123', isLoginPage: true });
  });

  it('returns an answer that is no login page as it came, with isLoginPage false (the incumbent: null)', async () => {
    const filter = await filterFrom(markerConfig);
    const app = recordingHandler(() => Response.text(200, 'just a page\nname="csrf" value="elsewhere"'));
    const context = credentialsContext();
    const response = await filter.filter(context, get('http://app.example.com/page'), app.handler);
    expect(await response.entity.text()).toBe('just a page\nname="csrf" value="elsewhere"');
    expect(app.requests).toHaveLength(1);
    expect(context.attributes.extracted).toEqual({ csrf: 'elsewhere', isLoginPage: false });
  });

  it('does not retry a login that failed: one login request, and the login page goes back', async () => {
    const filter = await filterFrom(markerConfig);
    const app = application('another password');
    const response = await filter.filter(
      credentialsContext(),
      get('http://app.example.com/account'),
      app.handler,
    );
    expect(await response.entity.text()).toBe(LOGIN_PAGE);
    expect(app.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(app.requests).toHaveLength(3);
  });

  it('sends the request body again after logging in', async () => {
    const filter = await filterFrom(markerConfig);
    const app = application();
    const request = new Request({
      method: 'PUT',
      uri: 'http://app.example.com/doc',
      headers: { 'Content-Length': '5' },
      entity: Readable.from([Buffer.from('hello')]),
    });
    const bodies: string[] = [];
    await filter.filter(credentialsContext(), request, streamingTo(app.handler, bodies));
    expect(bodies).toEqual(['hello', 'username=ann&password=secret&csrf=tok-123', 'hello']);
  });

  it('gives each send a copy: what a filter further on changes does not reach the next send', async () => {
    const filter = await filterFrom(markerConfig);
    const app = application();
    const stamping = {
      handle: (context: Context, request: Request) => {
        request.headers.add('X-Seen', 'once');
        return app.handler.handle(context, request);
      },
    };
    await filter.filter(credentialsContext(), get('http://app.example.com/account'), stamping);
    expect(app.requests[2]!.headers.getAll('x-seen')).toEqual(['once']);
  });

  it('matches line by line, the first matching line giving the value', async () => {
    const filter = await filterFrom({
      loginPageContentMarker: '^<h1>Sign in</h1>$',
      loginPageExtractions: [{ name: 'token', pattern: 'token=(\\d+)' }],
      request: LOGIN_FORM,
    });
    const page = 'intro\r\n<h1>Sign in</h1>\rtoken=1 token=2\ntoken=3';
    const app = recordingHandler(() => Response.text(200, page));
    const context = credentialsContext();
    await filter.filter(context, get('http://app.example.com/a'), app.handler);
    expect(context.attributes.extracted).toEqual({ token: '1', isLoginPage: true });
  });

  it('reads a gzip-compressed login page', async () => {
    const filter = await filterFrom(markerConfig);
    let answered = 0;
    const app = recordingHandler(() =>
      answered++ === 0
        ? new Response({ headers: { 'Content-Encoding': 'gzip' }, entity: gzipSync(LOGIN_PAGE) })
        : Response.text(200, 'ok'),
    );
    const context = credentialsContext();
    await filter.filter(context, get('http://app.example.com/a'), app.handler);
    expect(app.requests[1]!.entity.toString()).toContain('csrf=tok-123');
  });

  it(`reads no more than ${MAX_LOGIN_PAGE_BYTES} bytes: a larger answer passes whole, as no login page`, async () => {
    const filter = await filterFrom(markerConfig);
    const big = Buffer.alloc(MAX_LOGIN_PAGE_BYTES + 10, 'a');
    big.write('Please sign in', 0);
    const app = recordingHandler(
      () => new Response({ entity: Readable.from([big.subarray(0, 1000), big.subarray(1000)]) }),
    );
    const context = credentialsContext();
    const response = await filter.filter(context, get('http://app.example.com/big'), app.handler);
    expect(app.requests).toHaveLength(1);
    expect((await response.entity.bytes(2 * MAX_LOGIN_PAGE_BYTES)).equals(big)).toBe(true);
    expect(context.attributes.extracted).toEqual({ csrf: null, isLoginPage: false });
  });

  it('does not read an answer whose declared length is over the bound', async () => {
    const filter = await filterFrom(markerConfig);
    const stream = Readable.from([Buffer.from('Please sign in')]);
    const app = recordingHandler(
      () => new Response({ entity: new Entity(stream, MAX_LOGIN_PAGE_BYTES + 1) }),
    );
    const response = await filter.filter(
      credentialsContext(),
      get('http://app.example.com/big'),
      app.handler,
    );
    expect(app.requests).toHaveLength(1);
    expect(response.entity.unbufferedStream).toBe(stream);
  });

  it('sends a request once when the answer is no login page, also with credentials and decryption (the incumbent sent it twice more)', async () => {
    const csv = writeCsv('username,password\nann,secret\n');
    const filter = await filterFrom({
      ...markerConfig,
      credentials: {
        type: 'FileAttributesFilter',
        config: { file: csv, key: 'username', value: 'ann', target: '${attributes.creds}' },
      },
      headerDecryption: { key: AES_KEY, headers: ['X-Password'] },
    });
    const app = recordingHandler(() => Response.text(200, 'a page'));
    await filter.filter(testContext(), get('http://app.example.com/page'), app.handler);
    expect(app.requests).toHaveLength(1);
  });
});

const AES_KEY = Buffer.alloc(16, 7).toString('base64');

function encrypt(text: string, key = AES_KEY): string {
  const cipher = createCipheriv('aes-128-ecb', Buffer.from(key, 'base64'), null);
  return Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]).toString('base64');
}

function writeCsv(content: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'replay-')), 'users.csv');
  writeFileSync(file, content);
  return file;
}

describe('PasswordReplayFilter credentials and header decryption', () => {
  it('runs the credentials filter before building the login request', async () => {
    const csv = writeCsv('username,password,email\nann,secret,ann@example.com\n');
    const filter = await filterFrom({
      loginPage: true,
      credentials: {
        type: 'FileAttributesFilter',
        config: {
          file: csv,
          key: 'email',
          value: '${request.headers["X-Email"][0]}',
          target: '${attributes.creds}',
        },
      },
      request: {
        ...LOGIN_FORM,
        form: { username: ['${attributes.creds.username}'], password: ['${attributes.creds.password}'] },
      },
    });
    const app = application();
    const request = new Request({
      uri: 'http://app.example.com/login',
      headers: { 'X-Email': 'ann@example.com' },
    });
    const response = await filter.filter(testContext(), request, app.handler);
    expect(await response.entity.text()).toBe('welcome');
    expect(app.requests[0]!.entity.toString()).toBe('username=ann&password=secret');
  });

  it('takes the credentials filter by name from the heap', async () => {
    const csv = writeCsv('username,password\nann,secret\n');
    const filter = await filterFrom(
      {
        loginPage: true,
        credentials: 'Users',
        request: { ...LOGIN_FORM, form: { password: ['${attributes.u.password}'] } },
      },
      [
        {
          name: 'Users',
          type: 'FileAttributesFilter',
          config: { file: csv, key: 'username', value: 'ann', target: '${attributes.u}' },
        },
      ],
    );
    const app = application();
    await filter.filter(testContext(), get('http://app.example.com/login'), app.handler);
    expect(app.requests[0]!.entity.toString()).toBe('password=secret');
  });

  it('decrypts the listed headers (AES/ECB/PKCS5Padding by default) in a copy for the login request (the incumbent decrypted in place)', async () => {
    const filter = await filterFrom({
      loginPageContentMarker: 'Please sign in',
      headerDecryption: { key: AES_KEY, headers: ['X-Password'] },
      request: {
        ...LOGIN_FORM,
        form: {
          username: ['${request.headers["X-User"][0]}'],
          password: ['${request.headers["X-Password"][0]}'],
        },
      },
    });
    const app = application();
    const ciphertext = encrypt('secret');
    const request = new Request({
      uri: 'http://app.example.com/account',
      headers: { 'X-User': 'ann', 'X-Password': ciphertext },
    });
    const response = await filter.filter(testContext(), request, app.handler);
    expect(await response.entity.text()).toBe('the protected page');
    expect(app.requests[1]!.entity.toString()).toBe('username=ann&password=secret');
    // The plaintext goes into the login request only; the request itself is sent as it came.
    expect(app.requests[2]!.headers.get('X-Password')).toBe(ciphertext);
    expect(request.headers.get('X-Password')).toBe(ciphertext);
  });

  it('decrypts no header unless headers lists it', async () => {
    const filter = await filterFrom({
      loginPage: true,
      headerDecryption: { key: AES_KEY },
      request: { ...LOGIN_FORM, form: { password: ['${request.headers["X-Password"][0]}'] } },
    });
    const app = application();
    const ciphertext = encrypt('secret');
    const request = new Request({
      uri: 'http://app.example.com/login',
      headers: { 'X-Password': ciphertext },
    });
    await filter.filter(testContext(), request, app.handler);
    expect(app.requests[0]!.entity.toString()).toBe(`password=${encodeURIComponent(ciphertext)}`);
  });

  it('takes algorithm and keyType', async () => {
    const key = Buffer.from('0123456789abcdefghijklmn');
    const cipher = createCipheriv('des-ede3-ecb', key, null);
    const ciphertext = Buffer.concat([cipher.update('secret'), cipher.final()]).toString('base64');
    const filter = await filterFrom({
      loginPage: true,
      headerDecryption: {
        key: key.toString('base64'),
        algorithm: 'DESede/ECB/PKCS5Padding',
        keyType: 'DESede',
        headers: ['X-Password'],
      },
      request: { ...LOGIN_FORM, form: { password: ['${request.headers["X-Password"][0]}'] } },
    });
    const app = application();
    const request = new Request({
      uri: 'http://app.example.com/login',
      headers: { 'X-Password': ciphertext },
    });
    await filter.filter(testContext(), request, app.handler);
    expect(app.requests[0]!.entity.toString()).toBe('password=secret');
  });

  it('never logs the credentials it replays', async () => {
    const { heap, logger } = heapWith({
      loginPage: true,
      headerDecryption: { key: AES_KEY, headers: ['X-Password'] },
      request: { ...LOGIN_FORM, form: { password: ['${request.headers["X-Password"][0]}'] } },
    });
    const filter = await heap.get<PasswordReplayFilter>('Replay', 'filter');
    const request = new Request({
      uri: 'http://app.example.com/login',
      headers: { 'X-Password': encrypt('hunter2-secret') },
    });
    await filter.filter(testContext(), request, application().handler);
    expect(logger.records.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.records)).not.toContain('hunter2-secret');
  });
});

describe('PasswordReplayFilter request settings', () => {
  it('sends entity as the body, with the headers and the version given', async () => {
    const filter = await filterFrom({
      loginPage: true,
      request: {
        method: 'POST',
        uri: 'http://app.example.com/api/login',
        version: 'HTTP/1.0',
        headers: { 'Content-Type': ['application/json'], 'X-Tag': ['a', 'b'] },
        entity: '{"user":"${attributes.user}"}',
      },
    });
    const app = recordingHandler();
    await filter.filter(credentialsContext(), get('http://app.example.com/'), app.handler);
    const [login] = app.requests;
    expect(login!.version).toBe('HTTP/1.0');
    expect(login!.headers.getAll('x-tag')).toEqual(['a', 'b']);
    expect(login!.headers.get('content-type')).toBe('application/json');
    expect(login!.entity.toString()).toBe('{"user":"ann"}');
  });

  it('puts a form in the query string when the method is not POST', async () => {
    const filter = await filterFrom({
      loginPage: true,
      request: {
        method: 'GET',
        uri: 'http://app.example.com/login?x=1',
        form: { user: ['${attributes.user}'] },
      },
    });
    const app = recordingHandler();
    await filter.filter(credentialsContext(), get('http://app.example.com/'), app.handler);
    expect(String(app.requests[0]!.uri)).toBe('http://app.example.com/login?x=1&user=ann');
  });
});

describe('PasswordReplayFilter configuration errors, each named by file and JSON path', () => {
  const at = (jsonPath: string, code = 'PORTICO_E_CONFIG') => ({
    code,
    details: { file: FILE, jsonPath: `$.heap[1].config${jsonPath}` },
  });

  it('requires request, its method and its uri', async () => {
    expect(await refusal({ loginPage: true })).toMatchObject(at('.request'));
    expect(await refusal({ loginPage: true, request: { uri: 'http://a/' } })).toMatchObject(
      at('.request.method'),
    );
    expect(await refusal({ loginPage: true, request: { method: 'GET' } })).toMatchObject(at('.request.uri'));
  });

  it('refuses a uri that is not fully qualified', async () => {
    expect(await refusal({ loginPage: true, request: { method: 'GET', uri: '/login' } })).toMatchObject(
      at('.request.uri'),
    );
  });

  it('refuses both entity and form on a POST', async () => {
    const request = { ...LOGIN_FORM, entity: 'a=b' };
    expect(await refusal({ loginPage: true, request })).toMatchObject(at('.request.entity'));
  });

  it('refuses both loginPage and loginPageContentMarker (the incumbent ignored the marker)', async () => {
    const error = await refusal({ loginPage: true, loginPageContentMarker: 'x', request: LOGIN_FORM });
    expect(error).toMatchObject(at('.loginPageContentMarker'));
    expect(String(error)).toMatch(/keep one/);
  });

  it('refuses neither loginPage nor loginPageContentMarker', async () => {
    expect(await refusal({ request: LOGIN_FORM })).toMatchObject(at(''));
  });

  it('refuses an extraction pattern without exactly one capturing group (the incumbent took more)', async () => {
    const config = (pattern: string) => ({
      loginPage: true,
      loginPageExtractions: [{ name: 'n', pattern }],
      request: LOGIN_FORM,
    });
    expect(await refusal(config('value=\\w+'))).toMatchObject(at('.loginPageExtractions[0].pattern'));
    expect(await refusal(config('(a)=(b)'))).toMatchObject(at('.loginPageExtractions[0].pattern'));
    expect(await refusal(config('(?:a)=(?<v>b)'))).toBeUndefined();
  });

  it('refuses isLoginPage as an extraction name, and a name given twice', async () => {
    const extraction = (name: string) => ({ name, pattern: '(x)' });
    expect(
      await refusal({
        loginPage: true,
        loginPageExtractions: [extraction('isLoginPage')],
        request: LOGIN_FORM,
      }),
    ).toMatchObject(at('.loginPageExtractions[0].name'));
    expect(
      await refusal({
        loginPage: true,
        loginPageExtractions: [extraction('a'), extraction('a')],
        request: LOGIN_FORM,
      }),
    ).toMatchObject(at('.loginPageExtractions'));
  });

  it('requires name and pattern of an extraction', async () => {
    expect(
      await refusal({ loginPage: true, loginPageExtractions: [{ pattern: '(x)' }], request: LOGIN_FORM }),
    ).toMatchObject(at('.loginPageExtractions[0].name'));
    expect(
      await refusal({ loginPage: true, loginPageExtractions: [{ name: 'x' }], request: LOGIN_FORM }),
    ).toMatchObject(at('.loginPageExtractions[0].pattern'));
  });

  it('refuses a marker that cannot run in linear time, or is no pattern', async () => {
    expect(await refusal({ loginPageContentMarker: '(a*)\\1', request: LOGIN_FORM })).toMatchObject(
      at('.loginPageContentMarker', 'PORTICO_E_EXPRESSION'),
    );
    expect(await refusal({ loginPageContentMarker: 3, request: LOGIN_FORM })).toMatchObject(
      at('.loginPageContentMarker'),
    );
  });

  it('refuses a loginPage that is no expression', async () => {
    expect(await refusal({ loginPage: '${request.', request: LOGIN_FORM })).toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
    });
  });

  it('requires the decryption key, and checks it, the algorithm and the key type', async () => {
    const config = (headerDecryption: unknown) => ({
      loginPage: true,
      headerDecryption,
      request: LOGIN_FORM,
    });
    expect(await refusal(config({ headers: ['X'] }))).toMatchObject(at('.headerDecryption.key'));
    expect(await refusal(config({ key: 'not base64!' }))).toMatchObject(at('.headerDecryption.key'));
    expect(await refusal(config({ key: AES_KEY, algorithm: 'ROT13' }))).toMatchObject(
      at('.headerDecryption.algorithm'),
    );
    expect(await refusal(config({ key: AES_KEY, algorithm: 'DES/ECB/PKCS5Padding' }))).toMatchObject(
      at('.headerDecryption.keyType'),
    );
    expect(await refusal(config({ key: AES_KEY, colour: 'red' }))).toMatchObject(
      at('.headerDecryption.colour'),
    );
    // What the incumbent overrides is accepted and overridden.
    expect(
      await refusal(config({ key: AES_KEY, messageType: 'RESPONSE', operation: 'ENCRYPT' })),
    ).toBeUndefined();
  });

  it('refuses a credentials reference to no filter', async () => {
    expect(await refusal({ loginPage: true, credentials: 'Nowhere', request: LOGIN_FORM })).toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[1].config.credentials' },
    });
  });
});
