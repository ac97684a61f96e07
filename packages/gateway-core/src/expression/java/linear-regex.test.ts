import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../../errors.ts';
import { isRe2RegExp, runsOnLinearEngine } from './linear-regex.ts';
import { compileJavaRegex } from './regex.ts';
import { find, findFrom, fullMatch } from './regex-matching.ts';
import { runtimeJavaRegex } from './runtime-regex.ts';

/**
 * Every pattern runs in time linear in its input. Each hostile case below would backtrack for hours
 * (2^50 paths) without the rule; the test timeout is what fails them.
 */
const hostile = `${'a'.repeat(50)}!`;

describe('regular expressions cannot freeze a worker', () => {
  it.each([
    ['^(a+)+$', 'V8 switches to its linear engine'],
    ['(a|aa)+$', 'V8 switches to its linear engine'],
    ['^(a*)*b', 'V8 switches to its linear engine'],
    ['(?i)^(a+)+$', 'RE2 (case-insensitivity)'],
    ['(?m)^(a+)+$', 'RE2 (multiline anchors)'],
    ['^(\\w+\\s?)*$', 'V8 switches to its linear engine'],
  ])('%s on 50 a and a ! (%s)', (pattern, _engine) => {
    const re = compileJavaRegex(pattern);
    expect(find(re, hostile)).toBeNull();
    expect(fullMatch(re, hostile)).toBe(false);
    expect(findFrom(re, hostile, 10)).toBeNull();
    expect(re.test(hostile)).toBe(false);
  });

  it('an input ending with a line break takes the RE2 path, bounded too', () => {
    const re = compileJavaRegex('^(a+)+$');
    expect(find(re, `${'a'.repeat(50)}!\n`)).toBeNull();
    expect(find(re, 'aaa\n')).toBeNull(); // departs from Java, which finds "aaa" before the final line break
    expect(find(re, 'aaa')?.[0]).toBe('aaa');
  });

  it('a pattern supplied at run time follows the same rule', () => {
    expect(find(runtimeJavaRegex('^(a+)+$', 0), hostile)).toBeNull();
    expect(() => runtimeJavaRegex('(a)\\1', 0)).toThrow(PorticoError);
  });
});

describe('which engine runs a pattern', () => {
  it('V8 runs what its linear engine can take over: plain irregexp speed', () => {
    for (const pattern of ['^/api/', 'a.b', '(?s)a.b', '[a-z]+\\d*', '(?<=a)b', '\\bword\\b']) {
      const re = compileJavaRegex(pattern);
      expect(isRe2RegExp(re), pattern).toBe(false);
      expect(runsOnLinearEngine(re.source, re.flags), pattern).toBe(true);
    }
  });

  it('RE2 runs the rest, and they still behave as RegExps', () => {
    const re = compileJavaRegex('(?i)(?<word>b\\w+)$');
    expect(isRe2RegExp(re)).toBe(true);
    const match = find(re, 'x BaR');
    expect(match?.[0]).toBe('BaR');
    expect(match?.index).toBe(2);
    expect(match?.groups).toEqual({ word: 'BaR' });
    expect('x bar'.replace(re, '[$<word>]')).toBe('x [bar]');
    const global = compileJavaRegex('(?i)b(\\w)');
    expect(isRe2RegExp(global)).toBe(true);
    expect('Ba bE'.split(global)).toEqual(['', 'a', ' ', 'E', '']);
  });

  it('a `$` pattern keeps Java’s meaning, natively, for input without a final line break', () => {
    const re = compileJavaRegex('^/api/(\\w+)$');
    expect(isRe2RegExp(re)).toBe(true);
    expect(find(re, '/api/items')?.[1]).toBe('items');
    expect(fullMatch(re, '/api/items')).toBe(true);
    expect(fullMatch(re, '/api/items/x')).toBe(false);
  });
});

describe('patterns that cannot run in linear time are refused with a coded error', () => {
  it.each([
    ['(a)\\1', 'a back reference'],
    ['(?<a>x)\\k<a>', 'a named back reference'],
    ['a(?=b)', 'a look-ahead'],
    ['a(?!b)', 'a negative look-ahead'],
  ])('%s (%s)', (pattern) => {
    let error: unknown;
    try {
      compileJavaRegex(pattern);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PorticoError);
    expect((error as PorticoError).code).toBe(ErrorCode.EXPRESSION);
    expect((error as PorticoError).message).toContain('linear');
    expect((error as PorticoError).details.text).toBe(pattern);
  });
});

describe('a catastrophic pattern fails this test instead of hanging it', () => {
  // The match runs in a worker thread (V8 flags are per process, so the worker has the core's), which
  // the deadline can terminate: without the rule the worker backtracks for days and the test fails
  // after two seconds rather than blocking the test runner.
  it('^(a+)+$ on 50 a and a ! finishes within the deadline', async () => {
    expect(await inWorker(`find(compileJavaRegex('^(a+)+$'), ${JSON.stringify(hostile)}) === null`)).toBe(
      true,
    );
  });

  // A whole-input match (`String.matches`, `matchesWithRegex`, `keyMatch`) of a multiline pattern
  // once anchored it with look-arounds, which V8's linear engine cannot run: the pattern was let
  // through as linear, its anchored form backtracked (2^28 paths took six seconds).
  it('(?m)(a|aa)+b matched whole on 50 a and a ! finishes within the deadline', async () => {
    expect(
      await inWorker(`fullMatch(compileJavaRegex('(?m)(a|aa)+b'), ${JSON.stringify(hostile)}) === false`),
    ).toBe(true);
  });
});

describe('a pattern that backtracks a little at every position is not quadratic', () => {
  // V8 counts backtracks per attempt: with its default threshold (50,000) none of these ever switched
  // to the linear engine, and each took seconds (5.8, 3.3 and about 3 s here); with 100, milliseconds.
  it.each([
    ['([a-z]+)=([^&]*)', "'x'.repeat(64000) + '&'"],
    ['a+b', "'a'.repeat(64000)"],
    ['.*foo.*bar', "'z'.repeat(16000) + 'foo' + 'z'.repeat(16000)"],
  ])('%s against %s finishes within the deadline', async (pattern, input) => {
    expect(await inWorker(`find(compileJavaRegex(${JSON.stringify(pattern)}), ${input}) === null`)).toBe(
      true,
    );
  });

  it('an ordinary pattern on ordinary input still matches as before', () => {
    const re = compileJavaRegex('^/api/(.*)/items/([0-9]+)$');
    expect(find(re, '/api/v1/catalogue/items/12345')?.slice(1)).toEqual(['v1/catalogue', '12345']);
    expect(find(compileJavaRegex('([a-z]+)=([^&]*)'), `${'x'.repeat(300)}&user=alice`)?.slice(1)).toEqual([
      'user',
      'alice',
    ]);
  });
});

/**
 * What `expression` (over compileJavaRegex, find and fullMatch) gives in a worker, or a note that it
 * ran past 2 s.
 */
async function inWorker(expression: string): Promise<unknown> {
  const regexModule = new URL('./regex.ts', import.meta.url).href;
  const matchingModule = new URL('./regex-matching.ts', import.meta.url).href;
  const worker = new Worker(
    `import { compileJavaRegex } from ${JSON.stringify(regexModule)};
     import { find, fullMatch } from ${JSON.stringify(matchingModule)};
     import { parentPort } from 'node:worker_threads';
     parentPort.postMessage(${expression});`,
    { eval: true },
  );
  try {
    return await Promise.race([
      new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
      new Promise((resolve) => setTimeout(resolve, 2_000, 'still running after 2 s')),
    ]);
  } finally {
    await worker.terminate();
  }
}
