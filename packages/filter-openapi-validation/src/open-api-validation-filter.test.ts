import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ErrorCode, type Handler, Request, type Response } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from './index.ts';
import { REPORT_ATTRIBUTE } from './open-api-validation-filter.ts';

const FILE = 'routes/shelter.json';
const DOCUMENT_FILE = fileURLToPath(new URL('./fixtures/shelter.yaml', import.meta.url));
const DOCUMENT = readFileSync(DOCUMENT_FILE, 'utf8');
const PHOTO = Buffer.alloc(3 * 1024 * 1024, 7);

/** The upstream: a real HTTP server answering as the document says, or not, as `X-Upstream` asks. */
let server: http.Server;
let origin: string;
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      const mode = req.headers['x-upstream'];
      const url = new URL(req.url ?? '/', 'http://upstream');
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      if (mode === 'teapot') return json(418, { error: 'teapot' });
      if (mode === 'text') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Total': '1' });
        return res.end('a cat');
      }
      if (req.method === 'GET' && url.pathname === '/v1/animals') {
        const animals = [
          { id: 1, name: 'Tom', kind: 'cat' },
          mode === 'bad-body' ? { id: 2, kind: 'dinosaur' } : { id: 2, name: 'Rex', kind: 'dog' },
        ];
        return json(200, animals, mode === 'no-total' ? {} : { 'X-Total': '2' });
      }
      if (req.method === 'POST' && url.pathname === '/v1/animals')
        return json(201, JSON.parse(Buffer.concat(chunks).toString()));
      if (req.method === 'GET' && /^\/v1\/animals\/\d+$/.test(url.pathname))
        return url.pathname.endsWith('/404')
          ? json(404, {})
          : json(200, { id: 7, name: 'Bun', kind: 'rabbit' });
      if (req.method === 'GET' && url.pathname.includes('/photo.')) {
        res.writeHead(200, { 'Content-Type': 'image/png' });
        return res.end(PHOTO);
      }
      if (req.method === 'PUT') {
        res.writeHead(204);
        return res.end();
      }
      json(500, { error: 'no such thing' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A Chain of the filter (its `config`) and a ReverseProxyHandler to the upstream, from a real heap. */
async function chainWith(config: Record<string, unknown>, more: unknown[] = []) {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'ReverseProxyHandler', type: 'ReverseProxyHandler' },
      ...more,
      { name: 'Validator', type: 'OpenApiValidationFilter', config: { spec: DOCUMENT, ...config } },
      { name: 'Api', type: 'Chain', config: { filters: ['Validator'], handler: 'ReverseProxyHandler' } },
    ],
  });
  return { chain: await heap.get<Handler>('Api', 'handler'), logger, heap };
}

async function send(
  chain: Handler,
  target: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer | Readable } = {},
) {
  seen.length = 0;
  const context = testContext();
  const request = new Request({
    method: init.method ?? 'GET',
    uri: `${origin}${target}`,
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { entity: init.body }),
  });
  const response: Response = await chain.handle(context, request);
  return { response, context, upstream: [...seen] };
}

describe('OpenApiValidationFilter: requests', () => {
  it('passes a request the document allows, under a server base path, and its response', async () => {
    const { chain } = await chainWith({});
    const { response, upstream } = await send(chain, '/v1/animals?kind=cat&limit=10&tags=small,grey');
    expect(response.status).toBe(200);
    expect(JSON.parse(await response.entity.text())).toHaveLength(2);
    expect(upstream).toEqual(['GET /v1/animals?kind=cat&limit=10&tags=small,grey']);
  });

  it('decodes each query parameter on its own: an escaped & or , stays in its value', async () => {
    const { chain } = await chainWith({});
    expect((await send(chain, '/v1/animals?kind=c%61t')).response.status).toBe(200);
    // `dog&kind=x` is one value, outside the enum; read after decoding it would have been two.
    expect((await send(chain, '/v1/animals?kind=dog%26kind%3Dx')).response.status).toBe(400);
    // An escaped comma is part of one item of the non-exploded array, not a separator.
    expect((await send(chain, '/v1/animals?kind=cat&tags=ab%2Ccd')).response.status).toBe(400);
  });

  it.each([
    ['a path the document does not have', 'GET', '/v1/plants', 'no path of the document matches'],
    ['a method the path does not have', 'DELETE', '/v1/animals?kind=cat', 'DELETE is not an operation'],
    ['a required query parameter missing', 'GET', '/v1/animals', 'kind'],
    ['a query parameter outside its enum', 'GET', '/v1/animals?kind=dinosaur', 'cat, dog, rabbit'],
    ['an integer parameter too large', 'GET', '/v1/animals?kind=cat&limit=500', 'limit'],
    [
      'an array item against its pattern (a linear-time one)',
      'GET',
      '/v1/animals?kind=cat&tags=ok,NOT-OK',
      'tags',
    ],
    ['a path parameter that is not an integer', 'GET', '/v1/animals/tom', 'id'],
    ['a path parameter within a segment outside its enum', 'GET', '/v1/animals/3/photo.gif', 'format'],
  ])('refuses %s with 400 and the report, never calling the upstream', async (_, method, target, part) => {
    const { chain } = await chainWith({});
    const { response, upstream, context } = await send(chain, target, { method });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const body = await response.entity.text();
    expect(body).toMatch(/^Request validation failed: \[.+\]$/);
    expect(body).toContain(part);
    expect(context.attributes[REPORT_ATTRIBUTE]).toEqual(
      expect.arrayContaining([expect.stringContaining(part)]),
    );
    expect(upstream).toEqual([]);
  });

  it('checks the body, header parameters and content type of an operation that declares a body', async () => {
    const { chain } = await chainWith({});
    const key = { 'X-Shelter-Key': 'k-12345678', 'Content-Type': 'application/json' };
    const ok = await send(chain, '/v1/animals', {
      method: 'POST',
      headers: key,
      body: '{"name":"Kit","kind":"cat"}',
    });
    expect(ok.response.status).toBe(201);
    expect(JSON.parse(await ok.response.entity.text())).toEqual({ name: 'Kit', kind: 'cat' });
    const refusals = [
      { headers: key, body: '{"kind":"cat"}', part: 'name' },
      { headers: key, body: '{"name":"Kit","kind":"cat","admitted":"yesterday"}', part: 'admitted' },
      { headers: key, body: '{"name":', part: 'not JSON' },
      { headers: key, body: undefined, part: 'requires a request body' },
      {
        headers: { ...key, 'X-Shelter-Key': 'short' },
        body: '{"name":"Kit","kind":"cat"}',
        part: 'x-shelter-key',
      },
      { headers: { ...key, 'Content-Type': 'text/plain' }, body: 'Kit', part: "content type 'text/plain'" },
    ];
    for (const { headers, body, part } of refusals) {
      const { response, upstream } = await send(chain, '/v1/animals', {
        method: 'POST',
        headers,
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status, part).toBe(400);
      expect(await response.entity.text(), part).toContain(part);
      expect(upstream).toEqual([]);
    }
  });

  it('hands a refused request to requestValidationErrorHandler, the report in attributes', async () => {
    const { chain } = await chainWith({ requestValidationErrorHandler: 'Refuse' }, [
      {
        name: 'Refuse',
        type: 'StaticResponseHandler',
        config: {
          status: 422,
          headers: { 'Content-Type': ['application/json'] },
          entity: '{"error": "request_validation_failed: ${attributes.openApiValidationReport}"}',
        },
      },
    ]);
    const { response, upstream } = await send(chain, '/v1/animals?kind=dinosaur');
    expect(response.status).toBe(422);
    expect(await response.entity.text()).toMatch(
      /^\{"error": "request_validation_failed: \[query\.kind .*cat, dog, rabbit\)\]"\}$/,
    );
    expect(upstream).toEqual([]);
  });

  it('reads no request body for an operation that declares no JSON schema for it, however large (departure 102)', async () => {
    const { chain } = await chainWith({});
    const big = Buffer.alloc(12 * 1024 * 1024, 1);
    const put = await send(chain, '/v1/animals/3/photo.png', {
      method: 'PUT',
      headers: { 'Content-Type': 'image/png', 'Content-Length': String(big.length) },
      body: Readable.from([big]),
    });
    expect(put.response.status).toBe(204);
    expect(put.upstream).toEqual(['PUT /v1/animals/3/photo.png']);
  });

  it("reads a declared JSON body within the message's buffered-body limit only", async () => {
    const { chain } = await chainWith({});
    const big = `{"name":"${'x'.repeat(11 * 1024 * 1024)}","kind":"cat"}`;
    await expect(
      send(chain, '/v1/animals', {
        method: 'POST',
        headers: { 'X-Shelter-Key': 'k-12345678', 'Content-Type': 'application/json' },
        body: Readable.from([Buffer.from(big)]),
      }),
    ).rejects.toMatchObject({ code: ErrorCode.ENTITY_TOO_LARGE });
  });
});

describe('OpenApiValidationFilter: responses', () => {
  it.each([
    ['a body against its schema', 'bad-body', 'response.1.name'],
    ['a required header missing', 'no-total', "header 'X-Total' is required"],
    ['a status the operation does not declare', 'teapot', 'status 418'],
    ['a content type the response does not declare', 'text', "content type 'text/plain'"],
  ])('passes a response that fails on %s by default, and logs it', async (_, mode, part) => {
    const { chain, logger } = await chainWith({});
    const { response } = await send(chain, '/v1/animals?kind=cat', { headers: { 'X-Upstream': mode } });
    expect(response.status).not.toBe(503);
    const warning = logger.records.find(
      (r) => r.message === 'the response does not match the OpenAPI document',
    );
    expect(JSON.stringify(warning?.data?.report)).toContain(part);
  });

  it('answers 503 with the report when failOnResponseViolation is true', async () => {
    const { chain } = await chainWith({ failOnResponseViolation: true });
    const { response, context } = await send(chain, '/v1/animals?kind=cat', {
      headers: { 'X-Upstream': 'bad-body' },
    });
    expect(response.status).toBe(503);
    const body = await response.entity.text();
    expect(body).toMatch(/^Response validation failed: \[.*response\.1\.name.*\]$/);
    expect(context.attributes[REPORT_ATTRIBUTE]).toEqual(
      expect.arrayContaining([expect.stringContaining('kind')]),
    );
    const good = await send(chain, '/v1/animals?kind=cat');
    expect(good.response.status).toBe(200);
  });

  it('hands a failed response to responseValidationErrorHandler when failOnResponseViolation is true', async () => {
    const { chain } = await chainWith(
      { failOnResponseViolation: '${true}', responseValidationErrorHandler: 'Broken' },
      [
        {
          name: 'Broken',
          type: 'StaticResponseHandler',
          config: { status: 502, entity: 'upstream broke its contract' },
        },
      ],
    );
    const { response } = await send(chain, '/v1/animals?kind=cat', { headers: { 'X-Upstream': 'teapot' } });
    expect(response.status).toBe(502);
    expect(await response.entity.text()).toBe('upstream broke its contract');
  });

  it('accepts a status its range declares (4XX), and leaves undeclared bodies unread', async () => {
    const { chain } = await chainWith({ failOnResponseViolation: true });
    expect((await send(chain, '/v1/animals/404')).response.status).toBe(404);
    const photo = await send(chain, '/v1/animals/3/photo.png');
    expect(photo.response.status).toBe(200);
    expect(photo.response.entity.isBuffered).toBe(false);
    expect((await photo.response.entity.bytes(PHOTO.length)).length).toBe(PHOTO.length);
  });
});

describe('OpenApiValidationFilter configuration', () => {
  const refusal = async (config: Record<string, unknown>) => {
    const { heap } = pluginHeap({
      plugins: [plugin],
      file: FILE,
      heap: [{ name: 'Validator', type: 'OpenApiValidationFilter', config }],
    });
    return heap.get('Validator', 'filter').then(
      () => undefined,
      (error: unknown) => error,
    );
  };

  it('reads the document from a file at load, JSON as well as YAML', async () => {
    const jsonFile = path.join(os.tmpdir(), `shelter-${process.pid}.json`);
    const { document } = (await import('./document.ts')).readDocument(DOCUMENT) as { document: unknown };
    writeFileSync(jsonFile, JSON.stringify(document));
    for (const file of [DOCUMENT_FILE, jsonFile]) {
      const { chain } = await chainWith({ spec: `\${read('${file}')}` });
      expect((await send(chain, '/v1/animals?kind=dog')).response.status).toBe(200);
      expect((await send(chain, '/v1/animals?kind=fish')).response.status).toBe(400);
    }
  });

  it.each([
    ['no spec', {}, 'spec'],
    [
      'a spec that is null (read() of a file that is not there)',
      { spec: "${read('/nowhere/api.yaml')}" },
      'spec',
    ],
    ['neither JSON nor YAML', { spec: '{ "openapi": ' }, 'neither JSON nor YAML'],
    ['a Swagger 2.0 document (departure 100)', { spec: '{"swagger": "2.0", "paths": {}}' }, 'Swagger 2.0'],
    ['no openapi version', { spec: 'info: {title: x}' }, "no 'openapi' version"],
    [
      'a reference outside the document (departure 101)',
      { spec: DOCUMENT.replace(/["']#\/components\/schemas\/Animal["']/, "'animal.yaml'") },
      'refers outside',
    ],
    [
      'a document the OpenAPI schema refuses',
      { spec: '{"openapi": "3.0.3", "info": {}, "paths": {}}' },
      'not valid',
    ],
    [
      'a failOnResponseViolation that is not a boolean',
      { spec: DOCUMENT, failOnResponseViolation: 'sometimes' },
      'failOnResponseViolation',
    ],
    [
      'a handler reference to nothing',
      { spec: DOCUMENT, requestValidationErrorHandler: 'Nowhere' },
      'requestValidationErrorHandler',
    ],
  ])('refuses %s, naming the file and JSON path', async (_, config, what) => {
    const error = (await refusal(config)) as {
      code: string;
      message: string;
      details: { file: string; jsonPath: string };
    };
    expect(error?.details.file).toBe(FILE);
    const setting = /^[a-zA-Z]+$/.test(what) ? what : 'spec';
    expect(error.details.jsonPath).toBe(`$.heap[0].config.${setting}`);
    if (setting === 'spec' && what !== 'spec') expect(error.message).toContain(what);
    expect([ErrorCode.CONFIG, ErrorCode.REFERENCE]).toContain(error.code);
  });
});
