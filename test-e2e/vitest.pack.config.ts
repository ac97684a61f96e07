import { defineProject } from 'vitest/config';
import { sourceResolution } from '../vitest.shared.ts';

/**
 * Specs that run `npm pack` in the workspace's package folders. Packing rewrites each package.json
 * for a moment (prepack/postpack drop the `portico-source` condition), so anything reading the
 * manifests meanwhile (a gateway started from sources, the API report) would see the published
 * ones. They are a project of their own with its own `sequence.groupOrder`: vitest runs each group
 * of files after the previous one has finished, so no other test file runs alongside them.
 */
export const PACKING_SPECS = [
  'specs/create-plugin.test.ts',
  'specs/installed-gateway.test.ts',
  'specs/publint.test.ts',
  'specs/third-party-plugin.test.ts',
];

export default defineProject({
  ...sourceResolution,
  test: {
    name: 'e2e-pack',
    include: PACKING_SPECS,
    sequence: { groupOrder: 1 },
    // One at a time among themselves too: two packs of one folder would share its manifest.
    fileParallelism: false,
    testTimeout: 60_000,
    // The tarballs hold dist/ (turbo replays the build when the e2e project has just made it); the
    // core is then packed once for every spec that installs it (support/pack-core.ts).
    globalSetup: ['support/build.ts', 'support/pack-core.ts'],
  },
});
