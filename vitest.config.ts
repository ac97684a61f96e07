import { defineConfig } from 'vitest/config';

// One run over every workspace: each package, app and the e2e suite is a vitest project with its
// own vitest.config.ts (they share vitest.shared.ts). The e2e specs that pack the workspace's packages
// are a project of their own, never run alongside other files (test-e2e/vitest.pack.config.ts).
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'bench', 'test-e2e', 'test-e2e/vitest.pack.config.ts'],
  },
});
