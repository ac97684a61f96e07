import fc from 'fast-check';
import { RE2JS } from 're2js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, isPorticoError } from '../../errors.ts';
import { estimatedProgramSize, isRe2RegExp } from './linear-regex.ts';

/**
 * The run-time regex budget needs a pattern's program size. re2js measures it (`programSize()`, in
 * its README); a re2js without that gets an upper bound read from the pattern's text, never a
 * TypeError per request.
 */

/** Pieces of patterns RE2 reads, each as a Java pattern could hold it. */
const piece = fc.constantFrom(
  'a',
  'ß',
  '.',
  '\\w',
  '\\pL',
  '[a-z]',
  '[^a]',
  '(',
  ')',
  '(?:',
  '(?i)',
  '|',
  '*',
  '+',
  '?',
  '*?',
  '{2}',
  '{1,3}',
  '{2,}',
  '^',
  '$',
  '\\b',
);

describe('the estimate from the text', () => {
  it('is never below the size re2js measures', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
        const pattern = pieces.join('');
        let measured: number;
        try {
          measured = RE2JS.compile(pattern).programSize();
        } catch {
          return; // not a pattern
        }
        expect(estimatedProgramSize(pattern), pattern).toBeGreaterThanOrEqual(measured);
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['', 3, 3],
    ['a', 3, 6],
    ['x{3}y{4}', 9, 540],
    ['(?i)(a|b){1000}x', 3003, 51_051],
    ['(a{10}){10}', 122, 4356],
    ['a{0,1000}', 2002, 30_030],
  ])('%s: %i instructions, estimated at %i', (pattern, measured, estimated) => {
    expect(RE2JS.compile(pattern).programSize()).toBe(measured);
    expect(estimatedProgramSize(pattern)).toBe(estimated);
  });
});

/**
 * A fresh copy of the core's Java modules (regular expressions among them) on a re2js whose compiled patterns keep no program where
 * the core once read it (`re2Input.prog`), and, unless `measures`, have no `programSize()`. They
 * match as before. Only this copy sees that re2js: the library itself is left as it is.
 */
async function regexWith(measures: boolean): Promise<typeof import('./index.ts')> {
  vi.resetModules();
  vi.doMock('re2js', async (importOriginal) => {
    const real = await importOriginal<typeof import('re2js')>();
    const reshape = (compiled: RE2JS) => {
      // Its own methods still reach the program; a read from outside finds none.
      const re2Input = new Proxy(compiled.re2Input, {
        get: (target, key) => {
          if (key === 'prog') return undefined;
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      return Object.create(compiled, {
        re2Input: { value: re2Input },
        ...(measures ? {} : { programSize: { value: undefined } }),
      });
    };
    const RE2JS = new Proxy(real.RE2JS, {
      get: (target, key, receiver) =>
        key === 'compile'
          ? (pattern: string, flags?: number) => reshape(target.compile(pattern, flags))
          : Reflect.get(target, key, receiver),
    });
    return { ...real, RE2JS };
  });
  try {
    const sample = (await import('re2js')).RE2JS.compile('a');
    expect(sample.re2Input.prog).toBeUndefined();
    expect(typeof sample.programSize).toBe(measures ? 'function' : 'undefined');
    return await import('./index.ts');
  } finally {
    vi.doUnmock('re2js');
  }
}

/** What the budget test needs of a regex module: ordinary patterns on 8 KB, on both engines. */
function runsOrdinaryPatterns({ find, fullMatch, runtimeJavaRegex }: typeof import('./index.ts')) {
  const text = 'k=v;'.repeat(2048);
  expect(find(runtimeJavaRegex('\\w+=\\w+;', text.length), text)?.[0]).toBe('k=v;');
  // Case-insensitive with a multiline anchor: RE2's side.
  const re2 = runtimeJavaRegex('(?im)^K=V;', text.length);
  expect(isRe2RegExp(re2)).toBe(true);
  expect(find(re2, text)?.[0]).toBe('k=v;');
  expect(fullMatch(runtimeJavaRegex('(\\w=\\w;)*', text.length), text)).toBe(true);
}

/** The message of what runtimeJavaRegex throws for `pattern` against `inputLength` characters. */
function refusal({ runtimeJavaRegex }: typeof import('./index.ts'), pattern: string, inputLength: number) {
  try {
    runtimeJavaRegex(pattern, inputLength);
  } catch (error) {
    expect(isPorticoError(error, ErrorCode.EXPRESSION)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${pattern} against ${inputLength} characters was not refused`);
}

describe('with a re2js that keeps its program elsewhere', () => {
  it('measures each pattern made at run time as before, through programSize()', async () => {
    const regex = await regexWith(true);
    runsOrdinaryPatterns(regex);
    expect(refusal(regex, '(?i)(a|b){1000}x', 16 * 1024)).toContain('a program of 3003 instructions');
  });
});

describe('with a re2js that does not measure programs either', () => {
  let regex: typeof import('./index.ts');
  beforeAll(async () => {
    regex = await regexWith(false);
  });

  it('runs ordinary patterns made at run time, sized by their estimate', () => {
    runsOrdinaryPatterns(regex);
  });

  it('holds a large program to the budget by its estimate, and says it is one', () => {
    const pattern = '(?i)(a|b){1000}x';
    expect(regex.find(regex.runtimeJavaRegex(pattern, 3), 'abx')).toBeNull();
    expect(refusal(regex, pattern, 16 * 1024)).toContain(
      `a program of at most 51051 instructions (estimated from its text) (pattern of 16 characters) against ${16 * 1024} characters of input exceeds the budget of ${regex.RUNTIME_REGEX_BUDGET}`,
    );
  });
});
