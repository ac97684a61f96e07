import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { pack, repositoryRoot } from './packing.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The core packed as npm would publish it, once per run, for every spec that installs it. */
    coreTarball: string;
  }
}

/**
 * vitest global setup of the packing specs (after support/build.ts): packs @portico/gateway-core once
 * into a temporary folder; the specs take its path with `inject('coreTarball')`. Global setups run
 * before any test file, so the manifest packing rewrites for a moment is read by no test meanwhile.
 */
export default async function packCore(project: TestProject): Promise<() => void> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'portico-core-tarball-'));
  project.provide('coreTarball', await pack(path.join(repositoryRoot, 'packages/gateway-core'), folder));
  return () => rmSync(folder, { recursive: true, force: true });
}
