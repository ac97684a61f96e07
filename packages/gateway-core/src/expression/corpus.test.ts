import { corpusFiles, requireCorpusUnderCi } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { parseConfigJson } from '../config/json.ts';
import { compile } from './expression.ts';
import { containsExpression } from './template.ts';

/**
 * Every expression in the real configurations of the compatibility corpus compiles. Script bodies
 * (`source` of Groovy or JavaScript objects) are not expressions and are left out.
 */
function expressionsIn(value: unknown, path: string, out: [string, string][], inScript = false): void {
  if (typeof value === 'string') {
    if (!inScript && containsExpression(value)) out.push([path, value]);
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) expressionsIn(v, `${path}[${i}]`, out, inScript);
  } else if (value !== null && typeof value === 'object') {
    const scripted =
      typeof (value as { type?: unknown }).type === 'string' &&
      /^application\//.test((value as { type: string }).type);
    for (const [k, v] of Object.entries(value))
      expressionsIn(v, `${path}.${k}`, out, inScript || (scripted && k === 'source'));
  }
}

const available = requireCorpusUnderCi();

describe.skipIf(!available)('expressions of the compatibility corpus', () => {
  const files = available ? corpusFiles() : [];
  const cases: [string, string, string][] = [];
  const unreadable: string[] = [];
  for (const [file, text] of files) {
    const found: [string, string][] = [];
    try {
      expressionsIn(parseConfigJson(text, file), '$', found);
    } catch {
      unreadable.push(file);
    }
    for (const [path, expression] of found) cases.push([file, path, expression]);
  }

  it('reads every file but an OpenIG 2 documentation fragment that is not JSON at all (commas missing)', () => {
    expect(unreadable).toEqual([
      'OpenIdentityPlatform__OpenIG/openig-doc/src/main/docbkx/gateway-guide/loginWithCookieExtract.json',
    ]);
  });

  it('finds the corpus and its expressions', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(cases.length).toBeGreaterThan(100);
  });

  it.each(cases)('%s %s compiles', (_file, _path, expression) => {
    expect(() => compile(expression)).not.toThrow();
  });
});
