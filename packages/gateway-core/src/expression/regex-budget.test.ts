import { RE2JS } from 're2js';
import { describe, expect, it, vi } from 'vitest';
import { isPorticoError, type PorticoError, problemsOf } from '../errors.ts';
import { createMemoryLogger } from '../logging.ts';
import { compile } from './expression.ts';
import { RUNTIME_REGEX_BUDGET } from './java/index.ts';

/**
 * A pattern an expression builds from request data never backtracks, but its cost is its program's
 * size times the input's length, and a short pattern can be a large program. Each call with such a
 * pattern is held to a budget; constant patterns, compiled at load, are not.
 */
const FIND = "${matches(request.headers['T'][0], request.headers['P'][0])}";
const WHOLE = "${request.headers['T'][0].matches(request.headers['P'][0])}";
const SPLIT = "${request.headers['T'][0].split(request.headers['P'][0]).size()}";
const REPLACE = "${request.headers['T'][0].replaceAll(request.headers['P'][0], '-')}";

function run(text: string, input: string, pattern?: string) {
  const logger = createMemoryLogger();
  const expression = compile(text, 'any', { logger });
  const headers = pattern === undefined ? { T: [input] } : { T: [input], P: [pattern] };
  const started = performance.now();
  const value = expression.evaluate({ request: { headers } });
  const ms = performance.now() - started;
  const problems = logger.records.map((r) => String(r.data?.problem ?? r.message));
  return { value, ms, problems };
}

/**
 * How many times `evaluate` ran a match against `input`, on either engine: V8's (every match, test,
 * replace and split goes through RegExp.prototype.exec, which is looked up on each call once it is
 * replaced) and RE2's (a Re2RegExp matches through RE2JS.prototype.matcher). Counted, not timed: a
 * refusal before any match shows as none, however busy the machine.
 */
function matchesAgainst(input: string, evaluate: () => void): number {
  const v8 = vi.spyOn(RegExp.prototype, 'exec');
  const re2 = vi.spyOn(RE2JS.prototype, 'matcher');
  try {
    evaluate();
    return [...v8.mock.calls, ...re2.mock.calls].filter(([text]) => text === input).length;
  } finally {
    v8.mockRestore();
    re2.mockRestore();
  }
}

describe('a pattern made at run time is held to a budget', () => {
  const input = 'a'.repeat(16 * 1024);

  it.each([
    ['(?i)(a|b){1000}x', '(?i)(a|b){1000}x', 3003],
    ['(a|b)? 300 times', '(a|b)?'.repeat(300), 1202],
  ] as const)('%s against 16 KB is refused at once, not run', (_name, pattern, size) => {
    for (const text of [FIND, WHOLE, SPLIT, REPLACE]) {
      let outcome: ReturnType<typeof run> | undefined;
      // Refused before matching: not one match against the input, on either engine.
      expect(
        matchesAgainst(input, () => (outcome = run(text, input, pattern))),
        text,
      ).toBe(0);
      const { value, problems } = outcome!;
      expect(value, text).toBeNull();
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(`a program of ${size} instructions`);
      expect(problems[0]).toContain(`against ${input.length} characters of input`);
      expect(problems[0]).toContain(`budget of ${RUNTIME_REGEX_BUDGET}`);
      // Sizes only: neither the pattern nor the input is copied into the log.
      expect(problems[0]).not.toContain('(a|b)');
      expect(problems[0]).not.toContain('aaaa');
    }
  });

  it('the same pattern on a short input runs', () => {
    expect(run(FIND, 'abx', '(?i)(a|b){2}x').value).toBe(true);
    expect(run(FIND, 'aax', '(a|b)?'.repeat(300)).value).toBe(true);
    // The count above sees a match on either engine when one runs.
    expect(matchesAgainst('abx', () => run(FIND, 'abx', '(?i)(a|b){2}x'))).toBeGreaterThan(0);
    expect(matchesAgainst('aax', () => run(FIND, 'aax', '(a|b)?'.repeat(300)))).toBeGreaterThan(0);
  });

  it('an ordinary pattern made at run time works on 64 KB', () => {
    const pairs = Array.from({ length: 6000 }, (_, i) => `k${i}=v${i};`).join('');
    const text = pairs.slice(0, 64 * 1024);
    expect(run(FIND, text, '\\w+=\\w+;').value).toBe(true);
    expect(run(FIND, text, '(?i)^K0=V0;').value).toBe(true);
    expect(run(SPLIT, text, '\\s*;\\s*').value).toBe(text.split(';').filter((p) => p !== '').length);
    expect(run(WHOLE, text, '(\\w+=\\w+;)*\\w*=?\\w*').value).toBe(true);
  });

  it('runs on the linear engine from the first character: a+b on 64 KB of a is not quadratic', () => {
    // On V8's backtracking engine this is quadratic: its switch to the linear engine never came.
    const { value, ms, problems } = run(FIND, 'a'.repeat(64 * 1024), 'a+b');
    expect(problems).toEqual([]);
    expect(value).toBe(false);
    expect(ms).toBeLessThan(500);
  });

  it('a pattern RE2 does not read is measured through its translation', () => {
    expect(run(FIND, 'x\ty', '\\h').value).toBe(true);
    expect(run(SPLIT, 'ab ab', '(?<=a)b').value).toBe(2);
    // (V8's linear engine refuses a large counted repetition: spelled out here.)
    for (const pattern of [`\\h${'(?:a|b)?'.repeat(300)}x`, `(?<=a)${'(?:a|b)?'.repeat(300)}x`]) {
      expect(run(FIND, 'a'.repeat(16 * 1024), pattern).problems[0], pattern).toContain('exceeds the budget');
    }
  });
});

describe('a constant pattern is compiled at load and not budgeted', () => {
  const csv = `${'field,'.repeat((1024 * 1024) / 6)}last`;

  it("x.split(',') on 1 MB", () => {
    const { value, problems } = run("${request.headers['T'][0].split(',').size()}", csv);
    expect(problems).toEqual([]);
    expect(value).toBe(csv.split(',').length);
  });

  it('a large constant pattern on 1 MB, past the run-time budget, runs as configured', () => {
    const big = '(?:field,){200}x';
    for (const text of [
      `\${request.headers['T'][0].replaceAll('${big}', '')}`,
      `\${request.headers['T'][0].replaceFirst('${big}', '')}`,
      `\${request.headers['T'][0].matches('${big}')}`,
      `\${matches(request.headers['T'][0], '${big}')}`,
      `\${split(request.headers['T'][0], '${big}')}`,
    ]) {
      const { value, problems } = run(text, csv);
      expect(problems, text).toEqual([]);
      expect(value, text).not.toBeNull();
    }
  });

  it('an invalid constant pattern fails at load, each of an expression with its column and its fault', () => {
    const text =
      "${request.uri.path.split('(')}/${request.uri.path.replaceAll('[', 'x')}/${request.uri.path.replaceFirst('a{', '')}/${request.uri.path.matches('(?=a)')}/${matches(request.uri.path, '*')}";
    let error: unknown;
    try {
      compile(text);
    } catch (caught) {
      error = caught;
    }
    expect(isPorticoError(error, 'PORTICO_E_EXPRESSION')).toBe(true);
    const problems = problemsOf(error as PorticoError).map((p) => [p.code, p.details.column, p.message]);
    expect(problems).toEqual(
      (
        [
          [26, '"(" (Java regular expression: unclosed group)'],
          [62, '"[" (Java regular expression: unclosed character class)'],
          [105, '"a{" (Java regular expression: illegal repetition)'],
          [143, '"(?=a)" (Java regular expression: it cannot run in time linear in its input'],
          [181, `"*" (Java regular expression: dangling meta character '*')`],
        ] as const
      ).map(([column, fault]) => [
        'PORTICO_E_EXPRESSION',
        column,
        expect.stringContaining(`invalid regular expression ${fault}`),
      ]),
    );
    for (const [, column, message] of problems) expect(message).toContain(` at column ${column} of `);
  });

  it('on a value other than a string, the method gets the pattern as written', () => {
    const logger = createMemoryLogger();
    const value = compile("${request.headers['T'].matches('a')}", 'any', { logger }).evaluate({
      request: { headers: { T: ['a'] } },
    });
    expect(value).toBeNull();
    expect(String(logger.records[0]?.data?.problem ?? logger.records[0]?.message)).toContain('matches');
  });
});
