import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'filter-oauth2-client', include: ['src/**/*.test.ts'] },
});
