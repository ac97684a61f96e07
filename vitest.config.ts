import { defineConfig } from 'vitest/config';

// One run over every workspace: each package, app and the e2e suite is a vitest project with its
// own vitest.config.ts (they share vitest.shared.ts).
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'test-e2e'],
  },
});
