import { defineProject } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

// The harness's own logic (how figures are read from a generator's output); the benchmarks
// themselves run with `npm run bench`, never in `npm test`.
export default defineProject({
  ...sourceResolution,
  test: { name: 'bench', include: ['src/**/*.test.ts'] },
});
