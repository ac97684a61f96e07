import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { requireCorpusUnderCi } from './corpus.ts';

describe('tests that need the compatibility corpus', () => {
  const missing = path.join(tmpdir(), 'portico-no-corpus-here');
  afterEach(() => vi.restoreAllMocks());

  it('run where the corpus is', () => {
    expect(requireCorpusUnderCi(mkdtempSync(path.join(tmpdir(), 'corpus-')), { CI: 'true' })).toBe(true);
  });

  it('are skipped outside CI with one line naming where the corpus was looked for', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(requireCorpusUnderCi(missing, {})).toBe(false);
    expect(requireCorpusUnderCi(missing, { CI: 'false' })).toBe(false);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(String(warn.mock.calls[0]![0])).toContain(`compatibility corpus not found at ${missing}`);
  });

  it('fail under CI', () => {
    expect(() => requireCorpusUnderCi(missing, { CI: 'true' })).toThrow(/compatibility corpus is missing/);
    expect(() => requireCorpusUnderCi(missing, { CI: '1' })).toThrow(/PORTICO_CORPUS/);
  });
});
