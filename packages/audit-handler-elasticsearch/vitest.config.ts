import { defineProject } from 'vitest/config';
import { sourceResolution } from '../../vitest.shared.ts';

// Without the `module` condition: @opentelemetry/api (under the search engine client) has an
// ES-module build under that condition whose imports name no file extension, which Node refuses.
const conditions = ['portico-source', 'node', 'development|production'];

export default defineProject({
  ...sourceResolution,
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['node'] } },
  test: { name: 'audit-handler-elasticsearch', include: ['src/**/*.test.ts'] },
});
