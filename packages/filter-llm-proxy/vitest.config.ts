import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'filter-llm-proxy', include: ['src/**/*.test.ts'] },
});
