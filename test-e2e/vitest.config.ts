import { defineProject } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: { name: 'e2e', include: ['specs/**/*.test.ts'], testTimeout: 30_000 },
});
