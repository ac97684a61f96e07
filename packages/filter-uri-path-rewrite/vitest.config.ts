import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'filter-uri-path-rewrite', include: ['src/**/*.test.ts'] },
});
