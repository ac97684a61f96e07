import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse-config.ts';
import { s } from '../config/schema-builders.ts';
import { ACCESS_TOPIC_SCHEMA, topicFields } from './access-topic.ts';
import { type AuditEvent, auditHandler, isAuditHandler } from './handler.ts';
import { auditHandlerConfig, auditTopics, evaluable } from './handler-settings.ts';
import { matchesQueryFilter, parseQueryFilter } from './query-filter.ts';

const event: AuditEvent = {
  _id: 'e1',
  timestamp: '2026-01-02T03:04:05.006Z',
  transactionId: 't1',
  eventName: 'OPENIG-HTTP-ACCESS',
  trackingIds: ['a', 'b'],
  http: { request: { method: 'GET', path: 'http://example.com/a b', secure: false } },
  response: { status: 'SUCCESSFUL', statusCode: '200', elapsedTime: 12 },
};

describe('auditHandler', () => {
  it('brands a handler, enabled by default, and closes it once', async () => {
    let closed = 0;
    const handler = auditHandler({
      name: 'h',
      topics: ['access'],
      publish: async () => {},
      close: async () => {
        closed++;
      },
    });
    expect(isAuditHandler(handler)).toBe(true);
    expect(handler.enabled).toBe(true);
    expect(handler.query).toBeUndefined();
    await Promise.all([handler.close(), handler.close()]);
    expect(closed).toBe(1);
    expect(isAuditHandler({ publish() {}, close() {} })).toBe(false);
    expect(auditHandler({ name: 'h', topics: [], enabled: false, publish: async () => {} }).enabled).toBe(
      false,
    );
  });
});

describe('auditHandlerConfig', () => {
  const schema = auditHandlerConfig({
    logDirectory: s.string(),
    formatting: s.object({ quoteChar: s.string().default('"') }).optional(),
  });
  const parse = (config: unknown, properties?: Record<string, unknown>) =>
    parseConfig(schema, config, {
      file: 'config.json',
      jsonPath: '$.config',
      ...(properties ? { properties } : {}),
    });

  it('requires a name and topics ["access"], and enables by default', () => {
    expect(parse({ name: 'csv', topics: ['access'], logDirectory: '/tmp' })).toEqual({
      name: 'csv',
      enabled: true,
      topics: ['access'],
      logDirectory: '/tmp',
    });
    expect(() => parse({ topics: ['access'], logDirectory: '/tmp' })).toThrow(
      expect.objectContaining({
        code: 'PORTICO_E_CONFIG',
        details: expect.objectContaining({ jsonPath: '$.config.name' }),
      }),
    );
    expect(() => parse({ name: 'csv', logDirectory: '/tmp' })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ jsonPath: '$.config.topics' }) }),
    );
    for (const topics of [['config'], ['access', 'activity'], [], 'access'])
      expect(() => parse({ name: 'csv', topics, logDirectory: '/tmp' })).toThrow(
        expect.objectContaining({ details: expect.objectContaining({ jsonPath: '$.config.topics' }) }),
      );
  });

  it('takes every setting as an expression, arrays and objects too', () => {
    const parsed = parse(
      {
        name: '${handlerName}',
        enabled: '${on}',
        topics: '${topics}',
        logDirectory: '${dir}',
        formatting: '${formatting}',
      },
      {
        handlerName: 'csv',
        on: false,
        topics: ['access'],
        dir: '/var/audit',
        formatting: { quoteChar: "'" },
      },
    );
    expect(parsed).toEqual({
      name: 'csv',
      enabled: false,
      topics: ['access'],
      logDirectory: '/var/audit',
      formatting: { quoteChar: "'" },
    });
    expect(() =>
      parse({ name: 'csv', topics: '${other}', logDirectory: '/tmp' }, { other: ['config'] }),
    ).toThrow(
      expect.objectContaining({
        message: expect.stringContaining('is not ["access"]'),
        details: expect.objectContaining({ jsonPath: '$.config.topics' }),
      }),
    );
  });

  it('lets a required structure that evaluates to null be missing, and an optional one fall back', () => {
    expect(() => parse({ name: 'csv', topics: '${null}', logDirectory: '/tmp' })).toThrow(
      /evaluated to null/,
    );
    const optional = evaluable(s.array(s.string()).default(['x']));
    expect(parseConfig(s.object({ a: optional }), { a: '${null}' })).toEqual({ a: ['x'] });
  });

  it('accepts the topic list from auditTopics alone', () => {
    expect(parseConfig(s.object({ topics: auditTopics() }), { topics: ['access'] })).toEqual({
      topics: ['access'],
    });
  });
});

describe('the access topic', () => {
  it('lays its fields out in the order of the core schema', () => {
    expect(topicFields(ACCESS_TOPIC_SCHEMA)).toEqual([
      '_id',
      'timestamp',
      'eventName',
      'transactionId',
      'userId',
      'trackingIds',
      'server.ip',
      'server.port',
      'client.ip',
      'client.port',
      'request.protocol',
      'request.operation',
      'request.detail',
      'http.request.secure',
      'http.request.method',
      'http.request.path',
      'http.request.queryParameters',
      'http.request.headers',
      'http.request.cookies',
      'http.response.headers',
      'response.status',
      'response.statusCode',
      'response.detail',
      'response.elapsedTime',
      'response.elapsedTimeUnits',
    ]);
    expect(Object.isFrozen(ACCESS_TOPIC_SCHEMA)).toBe(true);
  });
});

describe('query filters', () => {
  const matches = (text: string) => matchesQueryFilter(parseQueryFilter(text), event);

  it('parses the literals, comparisons, presence and the boolean operators', () => {
    expect(parseQueryFilter('true')).toEqual({ op: 'true' });
    expect(parseQueryFilter('/a/b eq "x"')).toEqual({ op: 'eq', field: '/a/b', value: 'x' });
    expect(parseQueryFilter('a/b pr')).toEqual({ op: 'pr', field: '/a/b' });
    expect(parseQueryFilter('!(a eq 1) or b eq true and c lt null')).toEqual({
      op: 'or',
      operands: [
        { op: 'not', operand: { op: 'eq', field: '/a', value: 1 } },
        {
          op: 'and',
          operands: [
            { op: 'eq', field: '/b', value: true },
            { op: 'lt', field: '/c', value: null },
          ],
        },
      ],
    });
  });

  it('matches events by JSON pointer', () => {
    expect(matches('true')).toBe(true);
    expect(matches('false')).toBe(false);
    expect(matches('/_id eq "e1"')).toBe(true);
    expect(matches('/response/statusCode eq "200"')).toBe(true);
    expect(matches('/response/statusCode eq 200')).toBe(false);
    expect(matches('/http/request/path co "a b"')).toBe(true);
    expect(matches('/http/request/path sw "http://example.com/"')).toBe(true);
    expect(matches('/response/elapsedTime gt 11 and /response/elapsedTime lt 13')).toBe(true);
    expect(matches('/response/elapsedTime ge 12 and /response/elapsedTime le 12')).toBe(true);
    expect(matches('/timestamp gt "2026-01-01"')).toBe(true);
    expect(matches('/timestamp gt 5')).toBe(false);
    expect(matches('/trackingIds eq "b"')).toBe(true);
    expect(matches('/userId pr')).toBe(false);
    expect(matches('!(/userId pr) and (/_id eq "x" or /_id eq "e1")')).toBe(true);
    expect(matches('/http/request/secure eq false')).toBe(true);
  });

  it('refuses what breaks the syntax, saying where, and what is too long or too deep', () => {
    for (const text of [
      '',
      'a',
      'a eq',
      'a xx 1',
      'a eq "x',
      '(a pr',
      'a pr)',
      'a eq {}',
      'a eq x',
      'a pr and',
    ])
      expect(() => parseQueryFilter(text), text).toThrow(
        expect.objectContaining({ code: 'PORTICO_E_BAD_REQUEST' }),
      );
    expect(() => parseQueryFilter('a eq "x')).toThrow(/position/);
    expect(() => parseQueryFilter(`a eq "${'x'.repeat(5000)}"`)).toThrow(/longer than/);
    expect(() => parseQueryFilter(`${'!'.repeat(40)}true`)).toThrow(/nested deeper/);
    expect(() => parseQueryFilter(`${'('.repeat(40)}true${')'.repeat(40)}`)).toThrow(/nested deeper/);
  });

  it('parses a filter of the greatest length in linear time', () => {
    const long = Array.from({ length: 400 }, (_, i) => `a eq ${i}`)
      .join(' or ')
      .slice(0, 4000);
    const text = long.replace(/ or a eq \d*$/, '');
    const started = performance.now();
    for (let i = 0; i < 100; i++) parseQueryFilter(text);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
