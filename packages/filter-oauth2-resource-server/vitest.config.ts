import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'filter-oauth2-resource-server', include: ['src/**/*.test.ts'] },
});
