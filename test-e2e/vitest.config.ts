import { defineProject } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'e2e',
    include: ['specs/**/*.test.ts'],
    testTimeout: 30_000,
    // Some tests pack packages or run the built gateway: dist/ is built once before any test.
    globalSetup: ['support/build.ts'],
  },
});
