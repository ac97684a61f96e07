import { describe, expect, it } from 'vitest';
import { FeaturePolicy } from './policy.ts';
import { templatePattern, templateProblem } from './uri-template.ts';

describe('URI templates', () => {
  it.each([
    ['users://{id}/profile', 'users://42/profile', true],
    ['users://{id}/profile', 'users://4/2/profile', false],
    ['users://{id}/profile', 'users://42/profile/x', false],
    ['files:///{+path}', 'files:///etc/passwd', true],
    ['files:///{+path}', 'file:///etc/passwd', false],
    ['docs://{id}{?lang,rev}', 'docs://a?lang=en&rev=2', true],
    ['docs://{id}{?lang,rev}', 'docs://a', true],
    ['docs://{id}{#part}', 'docs://a#intro', true],
    ['tree://root{/a,b}', 'tree://root/x/y', true],
    ['tree://root{/a,b}', 'tree://rootx', false],
    ['map://{x}{.ext}', 'map://a.b.c', true],
    ['m://{;p}', 'm://;p=1;q=2', true],
    ['q://a?x=1{&y}', 'q://a?x=1&y=2', true],
    ['a.b://{x}', 'aXb://1', false],
    ['a+b://(x)|[y]$', 'a+b://(x)|[y]$', true],
    ['ü://{x}', 'ü://1', true],
  ])('%s matches %s: %s', (template, uri, matches) => {
    expect(templateProblem(template)).toBeUndefined();
    expect(templatePattern(template).test(uri)).toBe(matches);
  });

  it.each([
    ['a://{x', 'is not closed'],
    ['a://x}', 'closes no expression'],
    ['a://}{x}', 'closes no expression'],
    ['a://{}', 'names no variable'],
    ['a://{+}', 'names no variable'],
    ['a://{a b}', 'is not a variable name'],
    ['a://{a,}', 'is not a variable name'],
    ['a://{x{y}}', "holds a '{'"],
  ])('finds %s wrong: %s', (template, problem) => {
    expect(templateProblem(template)).toContain(problem);
  });

  it('takes prefixes, explode modifiers and percent-encoded names', () => {
    for (const template of ['a://{x:3}', 'a://{list*}', 'a://{%20x}', 'a://{a.b}'])
      expect(templateProblem(template)).toBeUndefined();
  });

  it('matches a long URI in time proportional to its length (a linear engine)', () => {
    const pattern = templatePattern('x://{a}{b}{c}{d}{e}{f}{g}/end');
    const started = performance.now();
    expect(pattern.test(`x://${'a'.repeat(100_000)}!`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('FeaturePolicy', () => {
  const lists = (over: Partial<Record<string, string[]>> = {}) => ({
    tools: [],
    prompts: [],
    resources: [],
    'resources/templates': [],
    ...over,
  });

  it('lets deny win over allow for every kind', () => {
    const both = { tools: ['t'], prompts: ['p'], resources: ['r://1'], 'resources/templates': ['r://{x}'] };
    const policy = new FeaturePolicy(lists(both), lists(both));
    expect([
      policy.tool('t'),
      policy.prompt('p'),
      policy.resource('r://1'),
      policy.template('r://{x}'),
    ]).toEqual([false, false, false, false]);
  });

  it('judges each kind by its own allow list: an empty one allows all of that kind', () => {
    const policy = new FeaturePolicy(lists({ tools: ['t'] }), lists());
    expect(policy.tool('other')).toBe(false);
    expect(policy.prompt('any')).toBe(true);
    expect(policy.resource('any://x')).toBe(true);
    expect(policy.template('any://{x}')).toBe(true);
  });

  it('allows a resource an allowed template expands to, when resources are listed', () => {
    const policy = new FeaturePolicy(
      lists({ resources: ['a://fixed'], 'resources/templates': ['u://{id}'] }),
      lists(),
    );
    expect(policy.resource('a://fixed')).toBe(true);
    expect(policy.resource('u://7')).toBe(true);
    expect(policy.resource('v://7')).toBe(false);
  });

  it('judges a completion reference as a template when it holds an expression, else as a resource', () => {
    const policy = new FeaturePolicy(
      lists({ 'resources/templates': ['u://{id}'] }),
      lists({ resources: ['a://no'] }),
    );
    expect(policy.completionResource('u://{id}')).toBe(true);
    expect(policy.completionResource('w://{id}')).toBe(false);
    expect(policy.completionResource('a://yes')).toBe(true);
    expect(policy.completionResource('a://no')).toBe(false);
  });
});
