import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'gateway', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
});
