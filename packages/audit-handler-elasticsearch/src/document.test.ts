import type { QueryFilter } from '@portico/gateway-core/audit';
import { parseQueryFilter } from '@portico/gateway-core/audit';
import { describe, expect, it } from 'vitest';
import { restoreEvent, toDocument } from './document.ts';
import { fieldPath, toEngineQuery } from './query.ts';

const event = {
  _id: 'id-1',
  timestamp: '2026-11-29T08:00:00.000Z',
  eventName: 'OPENIG-HTTP-ACCESS',
  transactionId: 't-1',
  http: {
    request: {
      method: 'GET',
      headers: { 'x.forwarded.host': ['a'], accept: ['*/*'] },
      queryParameters: { 'a.b': ['1'], 'c/d.e': ['2'] },
    },
  },
  response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: 3, elapsedTimeUnits: 'MILLISECONDS' },
};

describe('documents', () => {
  it('leave _id out of the body and rename dotted keys, listing them in _normalized.fieldNames', () => {
    const document = toDocument(event);
    expect(document).not.toHaveProperty('_id');
    expect(document.http).toEqual({
      request: {
        method: 'GET',
        headers: { x_forwarded_host: ['a'], accept: ['*/*'] },
        queryParameters: { a_b: ['1'], 'c/d_e': ['2'] },
      },
    });
    expect(document._normalized).toEqual({
      fieldNames: {
        '/http/request/headers/x_forwarded_host': 'x.forwarded.host',
        '/http/request/queryParameters/a_b': 'a.b',
        '/http/request/queryParameters/c~1d_e': 'c/d.e',
      },
    });
  });

  it('without a dotted key, carry no _normalized; the event is given back unchanged either way', () => {
    const plain = { _id: 'x', timestamp: 't', transactionId: 'y', server: { ip: '1.2.3.4', port: 80 } };
    expect(toDocument(plain)).toEqual({
      timestamp: 't',
      transactionId: 'y',
      server: { ip: '1.2.3.4', port: 80 },
    });
    expect(restoreEvent('x', toDocument(plain))).toEqual(plain);
    expect(restoreEvent('id-1', toDocument(event))).toEqual(event);
  });
});

describe('queries', () => {
  const q = (text: string) => toEngineQuery(parseQueryFilter(text) as QueryFilter);

  it('name fields by dotted paths, dotted keys as the documents have them', () => {
    expect(fieldPath('/http/request/headers/x.a')).toBe('http.request.headers.x_a');
    expect(fieldPath('/a~1b/c~0d')).toBe('a/b.c~d');
  });

  it('translate each operator, strings on .keyword, timestamps and numbers on the field', () => {
    expect(q('true')).toEqual({ match_all: {} });
    expect(q('false')).toEqual({ match_none: {} });
    expect(q('/response/statusCode eq "200"')).toEqual({ term: { 'response.statusCode.keyword': '200' } });
    expect(q('/response/elapsedTime gt 5')).toEqual({ range: { 'response.elapsedTime': { gt: 5 } } });
    expect(q('/response/elapsedTime le 5')).toEqual({ range: { 'response.elapsedTime': { lte: 5 } } });
    expect(q('timestamp ge "2026-01-01"')).toEqual({ range: { timestamp: { gte: '2026-01-01' } } });
    expect(q('timestamp lt "2027"')).toEqual({ range: { timestamp: { lt: '2027' } } });
    expect(q('/http/request/path co "a*b"')).toEqual({
      wildcard: { 'http.request.path.keyword': { value: '*a\\*b*' } },
    });
    expect(q('/http/request/path sw "http"')).toEqual({ prefix: { 'http.request.path.keyword': 'http' } });
    expect(q('/userId pr')).toEqual({ exists: { field: 'userId' } });
    expect(q('/http/request/secure eq true')).toEqual({ term: { 'http.request.secure': true } });
    expect(q('/userId eq null')).toEqual({ bool: { must_not: [{ exists: { field: 'userId' } }] } });
    expect(q('/a gt true')).toEqual({ match_none: {} });
    expect(q('/a co 1')).toEqual({ match_none: {} });
    expect(q('/a sw 1')).toEqual({ match_none: {} });
    expect(q('/a gt null')).toEqual({ match_none: {} });
    expect(q('/a eq 1 and (/b eq 2 or !/c pr)')).toEqual({
      bool: {
        filter: [
          { term: { a: 1 } },
          {
            bool: {
              should: [{ term: { b: 2 } }, { bool: { must_not: [{ exists: { field: 'c' } }] } }],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });
});
