import { defaultServerConditions } from 'vite';
import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

/**
 * The shared conditions without `module`, which vitest also hands to Node (`--conditions`): with it,
 * Node's own `require('@opentelemetry/api')` in prom-client loads that package's bundler build, whose
 * imports name no file extension and fail. Node alone never uses `module`.
 */
const conditions = ['portico-source', ...defaultServerConditions.filter((c) => c !== 'module')];

export default defineProject({
  ...sourceResolution,
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { name: 'gateway', include: ['src/**/*.test.ts', 'test/**/*.test.ts'] },
});
