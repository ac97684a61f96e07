import { describe, expect, it } from 'vitest';
import { PorticoError, problemsOf } from '../errors.ts';
import { setSystemProperty } from '../expression/implicit.ts';
import { besidesTokenProblems, resolveTokens, resolveTokensCollecting } from './tokens.ts';

const env = { IG_HOST: 'gateway.example.com', APP_PORT: '8081', EMPTY: '' };

describe('configuration tokens', () => {
  it.each<[string, string]>([
    ['&{ig.host}', 'gateway.example.com'],
    ['https://&{ig.host}:&{app.port}/x', 'https://gateway.example.com:8081/x'],
    ['&{missing|fallback}', 'fallback'],
    ['&{missing|}', ''],
    ['&{EMPTY|x}', ''],
    ['&{missing|&{ig.host}}', 'gateway.example.com'],
    ['&{missing|&{other|deep}}', 'deep'],
    ['&{missing|a|b}', 'a|b'],
    ['\\&{ig.host}', '&{ig.host}'],
    ['no tokens & {here}', 'no tokens & {here}'],
    ['${expression} stays', '${expression} stays'],
  ])('%s → %s', (text, expected) => {
    expect(resolveTokens({ v: text }, { env })).toEqual({ v: expected });
  });

  it('prefers a system property to the environment', () => {
    setSystemProperty('ig.host', 'from-system');
    expect(resolveTokens('&{ig.host}', { env })).toBe('from-system');
    setSystemProperty('ig.host', null);
  });

  it('walks objects and arrays, leaving other values alone', () => {
    expect(resolveTokens({ a: ['&{ig.host}', 1, true, null], b: { c: '&{app.port}' } }, { env })).toEqual({
      a: ['gateway.example.com', 1, true, null],
      b: { c: '8081' },
    });
  });

  it.each<[unknown, string]>([
    [{ a: { b: '&{nowhere}' } }, '$.a.b'],
    [{ list: ['ok', '&{nowhere'] }, '$.list[1]'],
  ])('reports %j at %s with the file', (value, jsonPath) => {
    expect(() => resolveTokens(value, { env, file: 'config.json' })).toThrow(
      expect.objectContaining({
        code: 'PORTICO_E_CONFIG',
        details: expect.objectContaining({ file: 'config.json', jsonPath }),
      }),
    );
  });

  it('resolves tokens nested 32 deep, and refuses deeper ones with a coded error instead of a stack overflow', () => {
    const nested = (depth: number) => `${'&{nowhere|'.repeat(depth)}x${'}'.repeat(depth)}`;
    expect(resolveTokens({ v: nested(32) }, { env })).toEqual({ v: 'x' });
    for (const depth of [33, 20_000]) {
      expect(() => resolveTokens({ v: nested(depth) }, { env, file: 'r.json' })).toThrow(
        expect.objectContaining({
          code: 'PORTICO_E_CONFIG',
          message: 'configuration tokens nested more than 32 levels deep',
          details: expect.objectContaining({ file: 'r.json', jsonPath: '$.v' }),
        }),
      );
    }
  });

  it('keeps the text around a token as it is, in a value of megabytes', () => {
    const text = 'a\\&{b'.repeat(500_000);
    const value = `${text}&{nowhere|!}${text}`;
    expect(resolveTokens({ v: value }, { env })).toEqual({
      v: `${text.replaceAll('\\&{', '&{')}!${text.replaceAll('\\&{', '&{')}`,
    });
  });

  it('reports every token without a value in the file, each at its path, not the first only', () => {
    let thrown: unknown;
    try {
      resolveTokens(
        { a: '&{no.one}', b: ['ok &{ig.host}', 'x&{no.two}'], c: { d: '&{unclosed' } },
        { env, file: 'config.json' },
      );
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PorticoError);
    expect(problemsOf(thrown as PorticoError).map((p) => `${p.details.jsonPath}: ${p.message}`)).toEqual([
      "$.a: the configuration token 'no.one' has no value and no default",
      "$.b[1]: the configuration token 'no.two' has no value and no default",
      `$.c.d: unclosed '&{' in "&{unclosed"`,
    ]);
  });

  it('collecting, leaves a token without a value as written and drops the problems it causes', () => {
    const { value, problems } = resolveTokensCollecting(
      { a: '&{no.one}', b: ['&{app.port}', { c: '&{no.two}' }] },
      { file: 'f.json', env },
    );
    expect(value).toEqual({ a: '&{no.one}', b: ['8081', { c: '&{no.two}' }] });
    const at = (jsonPath: string, file = 'f.json') =>
      new PorticoError('PORTICO_E_CONFIG', 'refused', { file, jsonPath });
    const others = [at('$.a'), at('$.b[1].c.d'), at('$.b[1]'), at('$.ab'), at('$.a', 'g.json')];
    expect(
      besidesTokenProblems([...problems, ...others]).map((p) => `${p.details.file} ${p.details.jsonPath}`),
    ).toEqual(['f.json $.a', 'f.json $.b[1].c', 'f.json $.b[1]', 'f.json $.ab', 'g.json $.a']);
  });
});
