import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'am-service', include: ['src/**/*.test.ts'] },
});
