import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'filter-http-basic-auth', include: ['src/**/*.test.ts'] },
});
