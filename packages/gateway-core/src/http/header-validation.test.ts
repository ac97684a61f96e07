import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../errors.ts';
import {
  checkHeaderFields,
  headerFieldProblem,
  isHeaderName,
  isHeaderValue,
  responseHead,
} from './header-validation.ts';

describe('the one check of every header the gateway writes', () => {
  it.each(['X-Q', 'content-type', "a!#$%&'*+-.^_`|~9"])('%s is a header name', (name) => {
    expect(isHeaderName(name)).toBe(true);
  });

  it.each(['', 'X Q', 'X-Q:', 'X\r\nY', 'Ü', 'a(b)', 'a/b'])('%j is not a header name', (name) => {
    expect(isHeaderName(name)).toBe(false);
  });

  it.each(['plain', 'a\tb', 'sp ace', 'caf\u00e9', '~!@#'])('%j is a header value', (value) => {
    expect(isHeaderValue(value)).toBe(true);
  });

  it.each([
    'a\r\nSet-Cookie: x=1',
    'a\nb',
    'a\rb',
    'a\u0000b',
    'a\u0007b',
    'a\u007fb',
    'a\u2028b',
    'emoji \u{1f600}',
  ])('%j is not a header value', (value) => {
    expect(isHeaderValue(value)).toBe(false);
  });

  it('says which field and which character, without the value', () => {
    expect(headerFieldProblem('X-Q', 'a\r\nb')).toBe('the value of header X-Q holds the character U+000D');
    expect(headerFieldProblem('X Q', 'v')).toContain('not an HTTP token');
    expect(headerFieldProblem('X-Q', 'fine')).toBeUndefined();
    const error = checkHeaderFields(['A', 'ok', 'B', 'x\ny'], 'the response');
    expect(error?.code).toBe(ErrorCode.HEADER);
    expect(error?.message).not.toContain('x\ny');
  });

  it('writes a response head only when every part of it can be written', () => {
    expect(responseHead(101, 'Switching Protocols', ['Upgrade', 'websocket'])).toBe(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n',
    );
    expect(responseHead(200, '', [])).toBe('HTTP/1.1 200 \r\n\r\n');
    expect(() => responseHead(200, 'OK', ['X', 'a\r\nSet-Cookie: x=1'])).toThrow(
      expect.objectContaining({ code: ErrorCode.HEADER }),
    );
    expect(() => responseHead(200, 'OK\r\nX: y', [])).toThrow(
      expect.objectContaining({ code: ErrorCode.HEADER }),
    );
    expect(() => responseHead(20, 'OK', [])).toThrow(expect.objectContaining({ code: ErrorCode.HEADER }));
  });
});
