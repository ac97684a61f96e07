import { describe, expect, it } from 'vitest';
import { readsEntity } from './entity-access.ts';

describe('readsEntity', () => {
  it.each([
    ["${request.entity.json['user']}", 'request'],
    ["${request['entity'].string}", 'request'],
    ['${request.form.tokenid[0]}', 'request'],
    ['{ "tokenId": "${request.form.tokenid[0]}" }', 'request'],
    ["${!response.entity.json.get('valid')}", 'response'],
    ["${contains(toString(response.entity.string), 'x') ? 'a' : 'b'}", 'response'],
    ['${empty response.entity.json}', 'response'],
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
  ] as const)('%s does not read the %s body', (text, message) => {
    expect(readsEntity(text, message)).toBe(false);
  });
});
