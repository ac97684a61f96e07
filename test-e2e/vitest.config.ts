import { configDefaults, defineProject } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';
import { PACKING_SPECS } from './vitest.pack.config.ts';

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'e2e',
    include: ['specs/**/*.test.ts'],
    // They run in a project of their own, never alongside these: see vitest.pack.config.ts.
    exclude: [...configDefaults.exclude, ...PACKING_SPECS],
    testTimeout: 30_000,
    // Some tests pack packages or run the built gateway: dist/ is built once before any test.
    globalSetup: ['support/build.ts'],
    // @anthropic-ai/sdk imports @opentelemetry/api, whose `module` build (chosen by the server
    // conditions above) imports files without their extensions: vite resolves it, Node cannot.
    server: { deps: { inline: ['@anthropic-ai/sdk', '@opentelemetry/api'] } },
  },
});
