import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPorticoError } from '../errors.ts';
import { createMemoryLogger } from '../logging.ts';
import { compile, compileLValue } from './expression.ts';

/**
 * Property-based tests: whatever text a configuration holds, compiling either succeeds or throws the
 * coded expression error, quickly; and evaluating a compiled expression never throws.
 */

const logger = createMemoryLogger();

/** Text built from the language's own pieces, so the generator reaches deep into the grammar. */
const piece = fc.constantFrom(
  '${',
  '#{',
  '}',
  '\\${',
  '(',
  ')',
  '[',
  ']',
  '.',
  ',',
  '?',
  ':',
  "'",
  '"',
  '\\',
  ' ',
  '+',
  '-',
  '*',
  '/',
  '%',
  '==',
  '!=',
  '<',
  '>',
  '<=',
  '>=',
  '&&',
  '||',
  '!',
  '=',
  '===',
  'and',
  'or',
  'not',
  'eq',
  'ne',
  'lt',
  'gt',
  'le',
  'ge',
  'div',
  'mod',
  'empty',
  'instanceof',
  'true',
  'false',
  'null',
  '0',
  '1',
  '2.5',
  '1e3',
  '.5',
  'request',
  'attributes',
  'session',
  'contexts',
  'env',
  'system',
  'now',
  'x',
  'y',
  'matches',
  'split',
  'length',
  'trim',
  'array',
  'startsWith',
  'get',
  'size',
  'substring',
  "'a'",
  "'(?i)x'",
  "'['",
  "'\\\\d+'",
  'text ',
);
const grammarish = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
const anyText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
  grammarish,
);

function compiles(text: string): boolean {
  try {
    compile(text, 'any', { logger });
    return true;
  } catch (error) {
    if (isPorticoError(error, 'PORTICO_E_EXPRESSION')) return false;
    throw error;
  }
}

describe('the parser', () => {
  it('either compiles or throws PORTICO_E_EXPRESSION, for any text', () => {
    fc.assert(
      fc.property(anyText, (text) => void compiles(text)),
      { numRuns: 5000 },
    );
  });

  it('never takes long, however deep or long the text', () => {
    const nested = `\${${'('.repeat(2000)}1${')'.repeat(2000)}}`;
    const long = `\${${Array.from({ length: 5000 }, (_, i) => `a${i}`).join(' + ')}}`;
    const unclosed = `\${${"'".repeat(10_000)}`;
    const start = performance.now();
    for (const text of [nested, long, unclosed, '${'.repeat(10_000), '\\${'.repeat(10_000)]) compiles(text);
    expect(performance.now() - start).toBeLessThan(2_000);
  });

  it('compileLValue either compiles or throws PORTICO_E_EXPRESSION', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        try {
          compileLValue(text, { logger });
        } catch (error) {
          if (!isPorticoError(error, 'PORTICO_E_EXPRESSION')) throw error;
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('evaluation', () => {
  const values = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string({ maxLength: 10 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('x', 'y', 'a b', 'size'), tie('value'), { maxKeys: 3 }),
    ),
  })).value;
  const bindings = fc.record({ request: values, attributes: values, session: values, x: values, y: values });

  it('never throws, whatever the expression and the bindings', () => {
    fc.assert(
      fc.property(grammarish, bindings, (text, b) => {
        let expression: ReturnType<typeof compile> | undefined;
        try {
          expression = compile(text, 'any', { logger });
        } catch {
          return;
        }
        expression.evaluate(b);
        compile(text, 'string', { logger }).evaluate(b);
        compile(text, 'boolean', { logger }).evaluate(b);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees with JavaScript on integer arithmetic', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e6, max: 1e6 }), fc.integer({ min: -1e6, max: 1e6 }), (a, b) => {
        expect(compile(`\${x + y}`).evaluate({ x: a, y: b })).toBe(a + b);
        expect(compile(`\${x * y - x}`).evaluate({ x: a, y: b })).toBe(a * b - a);
        expect(compile(`\${x < y}`).evaluate({ x: a, y: b })).toBe(a < b);
        expect(compile(`\${x == y}`).evaluate({ x: String(a), y: b })).toBe(a === b);
      }),
    );
  });

  it('keeps templates of plain text unchanged', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('${') && !s.includes('#{')),
        (text) => {
          expect(compile(text).evaluate({})).toBe(text);
        },
      ),
    );
  });
});
