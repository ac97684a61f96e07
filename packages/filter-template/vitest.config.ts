import { defineProject } from 'vitest/config';

// Standalone on purpose: this folder is copied out of the repository to start a plugin. In the
// Portico workspace the `portico-source` condition points @portico/gateway-core at its TypeScript
// sources; an installed core has no such condition and resolves to its built JavaScript.
const conditions = ['portico-source', 'module', 'node', 'development|production'];

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: { name: 'filter-template', include: ['src/**/*.test.ts'] },
});
