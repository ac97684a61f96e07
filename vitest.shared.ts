import { defaultServerConditions } from 'vite';
import type { UserConfig } from 'vitest/config';

/**
 * Settings every vitest project shares: workspace packages resolve to their TypeScript sources
 * through the `portico-source` export condition, so tests need no build step.
 */
export const sourceResolution: Pick<UserConfig, 'resolve' | 'ssr'> = {
  resolve: { conditions: ['portico-source', ...defaultServerConditions] },
  ssr: { resolve: { conditions: ['portico-source', ...defaultServerConditions] } },
};
