import { describe, expect, it } from 'vitest';
import { collectRequestBodyReads } from './body-reads.ts';
import { readsEntity } from './entity-access.ts';
import { compile, compileLValue } from './expression.ts';

describe('readsEntity', () => {
  it.each([
    ["${request.entity.json['user']}", 'request'],
    ["${request['entity'].string}", 'request'],
    ['${request.form.tokenid[0]}', 'request'],
    ['{ "tokenId": "${request.form.tokenid[0]}" }', 'request'],
    ["${!response.entity.json.get('valid')}", 'response'],
    ["${contains(toString(response.entity.string), 'x') ? 'a' : 'b'}", 'response'],
    ['${empty response.entity.json}', 'response'],
    ['${exchange.request.entity.string}', 'request'],
    ["${exchange['response'].entity.json}", 'response'],
  ] as const)('%s reads the %s body', (text, message) => {
    expect(readsEntity(text, message)).toBe(true);
  });

  it.each([
    ["${request.headers['X'][0]}", 'request'],
    ['${request.queryParams.q[0]}', 'request'],
    ['${response.form}', 'response'],
    ['${response.entity.json}', 'request'],
    ['${request.entity.json}', 'response'],
    ['${attributes.entity}', 'request'],
    ['plain text mentioning request.entity', 'request'],
    ['${unclosed', 'request'],
    ['${exchange.entity}', 'request'],
    ['${exchange.response.entity}', 'request'],
  ] as const)('%s does not read the %s body', (text, message) => {
    expect(readsEntity(text, message)).toBe(false);
  });
});

describe('Expression.readsRequestBody and readsResponseBody', () => {
  it.each([
    ['you sent ${request.entity.string}', true, false],
    ["${request.form['q'][0]}", true, false],
    ['${response.entity.json.ok}', false, true],
    ['${request.method} ${response.status}', false, false],
    ["${request['enti'.concat('ty')].string}", true, false],
    ['${exchange.request[attributes.part]}', true, false],
    ['${request.headers[attributes.name][0]}', false, false],
    ['plain text', false, false],
  ])('%s: request %s, response %s', (text, request, response) => {
    const expression = compile(text);
    expect([expression.readsRequestBody, expression.readsResponseBody]).toEqual([request, response]);
  });

  it('compiling one that reads the request body tells the load in progress, and only that', async () => {
    const reading = await collectRequestBodyReads(async () => compile('${request.entity.string}'));
    expect(reading.reads).toBe(true);
    const other = await collectRequestBodyReads(async () => {
      compile('${response.entity.string}');
      // Writing the body is not reading it.
      compileLValue('${request.entity.string}');
    });
    expect(other.reads).toBe(false);
  });
});
